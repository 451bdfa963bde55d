"""PAWS (Zhang et al. 2019), QQP's OOD sets PAWS-QQP and PAWS-Wiki: class-weighted F1 and accuracy.

Win-win appendix B.1: the paraphrase sets are imbalanced (PAWS-QQP is 71.8% non-duplicate), so they are scored
with Σ_c (n_c / n)·F1_c (`hf_srnets.metrics.f1_weighted`); accuracy is reported too.
"""

from __future__ import annotations

from .base import register_evaluator
from .task_metric import LabelMetricEvaluator


@register_evaluator
class PawsEvaluator(LabelMetricEvaluator):
    """Weighted F1 (primary) and accuracy on PAWS-QQP / PAWS-Wiki."""

    name = "paws"
    metric = "f1"
