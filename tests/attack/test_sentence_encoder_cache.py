"""The sentence encoder's cache: each sentence encoded once while it is kept, and no more than `max_cached` kept."""

from __future__ import annotations

import numpy as np

from hf_srnets.attack.sentence_encoder import CachedEncoder


class CountingEncoder(CachedEncoder):
    """Row i of a sentence is its length and i; records every sentence it encodes."""

    def __init__(self, max_cached: int) -> None:
        self.batch_size, self.path, self._cache, self.max_cached = 2, "counting", {}, max_cached
        self.encoded: list[str] = []

    def _encode_batch(self, sentences: list[str]) -> np.ndarray:
        self.encoded += sentences
        return np.array([[len(s), i] for i, s in enumerate(sentences)], dtype=np.float32)


def test_the_cache_keeps_the_sentences_used_last_and_encodes_each_kept_one_once():
    encoder = CountingEncoder(max_cached=3)
    first = encoder.encode(["a", "bb", "a", "ccc"])
    assert first[:, 0].tolist() == [1, 2, 1, 3] and encoder.encoded == ["a", "bb", "ccc"]
    encoder.encode(["a", "dddd"])  # "a" used again: "bb" is the least recently used and goes
    assert list(encoder._cache) == ["ccc", "a", "dddd"]
    again = encoder.encode(["bb", "a"])  # "bb" encoded again, "a" still cached
    assert encoder.encoded == ["a", "bb", "ccc", "dddd", "bb"] and again[:, 0].tolist() == [2, 1]
    assert len(encoder._cache) == 3


def test_one_call_with_more_sentences_than_the_cache_holds_still_returns_them_all():
    encoder = CountingEncoder(max_cached=2)
    rows = encoder.encode(["a", "bb", "ccc", "dddd", "a"])
    assert rows[:, 0].tolist() == [1, 2, 3, 4, 1] and encoder.encoded == ["a", "bb", "ccc", "dddd"]
    assert list(encoder._cache) == ["ccc", "dddd"]
