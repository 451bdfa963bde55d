"""Bias features (appendix B.3.1) on hand-made pairs whose values are worked out by hand below."""

import numpy as np
import pytest

from hf_srnets.bias import OVERLAP_FEATURE_NAMES, claim_features, overlap_features, tokenize
from hf_srnets.resources.word_vectors import WordVectors

# cos(dog, cat) = 0.6, cos(dog, sleeps) = 0.8, cos(cat, sleeps) = 0, cos(up, down) = -1.
# "the", "a", "sat", "on", "mat", "chased" have no vector; "zero" has a zero vector (treated as none).
VECTORS = WordVectors.from_dict(
    {
        "cat": [1.0, 0.0, 0.0],
        "dog": [0.6, 0.8, 0.0],
        "sleeps": [0.0, 2.0, 0.0],  # norm 2: cosine ignores length
        "up": [1.0, 0.0, 0.0],
        "down": [-3.0, 0.0, 0.0],
        "zero": [0.0, 0.0, 0.0],
    }
)


def features(premise: str, hypothesis: str) -> dict[str, float]:
    row = overlap_features([premise], [hypothesis], VECTORS)[0]
    return dict(zip(OVERLAP_FEATURE_NAMES, row.tolist(), strict=True))


def expect(all_in, contiguous, fraction, mean_sim, min_sim):
    return dict(zip(OVERLAP_FEATURE_NAMES, [all_in, contiguous, fraction, mean_sim, min_sim], strict=True))


def test_tokenize_lowercases_and_drops_punctuation():
    assert tokenize("Don't stop, Mr. O'Neil!") == ["don", "t", "stop", "mr", "o", "neil"]
    assert tokenize("do n't") == ["do", "n", "t"]  # NLTK-tokenised MNLI
    assert tokenize("snake_case  Café 2024 ... ") == ["snake", "case", "café", "2024"]
    assert tokenize(" ?! ") == []


def test_hypothesis_inside_premise_case_and_punctuation_ignored():
    # h = [the, cat, sat] is a contiguous piece of p = [the, cat, sat, on, the, mat]; "the" and "sat" have no
    # vector but are identical to a premise word, so their similarity is 1.
    assert features("The cat sat on the mat.", "the CAT sat") == expect(1, 1, 1, 1, 1)
    # Punctuation is dropped, so "cat , sat" still contains "cat sat" contiguously.
    assert features("the cat, sat.", "Cat sat!") == expect(1, 1, 1, 1, 1)


def test_all_words_present_but_reordered():
    # h = [the, cat, chased, a, dog], p = [a, dog, chased, the, cat]: every word present, not contiguous.
    assert features("A dog chased the cat", "The cat chased a dog.") == expect(1, 0, 1, 1, 1)


def test_similarity_max_mean_min_by_hand():
    # p = [the, cat, sleeps], h = [a, dog, sleeps]
    # a:      no vector, not in p           -> max sim 0
    # dog:    max(0 (the), 0.6 (cat), 0.8 (sleeps)) = 0.8
    # sleeps: identical word                 -> 1
    # fraction 1/3; mean (0 + 0.8 + 1) / 3 = 0.6; min 0.
    got = features("The cat sleeps.", "A dog sleeps!")
    assert got == pytest.approx(expect(0, 0, 1 / 3, 0.6, 0.0))


def test_repeated_hypothesis_words_count_per_occurrence():
    # h = [cat, cat, dog], p = [cat]: in-premise [1, 1, 0] -> 2/3; sims [1, 1, 0.6] -> mean 2.6/3, min 0.6.
    assert features("cat", "cat cat dog") == pytest.approx(expect(0, 0, 2 / 3, 2.6 / 3, 0.6))


def test_negative_cosine_and_zero_vector():
    # down vs up: cosine -1 (kept, not clipped at 0).
    assert features("up", "down") == pytest.approx(expect(0, 0, 0, -1, -1))
    # "zero" has a zero vector: similarity 0 to other words, 1 to itself.
    assert features("cat", "zero") == pytest.approx(expect(0, 0, 0, 0, 0))
    assert features("zero cat", "zero") == pytest.approx(expect(1, 1, 1, 1, 1))


def test_words_without_vectors_similar_only_to_themselves():
    # h = [qqq, zzz], p = [zzz, cat]: zzz identical -> 1; qqq unknown -> 0.
    assert features("zzz cat", "qqq zzz") == pytest.approx(expect(0, 0, 0.5, 0.5, 0.0))


def test_empty_texts_give_zeros():
    assert features("The cat.", "?!") == expect(0, 0, 0, 0, 0)
    assert features("", "cat") == expect(0, 0, 0, 0, 0)


def test_batch_and_pretokenised_input_agree():
    premises = ["The cat sleeps.", "cat", "A dog chased the cat"]
    hypotheses = ["A dog sleeps!", "cat cat dog", "The cat chased a dog."]
    batch = overlap_features(premises, hypotheses, VECTORS)
    assert batch.shape == (3, 5)
    pretok = overlap_features([tokenize(p) for p in premises], [tokenize(h) for h in hypotheses], VECTORS)
    np.testing.assert_array_equal(batch, pretok)
    for i in range(3):
        np.testing.assert_array_equal(batch[i], overlap_features([premises[i]], [hypotheses[i]], VECTORS)[0])
    with pytest.raises(ValueError, match="2 premises but 1 hypotheses"):
        overlap_features(["a", "b"], ["c"], VECTORS)


def test_claim_features_max_pool_by_hand():
    # Claim words with vectors: cat [1,0,0], up [1,0,0], dog [0.6,0.8,0], down [-3,0,0] -> max [1, 0.8, 0].
    out = claim_features(["Cat up, dog? down unknownword", "nothing known here", ""], VECTORS)
    assert out.shape == (3, 3)
    np.testing.assert_allclose(out[0], [1.0, 0.8, 0.0])
    np.testing.assert_array_equal(out[1], [0, 0, 0])  # no word has a vector
    np.testing.assert_array_equal(out[2], [0, 0, 0])
    np.testing.assert_allclose(claim_features(["down"], VECTORS)[0], [-3.0, 0.0, 0.0])  # raw, not normalised
