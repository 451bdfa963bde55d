"""The SRNet model: masked layers injected into θ_pr (Win-win §3.1), save/load/push, fingerprint and checksums.

The pruning methods (mask training, IMP) live in `hf_srnets.pruning`; their names are re-exported here for the
code written before they moved (`SRNetMaskConfig` is the `threshold` method's config).
"""

from ..pruning import (
    CONFIG_NAME,
    MASKS_NAME,
    MaskedLinear,
    PruningConfig,
    SRNetMaskConfig,
    binarize,
    cubic_sparsity,
    exact_thresholds,
    schedule_end_step,
    sparsity_at,
)
from .io import pack_mask, tensor_checksum, unpack_mask, weights_fingerprint
from .model import TRAINING_STATE_NAME, SRNetModel
from .targets import resolve_target_modules

__all__ = [
    "CONFIG_NAME",
    "MASKS_NAME",
    "TRAINING_STATE_NAME",
    "MaskedLinear",
    "PruningConfig",
    "SRNetMaskConfig",
    "SRNetModel",
    "binarize",
    "cubic_sparsity",
    "exact_thresholds",
    "pack_mask",
    "resolve_target_modules",
    "schedule_end_step",
    "sparsity_at",
    "tensor_checksum",
    "unpack_mask",
    "weights_fingerprint",
]
