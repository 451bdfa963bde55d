"""`threshold`: mask training (Win-win §3.2.2): config, masked layer, schedules and the threshold controller."""

from .config import ThresholdConfig
from .controller import MaskThresholdCallback
from .method import ThresholdPruning
from .schedules import cubic_sparsity, schedule_end_step, sparsity_at
from .thresholds import initialize_scores, update_thresholds

__all__ = [
    "MaskThresholdCallback",
    "ThresholdConfig",
    "ThresholdPruning",
    "cubic_sparsity",
    "initialize_scores",
    "schedule_end_step",
    "sparsity_at",
    "update_thresholds",
]
