"""hf_srnets: sparse and robust subnetworks (SRNets) of BERT-family models with the Hugging Face Trainer."""

from .compact import compact_model, load_pretrained_model, save_pretrained_model
from .evaluation import Evaluator, register_evaluator
from .losses import DebiasingLoss, get_loss, register_loss
from .masking import SRNetModel
from .objectives import LossObjective, Objective, StepObjective, build_objective, register_objective
from .pruning import (
    MaskedLinear,
    PruningConfig,
    PruningMethod,
    ThresholdConfig,
    register_pruning_method,
    resolve_pruning,
)
from .training.arguments import SRNetTrainingArguments
from .training.collator import SRNetDataCollator
from .training.trainer import SRNetTrainer
from .version import __version__

__all__ = [
    "DebiasingLoss",
    "Evaluator",
    "LossObjective",
    "MaskedLinear",
    "Objective",
    "PruningConfig",
    "PruningMethod",
    "SRNetDataCollator",
    "SRNetModel",
    "SRNetTrainer",
    "SRNetTrainingArguments",
    "StepObjective",
    "ThresholdConfig",
    "__version__",
    "build_objective",
    "compact_model",
    "get_loss",
    "load_pretrained_model",
    "register_evaluator",
    "register_loss",
    "register_objective",
    "register_pruning_method",
    "resolve_pruning",
    "save_pretrained_model",
]
