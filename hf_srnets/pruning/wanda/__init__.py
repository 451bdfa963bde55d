"""`wanda`: one-shot pruning by |W|·‖X‖ on calibration batches, per output row or N:M (Sun et al. 2024)."""

from ..oneshot import OneShotCallback
from .calibration import InputNorms, calibration_inputs
from .config import WandaConfig, parse_nm
from .importance import row_mask, wanda_scores
from .method import WandaPruning

__all__ = [
    "InputNorms",
    "OneShotCallback",
    "WandaConfig",
    "WandaPruning",
    "calibration_inputs",
    "parse_nm",
    "row_mask",
    "wanda_scores",
]
