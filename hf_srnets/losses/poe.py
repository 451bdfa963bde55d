"""Product-of-experts (Win-win §3.3; Clark et al. 2019, He et al. 2019, Mahabadi et al. 2020)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .base import DebiasingLoss, register_loss, safe_log


@register_loss
class ProductOfExpertsLoss(DebiasingLoss):
    """L_poe = −y·log softmax(log p_m + log p_b), averaged over the batch.

    Win-win §3.3 (unnumbered; Liu et al. 2022), after Clark et al. 2019 (EMNLP-IJCNLP), He et al. 2019 and
    Karimi Mahabadi et al. 2020. p_m is the main model's softmax, p_b the bias model's probabilities (the
    `bias_probs` column). A uniform p_b leaves the loss equal to cross-entropy; a confident, correct p_b makes
    the example contribute little. Only p_m receives gradients. Logs `poe` and the plain `ce`.
    """

    name = "poe"
    requires = ("bias_probs",)
    citations = ("winwin", "clark")

    def forward(
        self, logits: torch.Tensor, labels: torch.Tensor, bias_probs: torch.Tensor
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        log_pm = F.log_softmax(logits, dim=-1)
        combined = log_pm + safe_log(bias_probs)
        loss = F.cross_entropy(combined, labels)
        return loss, {"poe": loss.detach()}
