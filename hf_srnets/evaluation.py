"""ID and OOD evaluation of a task's sets with the task's metrics, and a printable results table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .data.tasks import EvalSet, TaskSpec
from .metrics import METRICS, collapse_nli_predictions, hans_metrics


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=-1, keepdims=True)


def score_predictions(
    task: TaskSpec,
    logits: np.ndarray,
    labels: np.ndarray,
    eval_set: EvalSet | None = None,
    heuristics: Sequence[str] | None = None,
) -> dict[str, float]:
    """Metrics for one evaluation set.

    ID sets and OOD sets with the task's labels use the task metric (accuracy for MNLI and FEVER,
    class-weighted F1 for QQP and PAWS; appendix B.1) and also report accuracy. HANS collapses
    neutral and contradiction into non-entailment and reports the 6 heuristic × label cells.
    """
    predictions = np.asarray(logits).argmax(-1)
    labels = np.asarray(labels)
    if eval_set is not None and eval_set.kind == "hans":
        return hans_metrics(collapse_nli_predictions(predictions, task.label_names), labels, heuristics)
    out = {task.metric: METRICS[task.metric](predictions, labels)}
    if task.metric != "accuracy":
        out["accuracy"] = METRICS["accuracy"](predictions, labels)
    return out


def primary_metric(task: TaskSpec, eval_set: EvalSet | None = None) -> str:
    return "accuracy" if eval_set is not None and eval_set.kind == "hans" else task.metric


def results_table(results: dict[str, Any], rows: Sequence[tuple[str, str]]) -> str:
    """A small markdown table of `(set name, metric key)` rows read from `results`."""
    lines = ["| set | metric | value |", "|---|---|---|"]
    for name, key in rows:
        value = results.get(key)
        if value is not None:
            metric = key.split(f"{name}_", 1)[-1]
            lines.append(f"| {name} | {metric} | {100 * value:.2f} |")
    return "\n".join(lines)
