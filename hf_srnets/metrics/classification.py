"""Accuracy and class-weighted F1, computed locally (no metric downloads)."""

from __future__ import annotations

import numpy as np


def accuracy(predictions: np.ndarray, labels: np.ndarray) -> float:
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    if predictions.shape != labels.shape:
        raise ValueError(f"predictions {predictions.shape} and labels {labels.shape} differ in shape")
    return float((predictions == labels).mean()) if labels.size else float("nan")


def f1_weighted(predictions: np.ndarray, labels: np.ndarray) -> float:
    """Σ_c (n_c / n)·F1_c over the classes c present in `labels` (Win-win appendix B.1 for QQP and PAWS)."""
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    if not labels.size:
        return float("nan")
    total = 0.0
    for c in np.unique(labels):
        tp = np.sum((predictions == c) & (labels == c))
        fp = np.sum((predictions == c) & (labels != c))
        fn = np.sum((predictions != c) & (labels == c))
        f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
        total += f1 * np.sum(labels == c)
    return float(total / labels.size)


METRICS = {"accuracy": accuracy, "f1": f1_weighted}
