"""The SRNet masking adapter: learnable binary masks over θ_pr (Win-win §3.2.2)."""

from .config import CONFIG_NAME, MASKS_NAME, SRNetMaskConfig
from .layer import MaskedLinear, binarize, exact_thresholds
from .model import TRAINING_STATE_NAME, SRNetModel, pack_mask, unpack_mask, weights_fingerprint
from .schedules import cubic_sparsity, schedule_end_step, sparsity_at
from .targets import resolve_target_modules

__all__ = [
    "CONFIG_NAME",
    "MASKS_NAME",
    "TRAINING_STATE_NAME",
    "MaskedLinear",
    "SRNetMaskConfig",
    "SRNetModel",
    "binarize",
    "cubic_sparsity",
    "exact_thresholds",
    "pack_mask",
    "resolve_target_modules",
    "schedule_end_step",
    "sparsity_at",
    "unpack_mask",
    "weights_fingerprint",
]
