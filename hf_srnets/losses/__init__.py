"""Debiasing losses, one module each, registered by name (`--loss NAME`), with their options (`options_class`)."""

from .base import LOSSES, PROB_EPS, DebiasingLoss, get_loss, register_loss
from .ce import CrossEntropyLoss
from .confreg import ConfidenceRegularizationLoss, scaled_teacher
from .distil import DistillationLoss, DistillationOptions, distillation_loss, smoothed_teacher
from .focal import FocalLoss, FocalOptions, focal_weights
from .jtt import JTTLoss, JTTOptions
from .poe import ProductOfExpertsLoss
from .reweight import ReweightLoss
from .rmc import RMCLoss
from .smooth import SmoothedDistillationLoss, SmoothedDistillationOptions

__all__ = [
    "LOSSES",
    "PROB_EPS",
    "ConfidenceRegularizationLoss",
    "CrossEntropyLoss",
    "DebiasingLoss",
    "DistillationLoss",
    "DistillationOptions",
    "FocalLoss",
    "FocalOptions",
    "JTTLoss",
    "JTTOptions",
    "ProductOfExpertsLoss",
    "RMCLoss",
    "ReweightLoss",
    "SmoothedDistillationLoss",
    "SmoothedDistillationOptions",
    "distillation_loss",
    "focal_weights",
    "get_loss",
    "register_loss",
    "scaled_teacher",
    "smoothed_teacher",
]
