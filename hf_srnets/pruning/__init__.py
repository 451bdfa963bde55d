"""Pruning methods, PEFT-style: one folder per method (config, layer, controller), found by name in a registry.

- `threshold`: mask training over frozen weights (Win-win §3.2.2), `--pruning mask`.
- `magnitude`: iterative magnitude pruning, with rewinding or not (Algorithm 1), `--pruning imp` / `imp-rw`.
- `l0`: hard-concrete L0 masks (Robust Tickets §3.2) and one-shot ticket extraction (§3.3), `--pruning l0`.
- `random`: random masks with a given ticket's per-matrix sparsity (Robust Tickets §4.2), `--pruning random`.
- `wanda`: one-shot |W|·‖X‖ on calibration batches, per output row or N:M (Sun et al. 2024), `--pruning wanda`.
- `oneshot_magnitude`: one-shot magnitude pruning, IMP's selection once with no retraining,
  `--pruning magnitude-oneshot`.

A new method is a `PruningMethod` subclass registered with `@register_pruning_method` (see `base.py`); its layer
subclasses `MaskedLayer` (`wrapped.py`), and its hooks see the model as a `MaskedModel` (`masked_model.py`). A schedule
over the run (a cubic or linear ramp, rounds at fractions of the run) comes from `schedule.py`.
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
from .exact_count import binarize, exact_mask, exact_thresholds
from .fixed_mask import FixedMaskCallback
from .l0 import HardConcreteLinear, L0Config, L0Pruning, extract_ticket, write_ticket
from .magnitude import IMPCallback, MagnitudeConfig, MagnitudePruning, imp_rounds, magnitude_prune
from .masked_linear import MaskedLinear
from .masked_model import MaskConfig, MaskedModel
from .oneshot import OneShotCallback
from .oneshot_magnitude import OneShotMagnitudeConfig, OneShotMagnitudePruning
from .random import RandomConfig, RandomPruning
from .threshold import (
    MaskThresholdCallback,
    ThresholdConfig,
    ThresholdPruning,
    cubic_sparsity,
    schedule_end_step,
    sparsity_at,
)
from .wanda import WandaConfig, WandaPruning
from .wrapped import MaskedLayer, unmasked

__all__ = [
    "CONFIG_NAME",
    "MASKS_NAME",
    "PRUNING_ALIASES",
    "PRUNING_METHODS",
    "FixedMaskCallback",
    "HardConcreteLinear",
    "IMPCallback",
    "L0Config",
    "L0Pruning",
    "MagnitudeConfig",
    "MagnitudePruning",
    "MaskConfig",
    "MaskThresholdCallback",
    "MaskedLayer",
    "MaskedLinear",
    "MaskedModel",
    "OneShotCallback",
    "OneShotMagnitudeConfig",
    "OneShotMagnitudePruning",
    "PruningConfig",
    "PruningMethod",
    "RandomConfig",
    "RandomPruning",
    "ThresholdConfig",
    "ThresholdPruning",
    "WandaConfig",
    "WandaPruning",
    "binarize",
    "cubic_sparsity",
    "exact_mask",
    "exact_thresholds",
    "extract_ticket",
    "get_pruning_method",
    "imp_rounds",
    "magnitude_prune",
    "pruning_choices",
    "register_pruning_method",
    "resolve_pruning",
    "schedule_end_step",
    "sparsity_at",
    "unmasked",
    "unregister_pruning_method",
    "write_ticket",
]
