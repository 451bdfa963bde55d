"""RMC: distillation on a teacher smoothed per example by its difficulty (Du et al. 2023, §5.2, Eq. 2-3)."""

from __future__ import annotations

import torch

from .base import register_loss
from .distil import DistillationLoss, DistillationOptions


@register_loss
class RMCLoss(DistillationLoss):
    """L_rmc = (1 − λ)·CE(y_i, p_S) + λ·KL(s_i ‖ p_S),  s_ij = p_t,ij^{d_i} / Σ_k p_t,ik^{d_i}.

    Robust Model Compression, Du et al. 2023 (EACL 2023), §5.2: Eq. 2 smooths the teacher's softmax p_t of
    example i by its difficulty degree d_i ∈ [α, 1] (Eq. 1, from the variance of its loss across pruned models;
    the `difficulty` column, `--sample_difficulty`), Eq. 3 combines cross-entropy with the KL term, λ =
    `distil_lambda` (0.9). Hard examples (d_i = 1) keep the teacher's distribution; shortcut examples (d_i → α)
    get a flatter, less over-confident target. All d_i equal to d is `smooth` with d; all equal to 1 is `distil`.
    Needs the `teacher_probs` and `difficulty` columns. Logs `rmc`, `ce`, `kl` and the batch-mean `difficulty`.
    """

    name = "rmc"
    requires = ("teacher_probs", "difficulty")
    options_class = DistillationOptions
    citations = ("rmc", "hinton")

    def degree(self, difficulty: torch.Tensor | None) -> torch.Tensor:
        degree = difficulty.float()
        if not bool(torch.all((degree > 0) & (degree <= 1))):
            raise ValueError(
                f"difficulty d_i must be in (0, 1] (Eq. 1 maps the loss variance to [α, 1]), got values in "
                f"[{degree.min().item():.4g}, {degree.max().item():.4g}]: write it with run_sample_difficulty.py."
            )
        return degree

    def forward(
        self, logits: torch.Tensor, labels: torch.Tensor, teacher_probs: torch.Tensor, difficulty: torch.Tensor
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        loss, parts = self.distil(logits, labels, teacher_probs, difficulty)
        return loss, {**parts, "difficulty": difficulty.mean().detach()}
