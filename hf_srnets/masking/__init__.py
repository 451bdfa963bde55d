"""The SRNet model: masked layers injected into θ_pr (Win-win §3.1), save/load/push, fingerprint and checksums.

The pruning methods (their configs and layers) are `hf_srnets.pruning`; this package wraps a model with any of them.
"""

from .io import pack_mask, tensor_checksum, unpack_mask, weights_fingerprint
from .model import TRAINING_STATE_NAME, SRNetModel
from .targets import resolve_target_modules

__all__ = [
    "TRAINING_STATE_NAME",
    "SRNetModel",
    "pack_mask",
    "resolve_target_modules",
    "tensor_checksum",
    "unpack_mask",
    "weights_fingerprint",
]
