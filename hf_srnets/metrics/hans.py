"""HANS evaluation (McCoy et al. 2019): 3-way NLI predictions collapsed to entailment / non-entailment."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

HANS_LABELS = ("entailment", "non-entailment")
HANS_HEURISTICS = ("lexical_overlap", "subsequence", "constituent")


def collapse_nli_predictions(predictions: np.ndarray, model_label_names: Sequence[str]) -> np.ndarray:
    """Map a model's NLI label ids to HANS ids: entailment -> 0, neutral/contradiction -> 1."""
    names = [n.lower() for n in model_label_names]
    if "entailment" not in names:
        raise ValueError(f"HANS needs a model with an 'entailment' label, got labels {list(model_label_names)}")
    return np.where(np.asarray(predictions) == names.index("entailment"), 0, 1)


def hans_metrics(predictions: np.ndarray, labels: np.ndarray, heuristics: Sequence[str] | None) -> dict[str, float]:
    """Accuracy overall and per heuristic × gold label (6 cells), on collapsed predictions/labels."""
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    out = {"accuracy": float((predictions == labels).mean())}
    for label_id, label in enumerate(HANS_LABELS):
        mask = labels == label_id
        out[f"{label}_accuracy"] = float((predictions[mask] == label_id).mean()) if mask.any() else float("nan")
    if heuristics is not None:
        heuristics = np.asarray(heuristics)
        for heuristic in HANS_HEURISTICS:
            for label_id, label in enumerate(HANS_LABELS):
                mask = (heuristics == heuristic) & (labels == label_id)
                if mask.any():
                    out[f"{heuristic}_{label}_accuracy"] = float((predictions[mask] == label_id).mean())
    return out
