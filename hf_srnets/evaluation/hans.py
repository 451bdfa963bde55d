"""HANS (McCoy et al. 2019; Win-win §4.1): an NLI model's 3-way predictions collapsed to entailment /
non-entailment, accuracy overall, per gold label and in the 6 heuristic × gold label cells.

The computation is `hf_srnets.metrics.hans.hans_scores`, shared with the `evaluate` module at
`hf_srnets.metrics.HANS_METRIC_PATH`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..metrics.hans import hans_scores
from .base import Evaluator, register_evaluator


@register_evaluator
class HansEvaluator(Evaluator):
    """HANS cells of a model with the task's NLI labels (`TaskSpec.label_names` must contain `entailment`).

    The sets' `heuristic` column, when present, gives the per-heuristic cells.
    """

    name = "hans"
    columns = ("heuristic",)

    @property
    def primary_metric(self) -> str:
        return "accuracy"

    def score(
        self, predictions: np.ndarray, labels: np.ndarray, heuristic: Sequence[str] | None = None, **columns: Any
    ) -> dict[str, float]:
        return hans_scores(predictions, labels, heuristic, label_names=self.task.label_names)
