"""Standard cross-entropy, L_std = −y·log p_m (Win-win §3.3)."""

from __future__ import annotations

import torch.nn.functional as F

from .base import DebiasingLoss, register_loss


@register_loss
class CrossEntropyLoss(DebiasingLoss):
    """L_std = −y·log p_m, averaged over the batch (Win-win §3.3, unnumbered; Liu et al. 2022).

    Ignores any bias or teacher columns. Logs `ce`.
    """

    name = "ce"
    citations = ("winwin",)

    def forward(self, logits, labels, bias_probs=None, teacher_probs=None, difficulty=None):
        loss = F.cross_entropy(logits.float(), labels)
        return loss, {"ce": loss.detach()}
