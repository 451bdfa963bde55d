"""Example reweighting (Win-win appendix A.2, Eq. 3; Schuster et al. 2019, Clark et al. 2019)."""

from __future__ import annotations

import torch.nn.functional as F

from .base import DebiasingLoss, register_loss


@register_loss
class ReweightLoss(DebiasingLoss):
    """L_reweight = −(1 − β)·y·log p_m, with β = p_b^c the bias model's probability of the gold class c.

    Averaged over the batch (the formula's expectation), so β = 0 everywhere gives cross-entropy.
    """

    name = "reweight"
    requires = ("bias_probs",)

    def forward(self, logits, labels, bias_probs=None, teacher_probs=None):
        self._check(logits, bias_probs=bias_probs)
        per_example = F.cross_entropy(logits.float(), labels, reduction="none")
        beta = bias_probs.float().gather(1, labels[:, None]).squeeze(1)
        loss = ((1.0 - beta) * per_example).mean()
        return loss, {"reweight": loss.detach(), "ce": per_example.mean().detach(), "beta": beta.mean().detach()}
