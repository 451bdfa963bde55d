"""Example reweighting (Win-win appendix A.2, Eq. 3; Schuster et al. 2019, Clark et al. 2019)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .base import DebiasingLoss, register_loss


@register_loss
class ReweightLoss(DebiasingLoss):
    """L_reweight = −(1 − β)·y·log p_m, with β = p_b^c the bias model's probability of the gold class c.

    Win-win appendix A.2, Eq. 3 (Liu et al. 2022), after Schuster et al. 2019 and Clark et al. 2019.
    Averaged over the batch (the formula's expectation), so β = 0 everywhere gives cross-entropy. Needs the
    `bias_probs` column; logs `reweight`, the plain `ce` and the batch-mean `beta`.
    """

    name = "reweight"
    requires = ("bias_probs",)
    citations = ("winwin", "clark")

    def forward(
        self, logits: torch.Tensor, labels: torch.Tensor, bias_probs: torch.Tensor
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        per_example = F.cross_entropy(logits, labels, reduction="none")
        beta = bias_probs.gather(1, labels[:, None]).squeeze(1)
        loss = ((1.0 - beta) * per_example).mean()
        return loss, {"reweight": loss.detach(), "beta": beta.mean().detach()}
