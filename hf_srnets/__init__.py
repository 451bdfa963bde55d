"""hf_srnets: sparse and robust subnetworks (SRNets) of BERT-family models with the Hugging Face Trainer.

The public names below load on first use (PEP 562), as in transformers: `import hf_srnets` imports neither torch nor
transformers; a submodule imports what it uses (the commands, `report` and the sweep included, still load both).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .version import __version__

_EXPORTS = {
    ".compact": ("compact_model", "load_pretrained_model", "save_pretrained_model"),
    ".evaluation": ("Evaluator", "register_evaluator"),
    ".losses": ("DebiasingLoss", "get_loss", "register_loss"),
    ".masking": ("SRNetModel",),
    ".objectives": ("LossObjective", "Objective", "StepObjective", "build_objective", "register_objective"),
    ".pruning": (
        "MaskedLinear",
        "PruningConfig",
        "PruningMethod",
        "ThresholdConfig",
        "register_pruning_method",
        "resolve_pruning",
    ),
    ".training.arguments": ("SRNetTrainingArguments",),
    ".training.collator": ("SRNetDataCollator",),
    ".training.trainer": ("SRNetTrainer",),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

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


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULE_OF[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
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
