"""Debiasing losses, one module each, registered by name (`--loss NAME`)."""

from .base import LOSSES, PROB_EPS, DebiasingLoss, get_loss, register_loss
from .ce import CrossEntropyLoss
from .confreg import ConfidenceRegularizationLoss, scaled_teacher
from .distil import DistillationLoss, distillation_loss, smoothed_teacher
from .focal import FocalLoss, focal_weights
from .jtt import JTTLoss
from .poe import ProductOfExpertsLoss
from .reweight import ReweightLoss
from .rmc import RMCLoss
from .smooth import SmoothedDistillationLoss

__all__ = [
    "LOSSES",
    "PROB_EPS",
    "ConfidenceRegularizationLoss",
    "CrossEntropyLoss",
    "DebiasingLoss",
    "DistillationLoss",
    "FocalLoss",
    "JTTLoss",
    "ProductOfExpertsLoss",
    "RMCLoss",
    "ReweightLoss",
    "SmoothedDistillationLoss",
    "distillation_loss",
    "focal_weights",
    "get_loss",
    "register_loss",
    "scaled_teacher",
    "smoothed_teacher",
]
