"""The recipes (TextFooler, TextBugger, BERT-Attack) built through the registry with small offline resources."""

from __future__ import annotations

import math

import numpy as np
import pytest
from attack.test_search_helpers import ConstantEncoder, LexiconClassifier, mlm_tokenizer, toy_embedding

from hf_srnets.attack import ATTACK_RECIPES, OUTCOMES, AttackResult, build_attack
from hf_srnets.attack.pos import coarse_pos
from hf_srnets.resources.citations import BIBTEX


def textfooler(**kw):
    resources = {"word_vectors": toy_embedding(), "sentence_encoder": ConstantEncoder(), "pos_tagger": coarse_pos}
    return build_attack("textfooler", **{**resources, **kw})


def test_registry_names_and_citations():
    assert {"textfooler", "textbugger", "bert-attack"} <= set(ATTACK_RECIPES)
    for name in ("textfooler", "textbugger", "bert-attack"):  # other tests register toy recipes without one
        assert ATTACK_RECIPES[name].citation in BIBTEX


def test_unknown_recipe_and_option_are_rejected():
    with pytest.raises(ValueError, match="unknown attack recipe"):
        build_attack("pwws")
    with pytest.raises(ValueError, match="unknown options"):
        textfooler(max_candidate=3)


def test_textfooler_fools_a_classifier_that_flips_on_a_neighbour():
    result = textfooler().attack(("a good movie",), 1, LexiconClassifier())
    assert result.outcome == "successful" and result.perturbed == ("a bad movie",)
    assert result.words_changed == 1


def test_textfooler_min_cos_limits_candidates():
    # "bad" has cos 0.8 with "good": with min_cos 0.9 only "fine" is left, which does not flip the prediction
    result = textfooler(min_cos=0.9).attack(("a good movie",), 1, LexiconClassifier())
    assert result.outcome == "failed"


def test_textfooler_part_of_speech_constraint_rejects_other_tags():
    def tagger(words):
        return ["NOUN" if w == "bad" else "ADJ" if w in ("good", "fine") else "DET" for w in words]

    result = textfooler(pos_tagger=tagger).attack(("a good movie",), 1, LexiconClassifier())
    assert result.outcome == "failed" and "bad" not in result.perturbed[0]


def test_textfooler_similarity_uses_15_word_windows_and_skips_short_texts():
    encoder = ConstantEncoder()
    textfooler(sentence_encoder=encoder).attack(("a good movie",), 1, LexiconClassifier())
    assert encoder.seen == []  # fewer than 15 words: constraint skipped (similarity 1)
    long = " ".join(["the movie"] * 10 + ["was good"] + ["and the plot"] * 4)
    textfooler(sentence_encoder=encoder).attack((long,), 1, LexiconClassifier())
    assert encoder.seen and all(len(s.split()) == 15 for s in encoder.seen)


def test_textfooler_similarity_threshold_blocks_swaps():
    class Orthogonal(ConstantEncoder):
        def encode(self, sentences):
            return np.eye(len(sentences), 64)[: len(sentences)]

    long = " ".join(["the movie"] * 10 + ["was good"] + ["and the plot"] * 4)
    result = textfooler(sentence_encoder=Orthogonal()).attack((long,), 1, LexiconClassifier())
    assert result.outcome == "failed" and result.words_changed == 0


def test_textfooler_only_perturbs_the_hypothesis_of_a_pair():
    result = textfooler().attack(("good good", "a good movie"), 1, LexiconClassifier())
    assert result.perturbed == ("good good", "a bad movie")


def test_textbugger_runs_with_character_and_word_bugs():
    attack = build_attack("textbugger", word_vectors=toy_embedding(), sentence_encoder=ConstantEncoder())
    clf = LexiconClassifier(weights={"good": 3.0})  # any bug that breaks "good" flips it
    result = attack.attack(("a good movie",), 1, clf)
    assert result.outcome == "successful" and result.words_changed == 1
    assert "good" not in result.perturbed[0].split()
    assert len(clf.calls) == 3  # original, ranking, one batch of good's candidates


def test_bert_attack_runs_with_a_tiny_random_masked_lm(tmp_path):
    import torch
    from transformers import BertConfig, BertForMaskedLM

    tokenizer = mlm_tokenizer()
    torch.manual_seed(0)
    config = BertConfig(
        hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64, vocab_size=len(tokenizer)
    )
    BertForMaskedLM(config).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    attack = build_attack("bert-attack", mlm_model=str(tmp_path), sentence_encoder=ConstantEncoder())
    text = ("the movie was good a fine plot",)
    clf = LexiconClassifier(bias=30.0)  # never flips: the search tries every modifiable word
    result = attack.attack(text, 1, clf)
    assert result.outcome == "failed"
    assert result.words_changed == math.ceil(0.4 * result.num_words) == 3  # 4 would improve the score
    assert clf.calls[1][0] == ("the [UNK] was good a fine plot",)  # WIR by [UNK]


def test_bert_attack_needs_a_masked_lm():
    with pytest.raises(ValueError, match="mlm_model"):
        build_attack("bert-attack", sentence_encoder=ConstantEncoder())


def test_attack_result_round_trip_and_validation():
    result = AttackResult(("p", "h"), ("p", "h2"), 1, 1, 0, "successful", 12, 1, 4)
    again = AttackResult.from_dict(result.to_dict())
    assert again == result and again.perturbed_ratio == 0.25
    assert set(OUTCOMES) == {"skipped", "successful", "failed"}
    with pytest.raises(ValueError, match="outcome"):
        AttackResult(("p",), None, 1, 0, None, "maximized", 1, 0, 1)


def test_resources_a_recipe_does_not_use_are_ignored_with_a_warning(caplog):
    with caplog.at_level("WARNING", logger="hf_srnets.attack.recipes"):
        textfooler(mlm_model="/nowhere")
    assert "does not use mlm_model" in caplog.text


def test_a_sentence_encoder_given_as_a_path_is_loaded_from_it(minilm):
    from pathlib import Path

    from hf_srnets.attack import recipes
    from hf_srnets.attack.sentence_encoder import SentenceEncoder

    recipes._default_encoder.cache_clear()
    for given in (minilm, Path(minilm)):  # `--sentence_encoder PATH` arrives as a str (which has an `encode` too)
        encoder = recipes.sentence_encoder(given)
        assert isinstance(encoder, SentenceEncoder) and encoder.path == minilm
        assert recipes.describe_resource("sentence_encoder", encoder) == minilm
    given = SentenceEncoder(minilm)
    assert recipes.sentence_encoder(given) is given
