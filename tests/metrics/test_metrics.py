"""Metrics computed locally: accuracy, class-weighted F1 (checked against scikit-learn), HANS cells."""

import numpy as np
import pytest
from sklearn.metrics import f1_score

from hf_srnets.metrics import accuracy, collapse_nli_predictions, f1_weighted, hans_metrics


def test_accuracy_and_weighted_f1():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 200)
    preds = np.where(rng.random(200) < 0.7, labels, 1 - labels)
    assert accuracy(preds, labels) == pytest.approx((preds == labels).mean())
    assert f1_weighted(preds, labels) == pytest.approx(f1_score(labels, preds, average="weighted"))
    assert f1_weighted(np.zeros(200, dtype=int), labels) == pytest.approx(
        f1_score(labels, np.zeros(200, dtype=int), average="weighted", zero_division=0)
    )


def test_hans_collapse_and_cells():
    names = ["entailment", "neutral", "contradiction"]
    preds3 = np.array([0, 1, 2, 0, 0, 2])
    assert collapse_nli_predictions(preds3, names).tolist() == [0, 1, 1, 0, 0, 1]
    labels = np.array([0, 1, 1, 1, 0, 0])
    heuristics = ["lexical_overlap", "lexical_overlap", "subsequence", "subsequence", "constituent", "constituent"]
    out = hans_metrics(collapse_nli_predictions(preds3, names), labels, heuristics)
    assert out["accuracy"] == pytest.approx(4 / 6)
    assert out["lexical_overlap_entailment_accuracy"] == 1.0
    assert out["lexical_overlap_non-entailment_accuracy"] == 1.0
    assert out["subsequence_non-entailment_accuracy"] == 0.5
    assert out["constituent_entailment_accuracy"] == 0.5
    assert out["non-entailment_accuracy"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="entailment"):
        collapse_nli_predictions(preds3, ["a", "b", "c"])
