"""Word slots and the transformations (TextBugger's five bugs, embedding and masked-LM swaps)."""

from __future__ import annotations

import pytest
from attack.test_search_helpers import toy_embedding

from hf_srnets.attack.attacked_text import WORD_PATTERN, AttackedText
from hf_srnets.attack.transformations import (
    HOMOGLYPHS,
    CharacterDelete,
    CharacterInsertSpace,
    CompositeTransformation,
    HomoglyphSwap,
    NeighbourCharacterSwap,
    WordSwapEmbedding,
    recover_case,
)


def one(word: str) -> AttackedText:
    return AttackedText.from_text((word,))


def test_attacked_text_keeps_separators_and_slots():
    text = AttackedText.from_text(("It's a well-made, GOOD film!",))
    assert text.words == ("It's", "a", "well-made", "GOOD", "film")
    assert text.text == "It's a well-made, GOOD film!"
    swapped = text.replace(3, "ba d")
    assert swapped.text == "It's a well-made, ba d film!" and swapped.modified == {3}
    assert swapped.num_words == 5
    assert text.delete(1).text == "It's well-made, GOOD film!"
    assert text.window(4, 3) == "well-made, GOOD film"  # TextAttack's window is a slice of the text
    assert text.window(0, 3) == "It's a well-made"
    assert [text.text[s:e] for s, e in text.word_offsets()] == list(text.words)


def test_attacked_text_rejects_a_bare_string():
    with pytest.raises(ValueError, match="tuple"):
        AttackedText.from_text("a sentence")


@pytest.mark.parametrize("seed", range(5))
def test_textbugger_character_bugs_keep_first_and_last_character(seed):
    word = "terrible"
    (inserted,) = CharacterInsertSpace(seed)(one(word), 0)
    assert inserted.replace(" ", "") == word and inserted.count(" ") == 1
    assert inserted[0] == "t" and inserted[-1] == "e" and inserted.index(" ") >= 1
    (deleted,) = CharacterDelete(seed)(one(word), 0)
    assert len(deleted) == len(word) - 1 and deleted[0] == "t" and deleted[-1] == "e"
    (swapped,) = NeighbourCharacterSwap(seed)(one(word), 0)
    assert sorted(swapped) == sorted(word) and swapped != word
    assert swapped[0] == "t" and swapped[-1] == "e"
    assert sum(a != b for a, b in zip(swapped, word)) == 2


def test_character_bugs_depend_on_the_word_not_on_earlier_calls():
    """A resumed attack equals a full one: the edit of a word does not depend on the words edited before."""
    fresh = CharacterDelete(3)(one("terrible"), 0)
    used = CharacterDelete(3)
    for word in ("movie", "wonderful", "awful"):
        used(one(word), 0)
    assert used(one("terrible"), 0) == fresh


def test_character_bugs_skip_short_words():
    assert CharacterInsertSpace()(one("ok"), 0) == []
    assert CharacterDelete()(one("ok"), 0) == []
    assert NeighbourCharacterSwap()(one("bad"), 0) == []


def test_homoglyph_swap_one_candidate_per_lookalike_position():
    candidates = HomoglyphSwap()(one("cool"), 0)
    assert candidates == [
        HOMOGLYPHS["c"] + "ool",
        "c" + HOMOGLYPHS["o"] + "ol",
        "co" + HOMOGLYPHS["o"] + "l",
        "coo" + HOMOGLYPHS["l"],
    ]


def test_embedding_swap_neighbours_min_cos_and_case():
    swap = WordSwapEmbedding(toy_embedding(), max_candidates=3)
    assert swap(one("Good"), 0)[:2] == ["Fine", "Bad"]
    assert WordSwapEmbedding(toy_embedding(), 5, min_cos=0.9)(one("good"), 0) == ["fine"]
    assert WordSwapEmbedding(toy_embedding(), 5)(one("unknownword"), 0) == []
    assert recover_case("bad", "GOOD") == "BAD" and recover_case("bad", "Good") == "Bad"


@pytest.mark.parametrize(
    ("candidate", "original", "expected"),
    [
        ("my", "I", "my"),  # MNLI #6 of the side-by-side run: TextAttack leaves a one-letter capital's swap alone
        ("Paris", "city", "paris"),  # lower-case original: lowered
        ("bad", "GOOD", "BAD"),
        ("bAD", "Good", "Bad"),  # Title: capitalize() lowers the rest
        ("bad", "McGood", "bad"),  # mixed case: unchanged
        ("Bad", "1990", "Bad"),  # no letters: unchanged
    ],
)
def test_recover_case_follows_textattack_recover_word_case(candidate, original, expected):
    # expected: TextAttack 0.3.11 `textattack.shared.utils.strings.recover_word_case` applied by hand
    assert recover_case(candidate, original) == expected


def test_textbugger_composite_gives_the_five_kinds():
    composite = CompositeTransformation(
        [
            CharacterInsertSpace(),
            CharacterDelete(),
            NeighbourCharacterSwap(),
            HomoglyphSwap(),
            WordSwapEmbedding(toy_embedding(), 5),
        ]
    )
    candidates = composite(one("good"), 0)
    assert any(" " in c for c in candidates)  # insert
    assert any(len(c) == 3 for c in candidates)  # delete
    assert "good" not in candidates and len(candidates) == len(set(candidates))
    assert any(set(c) & set(HOMOGLYPHS.values()) for c in candidates)  # sub-C
    assert {"fine", "bad"} <= set(candidates)  # sub-W


def test_masked_lm_candidates_are_whole_words():
    import torch
    from attack.test_search_helpers import mlm_tokenizer
    from transformers import BertConfig, BertForMaskedLM

    from hf_srnets.attack.transformations import WordSwapMaskedLM

    tokenizer = mlm_tokenizer()
    torch.manual_seed(0)
    model = BertForMaskedLM(
        BertConfig(
            hidden_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=64,
            vocab_size=tokenizer.vocab_size,
        )
    )
    swap = WordSwapMaskedLM(model, tokenizer, max_candidates=10)
    text = AttackedText.from_text(("the good movies",))
    candidates = swap(text, 1)
    assert candidates and text.words[1] not in candidates
    assert all("##" not in c and len(WORD_PATTERN.findall(c)) == 1 for c in candidates)
    assert len(swap._cache) == 1
