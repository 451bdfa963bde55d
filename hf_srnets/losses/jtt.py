"""Just Train Twice: up-weight the examples an ERM model got wrong (Du et al. 2023, appendix C; Liu et al. 2021)."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from ..errors import InputError
from .base import DebiasingLoss, register_loss


@dataclass
class JTTOptions:
    """The setting of `jtt` (Du et al. 2023, appendix C), a flag of `run_glue_sparse.py --loss jtt`."""

    jtt_upweight: float = field(
        default=2.0, metadata={"help": "jtt: λ_up, the weight of the examples the ERM model got wrong (paper: 2.0)."}
    )

    def __post_init__(self) -> None:
        if not self.jtt_upweight > 0:
            raise InputError(
                f"--jtt_upweight must be > 0 (λ_up of the ERM errors; paper: 2.0), got {self.jtt_upweight}"
            )
        self.jtt_upweight = float(self.jtt_upweight)


@register_loss
class JTTLoss(DebiasingLoss):
    """L_jtt = (1/N) Σ_i w_i·CE_i,  w_i = u_i / ((1/N) Σ_k u_k),  u_i = λ_up if argmax p_erm,i ≠ y_i else 1.

    The "JTT" baseline of Du et al. 2023 (EACL 2023), appendix C (unnumbered), after Liu et al. 2021 (ICML, "Just
    Train Twice"): a first, ERM (cross-entropy) model's errors on the training set are up-weighted by λ_up =
    `jtt_upweight` (2.0 in the paper; `JTTOptions`) and the weights normalised to mean 1 within the batch of N examples.
    p_erm is read from the `teacher_probs` column: pass the ERM model's training-set predictions with
    `--teacher_predictions` (written by `--write_train_predictions`). With no errors in the batch, or λ_up = 1,
    the loss is cross-entropy. Logs `jtt`, `ce` and the batch's ERM `error_fraction`.
    """

    name = "jtt"
    requires = ("teacher_probs",)
    options_class = JTTOptions
    citations = ("rmc", "jtt")
    jtt_upweight: float

    def forward(
        self, logits: torch.Tensor, labels: torch.Tensor, teacher_probs: torch.Tensor
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        ce = F.cross_entropy(logits, labels, reduction="none")
        wrong = teacher_probs.argmax(dim=-1) != labels
        upweights = torch.where(wrong, self.jtt_upweight, 1.0).to(ce.dtype)
        loss = (upweights / upweights.mean() * ce).mean()
        return loss, {"jtt": loss.detach(), "error_fraction": wrong.float().mean()}
