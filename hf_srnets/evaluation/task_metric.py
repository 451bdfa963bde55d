"""Scoring with the task's own labels and a classification metric: the ID dev set and OOD sets in its labels.

Win-win appendix B.1: accuracy for MNLI and FEVER, class-weighted F1 for QQP and PAWS; accuracy is reported too.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..metrics import METRICS
from .base import Evaluator, register_evaluator


class LabelMetricEvaluator(Evaluator):
    """`metric` (a key of `hf_srnets.metrics.METRICS`) on the set's labels, and accuracy when that is another."""

    metric: ClassVar[str] = "accuracy"

    @property
    def primary_metric(self) -> str:
        return self.metric

    def score(self, predictions: np.ndarray, labels: np.ndarray, **columns: Any) -> dict[str, float]:
        metric = self.primary_metric
        out = {metric: METRICS[metric](predictions, labels)}
        if metric != "accuracy":
            out["accuracy"] = METRICS["accuracy"](predictions, labels)
        return out


@register_evaluator
class TaskMetricEvaluator(LabelMetricEvaluator):
    """The task's metric (`TaskSpec.metric`) and accuracy: the ID dev set, and `--ood_file` sets in the task's
    labels (evaluator name `same`: the same labels and metric as the task)."""

    name = "same"

    @property
    def primary_metric(self) -> str:
        return self.task.metric
