"""Debiasing losses, one module each, registered by name (`--loss NAME`)."""

from .base import LOSSES, PROB_EPS, DebiasingLoss, get_loss, register_loss
from .ce import CrossEntropyLoss
from .confreg import ConfidenceRegularizationLoss, scaled_teacher
from .poe import ProductOfExpertsLoss
from .reweight import ReweightLoss

__all__ = [
    "LOSSES",
    "PROB_EPS",
    "ConfidenceRegularizationLoss",
    "CrossEntropyLoss",
    "DebiasingLoss",
    "ProductOfExpertsLoss",
    "ReweightLoss",
    "get_loss",
    "register_loss",
    "scaled_teacher",
]
