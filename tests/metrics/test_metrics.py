"""Metrics: accuracy and class-weighted F1 (equal to the bit to scikit-learn's and to the loop they replaced), HANS
cells, the relative bias F_bias."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, f1_score

from hf_srnets.metrics import (
    accuracy,
    accuracy_gap,
    collapse_nli_predictions,
    f1_weighted,
    hans_metrics,
    hans_scores,
    relative_bias,
)


def loop_f1_weighted(predictions, labels):
    """The hand-written weighted F1 that `f1_weighted` replaced: Σ_c (n_c / n)·2TP_c / (2TP_c + FP_c + FN_c)."""
    total = 0.0
    for c in np.unique(labels):
        tp = np.sum((predictions == c) & (labels == c))
        fp = np.sum((predictions == c) & (labels != c))
        fn = np.sum((predictions != c) & (labels == c))
        total += (2 * tp / (2 * tp + fp + fn) if tp else 0.0) * np.sum(labels == c)
    return float(total / labels.size)


def real_labels(data_dir):
    paws = pd.read_csv(data_dir / "paws" / "paws_qqp_dev_and_test.tsv", sep="\t")["label"].to_numpy()
    hans = pd.read_csv(data_dir / "hans" / "heuristics_evaluation_set.tsv", sep="\t")["gold_label"]
    return {"paws_qqp": paws, "hans": (hans != "entailment").astype(int).to_numpy()}


@pytest.mark.parametrize("num_classes", [2, 3])
def test_metrics_equal_sklearns_and_the_formulas_on_real_labels_and_a_random_classifier(data_dir, num_classes):
    rng = np.random.default_rng(num_classes)
    rest = [0.1 / (num_classes - 1)] * (num_classes - 1)
    distributions = [
        [1 / num_classes] * num_classes,  # uniform
        [0.9, *rest],  # mostly class 0
        [0.0] + [1 / (num_classes - 1)] * (num_classes - 1),  # class 0 never predicted
        [1.0] + [0.0] * (num_classes - 1),  # one class only
    ]
    for name, labels in real_labels(data_dir).items():
        assert len(labels) > 600 and set(np.unique(labels)) == {0, 1}, name
        for p in distributions:
            for _ in range(3):
                predictions = rng.choice(num_classes, size=len(labels), p=p)
                assert accuracy(predictions, labels) == float((predictions == labels).mean())
                assert accuracy(predictions, labels) == accuracy_score(labels, predictions)
                f1 = f1_weighted(predictions, labels)
                assert f1 == loop_f1_weighted(predictions, labels)  # bit for bit
                assert f1 == f1_score(labels, predictions, average="weighted", zero_division=0.0)


def test_weighted_f1_equals_sklearns_on_labels_a_model_never_sees_and_classes_it_never_predicts():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n, num_classes = int(rng.integers(1, 60)), int(rng.integers(2, 6))
        labels, predictions = rng.integers(0, num_classes, n), rng.integers(0, num_classes + 1, n)
        want = f1_score(labels, predictions, average="weighted", zero_division=0.0)
        assert f1_weighted(predictions, labels) == want, (labels, predictions)


def test_empty_input_is_nan_and_shapes_must_match():
    empty = np.array([], dtype=int)
    assert np.isnan(accuracy(empty, empty)) and np.isnan(f1_weighted(empty, empty))
    with pytest.raises(ValueError, match="shape"):
        accuracy(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="shape"):
        f1_weighted(np.zeros(3), np.zeros(4))


def test_weighted_f1_counts_an_unpredicted_gold_class_as_zero():
    labels = np.array([0, 0, 0, 1])
    predictions = np.array([0, 0, 0, 0])  # class 1 never predicted: F1_1 = 0
    assert f1_weighted(predictions, labels) == pytest.approx(0.75 * (2 * 3 / (2 * 3 + 1)))


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
    assert "subsequence_entailment_accuracy" not in out  # a cell without examples is left out
    assert hans_scores(preds3, labels, heuristics, label_names=names) == out
    assert hans_scores(collapse_nli_predictions(preds3, names), labels, heuristics) == out
    with pytest.raises(ValueError, match="entailment"):
        collapse_nli_predictions(preds3, ["a", "b", "c"])
    with pytest.raises(ValueError, match="label_names"):
        hans_scores(preds3, labels)  # 3-way ids without the model's labels


def test_hans_label_without_examples_is_nan():
    out = hans_metrics(np.array([0, 1]), np.array([0, 0]), None)
    assert out["entailment_accuracy"] == 0.5 and np.isnan(out["non-entailment_accuracy"])


# Du et al. (EACL 2023), Table 1: IMP of BERT-base. (DEV, OOD) per task; FEVER's OOD is Sym1 and Sym2 together
# (two sets of nearly equal size: their mean), the printed F_bias to three decimals.
BASE = {"mnli": (84.2, 59.8), "fever": (86.2, (58.9 + 64.5) / 2)}
TABLE_1 = [
    ("mnli", 84.4, 55.5, 1.182),
    ("mnli", 84.0, 54.7, 1.204),
    ("mnli", 83.4, 52.8, 1.266),
    ("mnli", 81.8, 52.2, 1.249),
    ("fever", 86.5, (57.0 + 64.6) / 2, 1.045),
    ("fever", 86.4, (57.2 + 64.0) / 2, 1.051),
    ("fever", 86.3, (56.9 + 63.3) / 2, 1.068),
    ("fever", 85.9, (56.6 + 63.3) / 2, 1.063),
]


@pytest.mark.parametrize(("task", "dev", "ood", "printed"), TABLE_1)
def test_relative_bias_reproduces_table_1(task, dev, ood, printed):
    assert round(relative_bias(dev, ood, *BASE[task]), 3) == printed


def test_relative_bias_definition_and_errors():
    assert accuracy_gap(80.0, 60.0) == pytest.approx(0.25)
    assert relative_bias(80.0, 60.0, 80.0, 60.0) == pytest.approx(1.0)  # as biased as the base
    assert relative_bias(80.0, 70.0, 80.0, 60.0) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="F_dev"):
        accuracy_gap(0.0, 0.5)
    with pytest.raises(ValueError, match="Δ_base"):
        relative_bias(80.0, 60.0, 80.0, 80.0)
