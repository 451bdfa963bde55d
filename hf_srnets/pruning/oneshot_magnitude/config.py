"""Options of one-shot magnitude pruning: the common ones (sparsity, scope, granularity)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..base import PruningConfig


@dataclass
class OneShotMagnitudeConfig(PruningConfig):
    """One-shot magnitude pruning: ⌊s·n⌋ weights (or units) of each matrix (or unit group) with the smallest |W|,
    chosen once from the starting weights; nothing retrains. IMP with one round and no training."""

    _argument_group_name: ClassVar[str] = "Pruning method magnitude-oneshot (--pruning magnitude-oneshot)"

    def unused_options(self) -> dict[str, str]:
        """The common options, and what a one-shot per-matrix selection leaves unused."""
        return {
            **super().unused_options(),
            "trainable_classifier": "nothing trains in a one-shot run (--pruning magnitude-oneshot keeps θ_0)",
            "sparsity_scope": "one-shot magnitude pruning selects per matrix (or unit group), as IMP's rounds do",
        }
