"""HANS cells (McCoy et al. 2019; Win-win §4.1): accuracy overall, per gold label and per heuristic × gold label.

HANS is 2-way (entailment / non-entailment); an NLI model's 3-way predictions are collapsed first
(neutral and contradiction count as non-entailment). The evaluator `hf_srnets.evaluation.HansEvaluator` and the
`evaluate` module at `HANS_METRIC_PATH` both call `hans_scores`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .classification import accuracy

HANS_LABELS = ("entailment", "non-entailment")
HANS_HEURISTICS = ("lexical_overlap", "subsequence", "constituent")


def collapse_nli_predictions(predictions: np.ndarray, model_label_names: Sequence[str]) -> np.ndarray:
    """Map a model's NLI label ids to HANS ids: entailment -> 0, neutral/contradiction -> 1."""
    names = [n.lower() for n in model_label_names]
    if "entailment" not in names:
        raise ValueError(f"HANS needs a model with an 'entailment' label, got labels {list(model_label_names)}")
    return np.where(np.asarray(predictions) == names.index("entailment"), 0, 1)


def hans_metrics(predictions: np.ndarray, labels: np.ndarray, heuristics: Sequence[str] | None) -> dict[str, float]:
    """Accuracy overall and per heuristic × gold label (6 cells), on collapsed predictions/labels.

    Keys: `accuracy`, `<label>_accuracy` (NaN for a label with no example) and, with `heuristics`,
    `<heuristic>_<label>_accuracy` for each cell that has examples.
    """
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    out = {"accuracy": accuracy(predictions, labels)}
    for label_id, label in enumerate(HANS_LABELS):
        mask = labels == label_id
        out[f"{label}_accuracy"] = accuracy(predictions[mask], labels[mask]) if mask.any() else float("nan")
    if heuristics is not None:
        heuristics = np.asarray(heuristics)
        for heuristic in HANS_HEURISTICS:
            for label_id, label in enumerate(HANS_LABELS):
                mask = (heuristics == heuristic) & (labels == label_id)
                if mask.any():
                    out[f"{heuristic}_{label}_accuracy"] = accuracy(predictions[mask], labels[mask])
    return out


def hans_scores(
    predictions: np.ndarray,
    labels: np.ndarray,
    heuristics: Sequence[str] | None = None,
    label_names: Sequence[str] | None = None,
) -> dict[str, float]:
    """`hans_metrics` on a model's predictions: 3-way NLI ids when `label_names` (the model's labels) are given,
    else predictions already collapsed to HANS ids (0 entailment, 1 non-entailment)."""
    predictions = np.asarray(predictions)
    if label_names is not None:
        predictions = collapse_nli_predictions(predictions, label_names)
    elif predictions.size and not np.isin(predictions, (0, 1)).all():
        raise ValueError(
            "HANS predictions must be 0 (entailment) or 1 (non-entailment); pass label_names=[...] "
            "(the model's labels) to collapse 3-way NLI predictions"
        )
    return hans_metrics(predictions, labels, heuristics)
