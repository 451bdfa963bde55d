"""hf_srnets: sparse and robust subnetworks (SRNets) of BERT-family models with the Hugging Face Trainer."""

__version__ = "0.1.0"

from .collator import SRNetDataCollator
from .losses import DebiasingLoss, get_loss, register_loss
from .masking import MaskedLinear, SRNetMaskConfig, SRNetModel
from .pruning import PruningConfig, PruningMethod, register_pruning_method, resolve_pruning
from .trainer import SRNetTrainer
from .training_args import SRNetTrainingArguments

__all__ = [
    "DebiasingLoss",
    "MaskedLinear",
    "PruningConfig",
    "PruningMethod",
    "SRNetDataCollator",
    "SRNetMaskConfig",
    "SRNetModel",
    "SRNetTrainer",
    "SRNetTrainingArguments",
    "__version__",
    "get_loss",
    "register_loss",
    "register_pruning_method",
    "resolve_pruning",
]
