"""Structured mask granularities (`--mask_granularity block|ffn|head|hybrid`, `neuron` = hybrid): units, scores.

- `groups`: which weights a unit covers (b×b tiles, FFN units, attention heads) and in which matrices.
- `layer`: `UnitScores` (one float32 score per unit, stored once) and `UnitMaskedLinear` (a matrix masked by them,
  with the straight-through estimator summed over each unit's weights).
- `selection`: exact ⌊s·n⌋ units per group or kind, hard/soft init from the mean |W| of a unit, IMP rounds, and
  fixed masks from element masks.
"""

from .groups import UNIT_KINDS, UnitGroup, UnitMember, unit_groups
from .layer import UnitMaskedLinear, UnitScores, expand_units, inject_unit_layers, sum_over_units, unit_masked_linear
from .unit_masks import (
    aggregated_magnitude,
    init_unit_scores,
    magnitude_prune_units,
    selection_pools,
    set_unit_masks,
    unit_layer_groups,
    update_unit_thresholds,
)

__all__ = [
    "UNIT_KINDS",
    "UnitGroup",
    "UnitMaskedLinear",
    "UnitMember",
    "UnitScores",
    "aggregated_magnitude",
    "expand_units",
    "init_unit_scores",
    "inject_unit_layers",
    "magnitude_prune_units",
    "selection_pools",
    "set_unit_masks",
    "sum_over_units",
    "unit_groups",
    "unit_layer_groups",
    "unit_masked_linear",
    "update_unit_thresholds",
]
