"""The SRNet model, PEFT-style: masked layers injected into θ_pr (Win-win §3.1) over frozen base weights, with
save/load/push, merge and the base weights' fingerprint.

The pruning methods (their configs, layers and mask files) are `hf_srnets.pruning`; this package wraps a model with
any of them.
"""

from .model import TRAINING_STATE_NAME, SRNetModel
from .targets import resolve_target_modules

__all__ = [
    "TRAINING_STATE_NAME",
    "SRNetModel",
    "resolve_target_modules",
]
