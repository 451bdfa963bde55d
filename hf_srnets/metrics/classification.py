"""Accuracy and class-weighted F1 with scikit-learn (`sklearn.metrics`), NaN on empty input; `softmax`, the class
probabilities of logits."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import accuracy_score, f1_score


def _arrays(predictions: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    if predictions.shape != labels.shape:
        raise ValueError(f"predictions {predictions.shape} and labels {labels.shape} differ in shape")
    return predictions, labels


def accuracy(predictions: np.ndarray, labels: np.ndarray) -> float:
    """(1/n) Σ_i [ŷ_i = y_i] (`sklearn.metrics.accuracy_score`); NaN when there are no examples."""
    predictions, labels = _arrays(predictions, labels)
    return float(accuracy_score(labels, predictions)) if labels.size else float("nan")


def f1_weighted(predictions: np.ndarray, labels: np.ndarray) -> float:
    """Σ_c (n_c / n)·F1_c over the gold classes c (Win-win appendix B.1 for QQP and PAWS), with
    F1_c = 2·TP_c / (2·TP_c + FP_c + FN_c) and F1_c = 0 for a class never predicted correctly
    (`sklearn.metrics.f1_score(average="weighted", zero_division=0)`); NaN when there are no examples."""
    predictions, labels = _arrays(predictions, labels)
    if not labels.size:
        return float("nan")
    return float(f1_score(labels, predictions, average="weighted", zero_division=0.0))


METRICS = {"accuracy": accuracy, "f1": f1_weighted}


def softmax(logits: np.ndarray) -> np.ndarray:
    """softmax(z)_c = exp(z_c − max z) / Σ_k exp(z_k − max z), over the last axis."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=-1, keepdims=True)
