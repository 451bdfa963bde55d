"""Evaluation metrics computed locally: accuracy and weighted F1 (scikit-learn's arithmetic), softmax, HANS cells,
relative bias F_bias, the sparsity report of binary masks; HANS and F_bias also as `evaluate` modules loadable by path
(`HANS_METRIC_PATH`, `RELATIVE_BIAS_METRIC_PATH`)."""

from .classification import METRICS, accuracy, f1_weighted, softmax
from .evaluate_modules import HANS_METRIC_PATH, RELATIVE_BIAS_METRIC_PATH
from .hans import HANS_HEURISTICS, HANS_LABELS, collapse_nli_predictions, hans_metrics, hans_scores
from .relative_bias import accuracy_gap, relative_bias
from .sparsity import sparsity_report

__all__ = [
    "HANS_HEURISTICS",
    "HANS_LABELS",
    "HANS_METRIC_PATH",
    "METRICS",
    "RELATIVE_BIAS_METRIC_PATH",
    "accuracy",
    "accuracy_gap",
    "collapse_nli_predictions",
    "f1_weighted",
    "hans_metrics",
    "hans_scores",
    "relative_bias",
    "softmax",
    "sparsity_report",
]
