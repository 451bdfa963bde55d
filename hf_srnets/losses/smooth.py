"""Distillation on a globally smoothed teacher, the "Smooth" baseline (Du et al. 2023, §6.2, Eq. 2-3)."""

from __future__ import annotations

from .base import register_loss
from .distil import DistillationLoss


@register_loss
class SmoothedDistillationLoss(DistillationLoss):
    """L_smooth = (1 − λ)·CE(y, p_S) + λ·KL(s ‖ p_S), s_j = p_t,j^d / Σ_k p_t,k^d with one d for all examples.

    Du et al. 2023 (EACL 2023), §6.2 and appendix C: Eq. 3 on the teacher smoothed by Eq. 2 with the same degree
    d for every training example ("global smoothing", after Müller et al. 2019; the paper uses d = 0.9, the
    constructor's default). d = `smooth_degree` in (0, 1]; d = 1 is `distil`. p_t is the `teacher_probs` column
    (`--teacher_predictions`), λ = `distil_lambda`. Logs `smooth`, `ce` and `kl`.
    """

    name = "smooth"
    requires = ("teacher_probs",)
    options = ("distil_lambda", "smooth_degree")
    citations = ("rmc", "hinton", "muller")

    def __init__(self, distil_lambda: float = 0.9, smooth_degree: float = 0.9) -> None:
        super().__init__(distil_lambda)
        if not 0.0 < smooth_degree <= 1.0:
            raise ValueError(f"--smooth_degree must be in (0, 1] (Eq. 2's d; paper: 0.9), got {smooth_degree}")
        self.smooth_degree = float(smooth_degree)

    def degree(self, difficulty):
        return self.smooth_degree
