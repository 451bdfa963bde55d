"""Distillation on a globally smoothed teacher, the "Smooth" baseline (Du et al. 2023, §6.2, Eq. 2-3)."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..errors import InputError
from .base import register_loss
from .distil import DistillationLoss, DistillationOptions


@dataclass
class SmoothedDistillationOptions(DistillationOptions):
    """The settings of `smooth` (Du et al. 2023, §6.2, Eq. 2-3): λ and the one global degree d."""

    smooth_degree: float = field(
        default=0.9,
        metadata={"help": "smooth: the global exponent d of s_j ∝ p_t,j^d, in (0, 1] (§6.2: 0.9, as RMC's d_i)."},
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 < self.smooth_degree <= 1.0:
            raise InputError(f"--smooth_degree must be in (0, 1] (Eq. 2's d; paper: 0.9), got {self.smooth_degree}")
        self.smooth_degree = float(self.smooth_degree)


@register_loss
class SmoothedDistillationLoss(DistillationLoss):
    """L_smooth = (1 − λ)·CE(y, p_S) + λ·KL(s ‖ p_S), s_j = p_t,j^d / Σ_k p_t,k^d with one d for all examples.

    Du et al. 2023 (EACL 2023), §6.2 and appendix C: Eq. 3 on the teacher smoothed by Eq. 2 with the same degree
    d for every training example ("global smoothing", after Müller et al. 2019; the paper uses d = 0.9, the
    constructor's default). d = `smooth_degree` in (0, 1]; d = 1 is `distil`. p_t is the `teacher_probs` column
    (`--teacher_predictions`), λ = `distil_lambda` (`SmoothedDistillationOptions`). Logs `smooth`, `ce` and `kl`.
    """

    name = "smooth"
    requires = ("teacher_probs",)
    options_class = SmoothedDistillationOptions
    citations = ("rmc", "hinton", "muller")
    smooth_degree: float

    def degree(self, difficulty: torch.Tensor | None) -> float:
        return self.smooth_degree
