"""Confidence regularisation (Win-win appendix A.2, Eq. 4; Utama et al. 2020)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .base import DebiasingLoss, register_loss, safe_log


def scaled_teacher(teacher_probs: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """S(p_t, β)_j = (p_t^j)^(1−β) / Σ_k (p_t^k)^(1−β)  (appendix Eq. 4), computed in log space."""
    logits = (1.0 - beta)[:, None] * safe_log(teacher_probs)
    return torch.softmax(logits, dim=-1)


@register_loss
class ConfidenceRegularizationLoss(DebiasingLoss):
    """L_confreg = −S(p_t, β)·log p_m, with p_t a CE-trained teacher's softmax and β = p_b^c.

    Win-win appendix A.2 (Liu et al. 2022): the loss is unnumbered, the scaling S(p_t, β) is Eq. 4
    (`scaled_teacher`); from Utama et al. 2020 (ACL, "Mind the Trade-off"). Averaged over the batch. β = 0 gives
    plain distillation on p_t; β → 1 flattens the target towards uniform for examples the bias model finds easy.
    Needs the `bias_probs` and `teacher_probs` columns; logs `confreg` and the plain `ce`.
    """

    name = "confreg"
    requires = ("bias_probs", "teacher_probs")
    citations = ("winwin", "utama")

    def forward(
        self, logits: torch.Tensor, labels: torch.Tensor, bias_probs: torch.Tensor, teacher_probs: torch.Tensor
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        beta = bias_probs.gather(1, labels[:, None]).squeeze(1)
        target = scaled_teacher(teacher_probs, beta)
        log_pm = F.log_softmax(logits, dim=-1)
        loss = -(target * log_pm).sum(-1).mean()
        return loss, {"confreg": loss.detach()}
