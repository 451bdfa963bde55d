"""Accuracy and class-weighted F1 in numpy, with scikit-learn's arithmetic (`sklearn.metrics`, the tests' reference; not
imported here: it adds about 1.5 s to every process's start), NaN on empty input; `softmax`, the class probabilities of
logits."""

from __future__ import annotations

import numpy as np


def _arrays(predictions: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    if predictions.shape != labels.shape:
        raise ValueError(f"predictions {predictions.shape} and labels {labels.shape} differ in shape")
    return predictions, labels


def accuracy(predictions: np.ndarray, labels: np.ndarray) -> float:
    """(1/n) Σ_i [ŷ_i = y_i] (`sklearn.metrics.accuracy_score`); NaN when there are no examples."""
    predictions, labels = _arrays(predictions, labels)
    return float(np.mean(predictions == labels)) if labels.size else float("nan")


def f1_weighted(predictions: np.ndarray, labels: np.ndarray) -> float:
    """Σ_c (n_c / n)·F1_c over the gold classes c (Win-win appendix B.1 for QQP and PAWS), with
    F1_c = 2·TP_c / (2·TP_c + FP_c + FN_c) and F1_c = 0 for a class never predicted correctly
    (`sklearn.metrics.f1_score(average="weighted", zero_division=0)`, equal to the bit: F1_c = 2·TP_c / (n_c + p_c) in
    float64 over the classes gold or predicted, averaged with weights n_c); NaN when there are no examples."""
    predictions, labels = _arrays(predictions, labels)
    if not labels.size:
        return float("nan")
    classes = np.union1d(labels, predictions)
    gold = labels[:, None] == classes
    true_sum, pred_sum = gold.sum(axis=0), (predictions[:, None] == classes).sum(axis=0)
    tp_sum = (gold & (predictions == labels)[:, None]).sum(axis=0)
    denominator = true_sum.astype(np.float64) + pred_sum
    f1 = np.divide(2.0 * tp_sum, denominator, out=np.zeros(len(classes)), where=denominator > 0)
    return float(np.average(f1, weights=true_sum))


METRICS = {"accuracy": accuracy, "f1": f1_weighted}


def softmax(logits: np.ndarray) -> np.ndarray:
    """softmax(z)_c = exp(z_c − max z) / Σ_k exp(z_k − max z), over the last axis."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=-1, keepdims=True)
