"""Focal loss with batch-normalised weights, the "Focal" baseline (Du et al. 2023, appendix C; Lin et al. 2017)."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from ..errors import InputError
from .base import DebiasingLoss, register_loss


def focal_weights(logits: torch.Tensor, labels: torch.Tensor, focal_gamma: float) -> torch.Tensor:
    """w_i = (1 − p_i)^γ / ((1/N) Σ_k (1 − p_k)^γ), p_i the softmax probability of the gold class (appendix C).

    Computed in log space as N·softmax_i(γ·log(1 − p_i)), with log(1 − p_i) = logsumexp of the other logits −
    logsumexp of all: finite and differentiable even where p_i rounds to 1 in float32. The weights average to 1.
    """
    logits = logits.float()
    gold = F.one_hot(labels, logits.shape[-1]).bool()
    log_one_minus_p = torch.logsumexp(logits.masked_fill(gold, float("-inf")), -1) - torch.logsumexp(logits, -1)
    return len(labels) * torch.softmax(focal_gamma * log_one_minus_p, dim=0)


@dataclass
class FocalOptions:
    """The setting of `focal` (Du et al. 2023, appendix C), a flag of `run_glue_sparse.py --loss focal`."""

    focal_gamma: float = field(default=2.0, metadata={"help": "focal: γ of (1 - p_c)^γ (paper: 2.0)."})

    def __post_init__(self) -> None:
        if not self.focal_gamma >= 0:
            raise InputError(
                f"--focal_gamma must be >= 0 (the focusing exponent γ; paper: 2.0), got {self.focal_gamma}"
            )
        self.focal_gamma = float(self.focal_gamma)


@register_loss
class FocalLoss(DebiasingLoss):
    """FL_i = −[(1 − p_i)^γ / ((1/N) Σ_k (1 − p_k)^γ)]·log p_i, averaged over the batch of N examples.

    Du et al. 2023 (EACL 2023), appendix C (unnumbered): the focal loss of Lin et al. 2017 (ICCV),
    FL(p_i) = −(1 − p_i)^γ log p_i, with its weights divided by their batch mean so that they average to 1:
    confident (easy) examples get weights below 1, hard ones above. p_i is the student's probability of the gold
    class, γ = `focal_gamma` (2.0 in the paper); γ = 0 gives cross-entropy. The formula is implemented as written:
    gradients flow through the weights and their normalisation too, not only through log p_i. The weights are
    computed in log space (`focal_weights`); γ is `FocalOptions.focal_gamma`. Logs `focal`, `ce` and the largest weight
    `max_weight`.
    """

    name = "focal"
    options_class = FocalOptions
    citations = ("rmc", "focal")
    focal_gamma: float

    def forward(self, logits: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        ce = F.cross_entropy(logits, labels, reduction="none")  # −log p_i
        weights = focal_weights(logits, labels, self.focal_gamma)
        loss = (weights * ce).mean()
        return loss, {"focal": loss.detach(), "max_weight": weights.max().detach()}
