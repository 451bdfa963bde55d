"""Just Train Twice: up-weight the examples an ERM model got wrong (Du et al. 2023, appendix C; Liu et al. 2021)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .base import DebiasingLoss, register_loss


@register_loss
class JTTLoss(DebiasingLoss):
    """L_jtt = (1/N) Σ_i w_i·CE_i,  w_i = u_i / ((1/N) Σ_k u_k),  u_i = λ_up if argmax p_erm,i ≠ y_i else 1.

    The "JTT" baseline of Du et al. 2023 (EACL 2023), appendix C (unnumbered), after Liu et al. 2021 (ICML, "Just
    Train Twice"): a first, ERM (cross-entropy) model's errors on the training set are up-weighted by λ_up =
    `jtt_upweight` (2.0 in the paper) and the weights normalised to mean 1 within the batch of N examples.
    p_erm is read from the `teacher_probs` column: pass the ERM model's training-set predictions with
    `--teacher_predictions` (written by `--write_train_predictions`). With no errors in the batch, or λ_up = 1,
    the loss is cross-entropy. Logs `jtt`, `ce` and the batch's ERM `error_fraction`.
    """

    name = "jtt"
    requires = ("teacher_probs",)
    options = ("jtt_upweight",)
    citations = ("rmc", "jtt")

    def __init__(self, jtt_upweight: float = 2.0) -> None:
        super().__init__()
        if not jtt_upweight > 0:
            raise ValueError(f"--jtt_upweight must be > 0 (λ_up of the ERM errors; paper: 2.0), got {jtt_upweight}")
        self.jtt_upweight = float(jtt_upweight)

    def forward(self, logits, labels, bias_probs=None, teacher_probs=None, difficulty=None):
        self._check(logits, teacher_probs=teacher_probs)
        ce = F.cross_entropy(logits.float(), labels, reduction="none")
        wrong = teacher_probs.argmax(dim=-1) != labels
        upweights = torch.where(wrong, self.jtt_upweight, 1.0).to(ce.dtype)
        loss = (upweights / upweights.mean() * ce).mean()
        return loss, {"jtt": loss.detach(), "ce": ce.mean().detach(), "error_fraction": wrong.float().mean()}
