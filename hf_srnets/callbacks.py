"""Moved: the mask-training controller is `hf_srnets.pruning.threshold.controller` (kept importable from here)."""

from .pruning.threshold.controller import MaskThresholdCallback

__all__ = ["MaskThresholdCallback"]
