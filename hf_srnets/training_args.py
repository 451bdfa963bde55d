"""`SRNetTrainingArguments`: `TrainingArguments` plus the debiasing loss and SRNet search options."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from transformers import TrainingArguments

from .losses import LOSSES


@dataclass
class SRNetTrainingArguments(TrainingArguments):
    """Training arguments for SRNet search and debiased fine-tuning.

    Parameters that control the loss:
        loss: Name of a registered loss: `ce`, `poe`, `reweight` or `confreg` (Win-win §3.3, appendix A.2).
            `poe` and `reweight` need bias predictions; `confreg` needs bias and teacher predictions.

    Parameters that control the mask search:
        mask_learning_rate: Learning rate of the mask scores m̂. `None` uses `learning_rate` (the paper uses
            the same rate, appendix Table 3); short CPU runs need a larger one (the scores must travel
            about α·φ − φ = 0.01 to flip a hard-initialised mask).
        select_best_after: Only checkpoints after this fraction of the training steps may be selected as
            best (still by `metric_for_best_model`). Appendix B.3.3 uses 0.7 when searching on a fine-tuned
            model. With a cubic sparsity schedule, selection also waits until the target sparsity is reached.

    Defaults that differ from `TrainingArguments`: `learning_rate=5e-5` is the same; `remove_unused_columns`
    keeps the probability columns the losses need (see `SRNetTrainer`).
    """

    loss: str = field(default="ce", metadata={"help": f"Training loss, one of {sorted(LOSSES)}."})
    mask_learning_rate: float | None = field(
        default=None, metadata={"help": "Learning rate of the mask scores; defaults to --learning_rate."}
    )
    select_best_after: float = field(
        default=0.0,
        metadata={
            "help": "Fraction of training after which checkpoints may be chosen as best (0.7 in the paper "
            "when searching on a fine-tuned model)."
        },
    )

    def __post_init__(self) -> None:
        if self.use_cpu or not (torch.cuda.is_available() or torch.backends.mps.is_available()):
            self.dataloader_pin_memory = False  # pinning needs an accelerator; avoid torch's warning on CPU
        super().__post_init__()
        if self.loss not in LOSSES:
            raise ValueError(f"--loss {self.loss!r} is unknown; choose one of {sorted(LOSSES)}")
        if not 0.0 <= self.select_best_after < 1.0:
            raise ValueError(f"--select_best_after must be in [0, 1), got {self.select_best_after}")
        if self.mask_learning_rate is not None and self.mask_learning_rate <= 0:
            raise ValueError(f"--mask_learning_rate must be > 0, got {self.mask_learning_rate}")
