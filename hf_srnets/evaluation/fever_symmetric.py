"""FEVER-Symmetric (Schuster et al. 2019, "Towards Debiasing Fact Verification Models"), FEVER's OOD sets v1
(generated) and v2 (test): accuracy with the task's labels (Win-win §4.1)."""

from __future__ import annotations

from .base import register_evaluator
from .task_metric import LabelMetricEvaluator


@register_evaluator
class FeverSymmetricEvaluator(LabelMetricEvaluator):
    """Accuracy on a FEVER-Symmetric set (claim-evidence pairs whose claim alone does not give the label)."""

    name = "fever_symmetric"
    metric = "accuracy"
