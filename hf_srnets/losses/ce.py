"""Standard cross-entropy, L_std = −y·log p_m (Win-win §3.3)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .base import DebiasingLoss, register_loss


@register_loss
class CrossEntropyLoss(DebiasingLoss):
    """L_std = −y·log p_m, averaged over the batch (Win-win §3.3, unnumbered; Liu et al. 2022).

    Reads no column (any bias or teacher column given is left out). Logs `ce` (as every loss does).
    """

    name = "ce"
    citations = ("winwin",)

    def forward(self, logits: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        return F.cross_entropy(logits, labels), {}
