"""Knowledge distillation on a teacher's probabilities (Du et al. 2023, Eq. 2-3; Hinton et al. 2015).

Holds the two pieces the compression losses share: the smoothing of the teacher's softmax by a degree d
(`smoothed_teacher`, Eq. 2) and the combination of cross-entropy with the KL term (`distillation_loss`, Eq. 3).
`distil`, `smooth` and `rmc` differ only in the degree they pass: 1, one global d, or each example's d_i.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from ..errors import InputError
from .base import DebiasingLoss, register_loss, safe_log


def smoothed_teacher(teacher_probs: torch.Tensor, degree: torch.Tensor | float) -> torch.Tensor:
    """s_ij = (p_t,ij)^{d_i} / Σ_k (p_t,ik)^{d_i}  (Du et al. 2023, Eq. 2), computed in log space.

    `degree` is one d for every example (a float, the `smooth` baseline) or a tensor with one d_i per example
    (RMC). d = 1 leaves p_t unchanged; d → 0 flattens it towards uniform. Zero probabilities are clipped to
    `PROB_EPS` before the log, so the result is finite.
    """
    degree = torch.as_tensor(degree, dtype=torch.float32, device=teacher_probs.device)
    scale = degree[:, None] if degree.dim() == 1 else degree
    return torch.softmax(scale * safe_log(teacher_probs.float()), dim=-1)


def distillation_loss(
    logits: torch.Tensor, labels: torch.Tensor, target: torch.Tensor, distil_lambda: float
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """L = (1 − λ)·CE(y, p_S) + λ·KL(s ‖ p_S)  (Du et al. 2023, Eq. 3), averaged over the batch.

    p_S = softmax(logits) is the student (compressed model), s the (smoothed) teacher target, λ = `distil_lambda`.
    Only the student receives gradients. Returns the loss and its detached batch-mean `kl` (the
    loss logs `ce`, as every loss does).
    """
    log_ps = F.log_softmax(logits, dim=-1)
    ce = F.nll_loss(log_ps, labels, reduction="none")
    kl = F.kl_div(log_ps, target.detach(), reduction="none").sum(-1)  # Σ_j s_j (log s_j − log p_S,j)
    loss = ((1.0 - distil_lambda) * ce + distil_lambda * kl).mean()
    return loss, {"kl": kl.mean().detach()}


def check_distil_lambda(distil_lambda: float) -> float:
    """λ of Eq. 3 must be in [0, 1]; the error names the flag."""
    if not 0.0 <= distil_lambda <= 1.0:
        raise InputError(f"--distil_lambda must be in [0, 1] (Eq. 3's λ; paper: 0.9), got {distil_lambda}")
    return float(distil_lambda)


@dataclass
class DistillationOptions:
    """The settings of `distil` and `rmc` (Du et al. 2023, Eq. 3), each a flag of `run_glue_sparse.py --loss`."""

    distil_lambda: float = field(
        default=0.9,
        metadata={"help": "λ of RMC Eq. 3: (1-λ)·CE + λ·KL(target ‖ p_student), for distil/smooth/rmc (paper: 0.9)."},
    )

    def __post_init__(self) -> None:
        self.distil_lambda = check_distil_lambda(self.distil_lambda)


@register_loss
class DistillationLoss(DebiasingLoss):
    """L_distil = (1 − λ)·CE(y, p_S) + λ·KL(p_t ‖ p_S), the unsmoothed teacher in Eq. 3.

    The "Distil" baseline of Du et al. 2023 (§6.2, appendix C; EACL 2023), task-specific knowledge distillation
    after Hinton et al. 2015: Eq. 3 with s = p_t, i.e. Eq. 2 with d_i = 1. p_t is a fine-tuned teacher's softmax
    on the training set (the `teacher_probs` column, `--teacher_predictions`). λ = `distil_lambda` (0.9 in all
    the paper's experiments; `DistillationOptions`); λ = 0 gives cross-entropy. Logs `distil`, `ce` and `kl`.
    """

    name = "distil"
    requires = ("teacher_probs",)
    options_class = DistillationOptions
    citations = ("rmc", "hinton")
    distil_lambda: float

    def degree(self, difficulty: torch.Tensor | None) -> torch.Tensor | float:
        """d of Eq. 2 for the batch: 1 here (p_t itself, renormalised and with zeros clipped); `smooth` and `rmc`
        override it."""
        return 1.0

    def distil(
        self, logits: torch.Tensor, labels: torch.Tensor, teacher_probs: torch.Tensor, difficulty: torch.Tensor | None
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """Eq. 3 on the teacher smoothed by Eq. 2 with `degree(difficulty)`; the loss and its logged parts."""
        target = smoothed_teacher(teacher_probs, self.degree(difficulty))
        loss, parts = distillation_loss(logits, labels, target, self.distil_lambda)
        return loss, {self.name: loss.detach(), **parts}

    def forward(
        self, logits: torch.Tensor, labels: torch.Tensor, teacher_probs: torch.Tensor
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        return self.distil(logits, labels, teacher_probs, None)
