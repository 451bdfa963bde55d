"""Evaluation metrics computed locally: accuracy, weighted F1, HANS cells."""

from .classification import METRICS, accuracy, f1_weighted
from .hans import HANS_HEURISTICS, HANS_LABELS, collapse_nli_predictions, hans_metrics

__all__ = [
    "HANS_HEURISTICS",
    "HANS_LABELS",
    "METRICS",
    "accuracy",
    "collapse_nli_predictions",
    "f1_weighted",
    "hans_metrics",
]
