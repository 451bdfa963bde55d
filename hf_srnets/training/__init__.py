"""Training: `SRNetTrainer` (a `Trainer` whose `compute_loss` runs the run's objective and the pruning method's
penalty), its `SRNetTrainingArguments`, the collator of the per-example columns, length-sorted evaluation and the
whole-run loss across a resume.

The three names load on first use (PEP 562, as `hf_srnets` does), so `hf_srnets.training.output_dir` (the run
folder's lock, which sweeps and their runs take) imports neither torch nor transformers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_MODULE_OF = {
    "SRNetDataCollator": ".collator",
    "SRNetTrainer": ".trainer",
    "SRNetTrainingArguments": ".arguments",
}

__all__ = ["SRNetDataCollator", "SRNetTrainer", "SRNetTrainingArguments"]


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULE_OF[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from .arguments import SRNetTrainingArguments
    from .collator import SRNetDataCollator
    from .trainer import SRNetTrainer
