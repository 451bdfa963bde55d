"""Training objectives: the interface the trainer calls, debiasing losses as objectives, step-level objectives.

A loss (`hf_srnets.losses`, `--loss NAME`) sees logits and probability columns; an `Objective` sees the model and
the batch (`LossObjective` wraps a loss), and a `StepObjective` owns the whole training step around an inner
objective (adversarial training: `FreeLB`, `--step_objective freelb`; distillation from the dense model during a
pruning search: `DenseDistillation`, `--step_objective dense_distil`). `build_objective(loss, step=...)` builds one
by name; `OBJECTIVES` lists the registered step objectives.
"""

from .base import Objective
from .dense_distil import DenseDistillation, DenseDistillationOptions
from .freelb import FreeLB
from .loss import LossObjective
from .registry import OBJECTIVES, build_objective, citations_for, register_objective
from .step import StepObjective

__all__ = [
    "OBJECTIVES",
    "DenseDistillation",
    "DenseDistillationOptions",
    "FreeLB",
    "LossObjective",
    "Objective",
    "StepObjective",
    "build_objective",
    "citations_for",
    "register_objective",
]
