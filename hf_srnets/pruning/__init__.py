"""Pruning methods, PEFT-style: one folder per method (config, layer, controller), found by name in a registry.

- `threshold`: mask training over frozen weights (Win-win §3.2.2), `--pruning mask`.
- `magnitude`: iterative magnitude pruning, with rewinding or not (Algorithm 1), `--pruning imp` / `imp-rw`.

A new method is a `PruningMethod` subclass registered with `@register_pruning_method` (see `base.py`).
"""

from .base import (
    CONFIG_NAME,
    MASKS_NAME,
    PRUNING_ALIASES,
    PRUNING_METHODS,
    PruningConfig,
    PruningMethod,
    get_pruning_method,
    pruning_choices,
    register_pruning_method,
    resolve_pruning,
    unregister_pruning_method,
)
from .fixed import FixedMaskCallback
from .magnitude import IMPCallback, MagnitudeConfig, MagnitudePruning, imp_rounds, magnitude_prune
from .selection import binarize, exact_mask, exact_thresholds
from .threshold import (
    MaskedLinear,
    MaskThresholdCallback,
    SRNetMaskConfig,
    ThresholdConfig,
    ThresholdPruning,
    cubic_sparsity,
    schedule_end_step,
    sparsity_at,
)

__all__ = [
    "CONFIG_NAME",
    "MASKS_NAME",
    "PRUNING_ALIASES",
    "PRUNING_METHODS",
    "FixedMaskCallback",
    "IMPCallback",
    "MagnitudeConfig",
    "MagnitudePruning",
    "MaskThresholdCallback",
    "MaskedLinear",
    "PruningConfig",
    "PruningMethod",
    "SRNetMaskConfig",
    "ThresholdConfig",
    "ThresholdPruning",
    "binarize",
    "cubic_sparsity",
    "exact_mask",
    "exact_thresholds",
    "get_pruning_method",
    "imp_rounds",
    "magnitude_prune",
    "pruning_choices",
    "register_pruning_method",
    "resolve_pruning",
    "schedule_end_step",
    "sparsity_at",
    "unregister_pruning_method",
]
