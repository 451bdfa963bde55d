"""Behaviour checked against TextAttack 0.3.x's definitions, with every expected value worked out by hand from
them (`AttackedText.text_window_around_index`, `SentenceEncoder._check_constraint_many`, `MaxWordsPerturbed`,
`StopwordModification`, `WordSwapHomoglyphSwap`, `WordSwapMaskedLM(method="bert-attack")`)."""

from __future__ import annotations

import string

import pytest
from attack.test_search_helpers import ConstantEncoder, LexiconClassifier, mlm_tokenizer, toy_embedding

from hf_srnets.attack import build_attack
from hf_srnets.attack.attacked_text import AttackedText
from hf_srnets.attack.constraints import MaxWordsPerturbed, PartOfSpeech, SentenceSimilarity, modifiable_indices
from hf_srnets.attack.pos import coarse_pos
from hf_srnets.attack.resources import NLTK_STOPWORDS, TEXTFOOLER_STOPWORDS
from hf_srnets.attack.transformations import HOMOGLYPHS, HomoglyphSwap, WordSwapMaskedLM

PAIR = ("The cat sat on the mat near the door today.", "A dog ran away.")  # 10 + 4 words


def test_pair_words_are_counted_and_indexed_over_both_texts():
    text = AttackedText.from_text(PAIR)
    assert text.num_words == 14 and text.word_count() == 14
    assert text.words[10] == "A" and text.column_of(10) == 1 and text.column_starts == (0, 10)
    assert text.text == PAIR[0] + "\n" + PAIR[1]
    assert text.replace(11, "cat").texts == (PAIR[0], "A cat ran away.")


def test_window_spans_premise_and_hypothesis_with_their_punctuation():
    text = AttackedText.from_text(PAIR)
    # word 11 ("dog"), 5 words: half 2; 11 + 2 >= 14 is false and 11 - 2 >= 0 -> words 9..13
    assert text.window(11, 5) == "today.\nA dog ran away"
    # word 13 (last), 15 words > 14: start max(0, 14 - 15) = 0, end 13 -> the whole joined text without the final "."
    assert text.window(13, 15) == PAIR[0] + "\nA dog ran away"
    single = AttackedText.from_text(("It's a well-made, GOOD film!",))
    assert single.window(4, 3) == "well-made, GOOD film"  # a slice of the text: the comma stays


class Recording(ConstantEncoder):
    """Every text identical; records what was encoded."""


def test_short_text_skip_counts_the_words_of_both_texts():
    """TextFooler's skip: `len(transformed_text.words) < window_size` over the joined words. The pair has
    10 + 4 = 14 words: skipped (< 15); with 5 more premise words (19) it is scored on a window."""
    encoder = Recording()
    constraint = SentenceSimilarity(encoder, 0.84, window_size=15, skip_text_shorter_than_window=True)
    short = AttackedText.from_text(PAIR)
    constraint.check([short.replace(11, "cat")], short, short, 11)
    assert encoder.seen == []
    longer = AttackedText.from_text(("one two three four five " + PAIR[0], PAIR[1]))
    assert longer.num_words == 19
    constraint.check([longer.replace(16, "cat")], longer, longer, 16)
    assert len(encoder.seen) == 2  # reference window and candidate window
    # word 16, 15 words: 16 + 7 >= 19 -> words 4..18, from "five" to "away"
    assert encoder.seen[0].startswith("five The cat") and encoder.seen[0].endswith("A dog ran away")


def test_hypothesis_alone_would_be_skipped_but_the_pair_is_not():
    """A 4-word hypothesis under a 12-word premise: 16 words, so TextAttack scores it (the old rule looked at the
    hypothesis only and skipped it)."""
    encoder = Recording()
    constraint = SentenceSimilarity(encoder, 0.84, window_size=15, skip_text_shorter_than_window=True)
    text = AttackedText.from_text(("a b c d e f g h i j k l", "A dog ran away."))
    constraint.check([text.replace(13, "cat")], text, text, 13)
    assert len(encoder.seen) == 2


def test_max_words_perturbed_limit_is_over_the_pair():
    """BERT-Attack's 40 %: ceil(0.4 * min(14, 14)) = 6 words over premise and hypothesis (ceil(0.4 * 4) = 2 over
    the hypothesis alone)."""
    text = AttackedText.from_text(PAIR)
    three = text.replace(10, "One").replace(11, "cat").replace(12, "sat")
    seven = three.replace(0, "x").replace(1, "y").replace(2, "z").replace(3, "w")
    keep = MaxWordsPerturbed(0.4).check([three, seven], three, text, 12)
    assert keep.tolist() == [True, False]


def test_stopwords_are_nltk_for_textbugger_textfooler_list_for_textfooler_and_case_sensitive():
    assert len(NLTK_STOPWORDS) == 179 and len(TEXTFOOLER_STOPWORDS) == 266
    # the count of differences between the two lists: 22 only in NLTK's, 109 only in TextFooler's
    assert len(NLTK_STOPWORDS - TEXTFOOLER_STOPWORDS) == 22 and len(TEXTFOOLER_STOPWORDS - NLTK_STOPWORDS) == 109
    text = AttackedText.from_text(("The film is not everything",))
    # NLTK: "the", "is", "not" listed, "The" (capital) and "everything" not
    assert modifiable_indices(text, NLTK_STOPWORDS) == [0, 1, 4]
    # TextFooler's list holds "everything" too
    assert modifiable_indices(text, TEXTFOOLER_STOPWORDS) == [0, 1]
    resources = {"word_vectors": toy_embedding(), "sentence_encoder": ConstantEncoder()}
    assert build_attack("textbugger", **resources).stopwords == NLTK_STOPWORDS
    assert build_attack("textfooler", pos_tagger=coarse_pos, **resources).stopwords == TEXTFOOLER_STOPWORDS
    assert build_attack("robust-ticket-bae", pos_tagger=coarse_pos, **resources).stopwords == NLTK_STOPWORDS


def test_textbugger_may_perturb_the_premise_textfooler_may_not():
    resources = {"word_vectors": toy_embedding(), "sentence_encoder": ConstantEncoder()}
    pair = AttackedText.from_text(("a good movie", "a fine plot"))
    bugger = build_attack("textbugger", **resources).search.rank
    fooler = build_attack("textfooler", pos_tagger=coarse_pos, **resources).search.rank
    from hf_srnets.attack.search import UntargetedGoal

    ranked_bugger = bugger(UntargetedGoal(LexiconClassifier(), 1), pair)
    ranked_fooler = fooler(UntargetedGoal(LexiconClassifier(), 1), pair)
    assert sorted(ranked_bugger) == [1, 2, 4, 5]  # "a" is a stopword in both lists
    assert sorted(ranked_fooler) == [4, 5]


def test_homoglyph_map_is_textattacks_38_entries():
    assert set(HOMOGLYPHS) == set(string.ascii_lowercase) | set(string.digits) | {"-", "'"}
    assert len(HOMOGLYPHS) == 38
    swap = HomoglyphSwap()
    # one candidate per position with a look-alike, in position order: a -> U+0251, 1 -> "l"; "Z" has none
    assert swap(AttackedText.from_text(("a1Z",)), 0) == ["\u02511Z", "alZ"]


class FixedMLM:
    """A masked LM whose logits are given per position (tokens of `mlm_tokenizer`)."""

    def __init__(self, tokenizer, preferences: dict[int, list[str]]) -> None:
        self.tokenizer, self.preferences = tokenizer, preferences

    def eval(self):
        return self

    def __call__(self, input_ids, **_):
        import torch

        logits = torch.zeros(1, input_ids.shape[1], len(self.tokenizer))
        for position, tokens in self.preferences.items():
            for rank, token in enumerate(tokens):
                logits[0, position, self.tokenizer.convert_tokens_to_ids(token)] = 10.0 - rank
        return type("Out", (), {"logits": logits})()


def test_bert_attack_sub_word_candidates_are_the_first_k_products():
    """ "the goods" -> [CLS] the good ##s [SEP]: the word "goods" is 2 pieces at positions 2 and 3. With K = 2,
    the top-2 are (bad, great) at 2 and (##ly, ##s) at 3; the product in order is bad+##ly, bad+##s,
    great+##ly, great+##s; the first K = 2 joined without "##" are "badly", "bads"."""
    tokenizer = mlm_tokenizer()
    assert tokenizer.tokenize("the goods") == ["the", "good", "##s"]
    model = FixedMLM(tokenizer, {2: ["bad", "great"], 3: ["##ly", "##s"]})
    swap = WordSwapMaskedLM(model, tokenizer, max_candidates=2)
    assert swap(AttackedText.from_text(("the goods",)), 1) == ["badly", "bads"]


def test_bert_attack_one_piece_word_keeps_whole_word_tokens_uncased():
    """One piece: the top-K tokens that are one word and not "##" pieces, as the masked LM spells them."""
    tokenizer = mlm_tokenizer()
    model = FixedMLM(tokenizer, {2: ["##ly", "bad", "good"]})
    swap = WordSwapMaskedLM(model, tokenizer, max_candidates=3)
    # "Good" is lower-cased by the tokenizer; "good" differs from "Good", so it is a candidate
    assert swap(AttackedText.from_text(("the Good",)), 1) == ["bad", "good"]


@pytest.mark.parametrize("name", ["textfooler", "textbugger", "robust-ticket-bae"])
def test_recipes_record_the_resources_they_use(name):
    resources = {"word_vectors": toy_embedding(), "sentence_encoder": ConstantEncoder()}
    if name != "textbugger":
        resources["pos_tagger"] = "coarse"
    used = build_attack(name, **resources).resources_used()
    assert used["word_vectors"] == {"source": "custom", "words": 6, "dim": 3}
    assert used["sentence_encoder"] == "custom:ConstantEncoder"
    assert used.get("pos_tagger") == (None if name == "textbugger" else "coarse")
    assert used["stopwords"] == ("textfooler-266" if name == "textfooler" else "nltk-english-179")


def test_robust_ticket_bae_is_the_papers_script():
    """attack_ticket.sh: 50 neighbours, cosine >= 0.2 on a 15-word window vs the original, no short-text skip,
    POS constraint, WIR by deletion."""
    recipe = build_attack(
        "robust-ticket-bae", word_vectors=toy_embedding(), sentence_encoder=ConstantEncoder(), pos_tagger="coarse"
    )
    search = recipe.search
    similarity = search.constraints[-1]
    assert search.transformation.max_candidates == 50 and search.transformation.min_cos is None
    assert (similarity.metric, similarity.threshold, similarity.window_size) == ("cosine", 0.2, 15)
    assert similarity.compare_against_original and not similarity.skip_text_shorter_than_window
    assert search.wir == "delete" and search.frozen_columns == ()
    assert isinstance(search.constraints[0], PartOfSpeech)


def test_short_text_skip_on_the_textfooler_mnli_sample(data_dir):
    """The first 100 pairs of the TextFooler paper's MNLI sample: 17 have fewer than 15 words over premise and
    hypothesis (skipped by TextAttack), 86 counting the hypothesis alone (the old rule): the counts the issue
    measured with TextAttack's word splitter."""
    from hf_srnets.data.attack_samples import read_attack_sample

    rows = read_attack_sample(data_dir / "textfooler_subsets" / "mnli_matched", "mnli").select(range(100))
    pairs = [AttackedText.from_text((r["sentence1"], r["sentence2"])) for r in rows]
    hypotheses = [AttackedText.from_text((r["sentence2"],)) for r in rows]
    constraint = SentenceSimilarity(Recording(), 0.84, window_size=15, skip_text_shorter_than_window=True)
    assert sum(constraint.skipped(p) for p in pairs) == 17
    assert sum(constraint.skipped(h) for h in hypotheses) == 86


@pytest.mark.parametrize(
    ("name", "columns", "frozen"),
    [
        ("textfooler", ("premise", "hypothesis"), (0,)),  # TextAttack's InputColumnModification matches these names
        ("textfooler", ("question1", "question2"), ()),  # QQP's columns: not matched, both texts may change
        ("textfooler", None, (0,)),  # names unknown: the first text of a pair is kept
        ("robust-ticket-bae", ("premise", "hypothesis"), ()),  # the authors' script froze sentence1 / sentence
        ("robust-ticket-bae", ("sentence1", "sentence2"), (0,)),
        ("textbugger", ("premise", "hypothesis"), ()),
    ],
)
def test_frozen_texts_follow_the_text_names(name, columns, frozen):
    resources = {"word_vectors": toy_embedding(), "sentence_encoder": ConstantEncoder(), "text_columns": columns}
    if name != "textbugger":
        resources["pos_tagger"] = "coarse"
    assert build_attack(name, **resources).search.frozen_columns == frozen
