"""A run's evaluation: the ID dev set through the Trainer's `compute_metrics`, each OOD set through its evaluator.

Results keys are `eval_<set>_<metric>`; the ID set's are written by `Trainer.evaluate` (with its loss and speed),
the OOD sets' from `Trainer.predict` outputs scored by the set's evaluator (`EvalSet.kind`), with `predict`'s speed
(`eval_<set>_runtime`, which the sweep's budget line sums) but not its loss or task metric (the set's labels need
not be the task's). Every set's example count is `eval_<set>_examples` (F_bias pools OOD sets by it). An ID set with
a `hard` column also gets the easy/hard metrics (`easy_hard.py`), from the predictions `Trainer.evaluate` made
(`SRNetTrainer.last_eval_output`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..data.tasks import EvalSet, SplitSource, TaskSpec
from .base import build_evaluator, evaluator_for
from .easy_hard import HARD_COLUMN

logger = logging.getLogger(__name__)

MetricRow = tuple[str, str, dict[str, Any]]  # (set name, results key of its primary metric, card dataset entry)
SPEED_METRICS = ("runtime", "samples_per_second", "steps_per_second")  # what `Trainer.predict` times


def metrics_function(task: TaskSpec) -> Callable[[Any], dict[str, float]]:
    """The Trainer's `compute_metrics`: the task's ID evaluator on an `EvalPrediction`."""
    evaluator = evaluator_for(task)

    def compute_metrics(eval_pred: Any) -> dict[str, float]:
        return evaluator(eval_pred.predictions, eval_pred.label_ids)

    return compute_metrics


def score_predictions(
    task: TaskSpec,
    logits: np.ndarray,
    labels: np.ndarray,
    eval_set: EvalSet | None = None,
    heuristics: Sequence[str] | None = None,
) -> dict[str, float]:
    """Metrics for one evaluation set (the task's ID set when `eval_set` is None), by the set's evaluator.

    ID sets and OOD sets with the task's labels use the task metric (accuracy for MNLI and FEVER,
    class-weighted F1 for QQP and PAWS; appendix B.1) and also report accuracy. HANS collapses
    neutral and contradiction into non-entailment and reports the 6 heuristic × label cells.
    """
    columns = {"heuristic": heuristics} if heuristics is not None else None
    return evaluator_for(task, eval_set)(logits, labels, columns)


def primary_metric(task: TaskSpec, eval_set: EvalSet | None = None) -> str:
    """The metric reported first for `eval_set` (the ID set when None): accuracy on HANS, else the set's metric."""
    return evaluator_for(task, eval_set).primary_metric


def run_evaluation(
    trainer: Any,
    task: TaskSpec,
    id_name: str,
    id_dataset: Any,
    ood: Sequence[tuple[EvalSet, Any]],
    id_source: SplitSource,
) -> tuple[dict[str, Any], list[MetricRow]]:
    """Evaluate the trained model on the ID dev set and every OOD set; return the results and the metric rows.

    The ID set goes through `trainer.evaluate(..., metric_key_prefix=f"eval_{id_name}")` (so `compute_metrics`
    must be `metrics_function(task)`); each OOD set through `trainer.predict` and its evaluator, with the
    dataset's `label` column as gold labels. `id_source` is where the ID set came from (the card's dataset entry).
    """
    results: dict[str, Any] = dict(trainer.evaluate(id_dataset, metric_key_prefix=f"eval_{id_name}"))
    results[f"eval_{id_name}_examples"] = len(id_dataset)
    results.update(easy_hard_results(trainer, task, id_name, id_dataset))
    id_key = f"eval_{id_name}_{evaluator_for(task).primary_metric}"
    rows: list[MetricRow] = [(id_name, id_key, id_source.dataset_entry(id_name))]
    for eval_set, dataset in ood:
        evaluator = evaluator_for(task, eval_set)
        output = trainer.predict(dataset, metric_key_prefix=f"eval_{eval_set.name}")
        scores = evaluator(output.predictions, np.asarray(dataset["label"]), dataset)
        results.update({f"eval_{eval_set.name}_{k}": v for k, v in scores.items()})
        results.update(speed_metrics(output.metrics, f"eval_{eval_set.name}"))
        results[f"eval_{eval_set.name}_examples"] = len(dataset)
        key = f"eval_{eval_set.name}_{evaluator.primary_metric}"
        rows.append((eval_set.name, key, eval_set.source.dataset_entry(eval_set.name)))
    return results, rows


def speed_metrics(metrics: dict[str, Any] | None, prefix: str) -> dict[str, Any]:
    """The `<prefix>_runtime`, `_samples_per_second` and `_steps_per_second` of a `Trainer.predict` output's metrics."""
    keys = [f"{prefix}_{name}" for name in SPEED_METRICS]
    return {key: metrics[key] for key in keys if key in (metrics or {})}


def easy_hard_results(trainer: Any, task: TaskSpec, id_name: str, id_dataset: Any) -> dict[str, Any]:
    """`eval_<id>_easy_*`, `eval_<id>_hard_*` and `eval_<id>_easy_hard_gap` from the logits of the evaluation just
    run (`trainer.last_eval_output`: the ID set is not predicted twice); {} without a `hard` column."""
    if HARD_COLUMN not in id_dataset.column_names:
        return {}
    output = getattr(trainer, "last_eval_output", None)
    predictions = getattr(output, "predictions", None)
    if isinstance(predictions, tuple):
        predictions = predictions[0]
    if predictions is None or len(predictions) != len(id_dataset):
        logger.warning("No predictions kept from the ID evaluation (an SRNetTrainer keeps them): no easy/hard metrics")
        return {}
    scores = build_evaluator("easy_hard", task)(predictions, np.asarray(id_dataset["label"]), id_dataset)
    return {f"eval_{id_name}_{k}": v for k, v in scores.items()}
