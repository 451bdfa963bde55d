"""Base class and registry of the debiasing losses (Win-win §3.3, appendix A.2)."""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from torch import nn

PROB_EPS = 1e-12  # bias/teacher probabilities are clipped to this before the log


class DebiasingLoss(nn.Module):
    """A classification loss that may use the bias model's p_b and/or a teacher's p_t per example.

    Subclasses set `name` (the `--loss` value), `requires` (the dataset columns they need, among
    `"bias_probs"`, `"teacher_probs"` and `"difficulty"`), `options` (the `SRNetTrainingArguments` fields their
    constructor takes, e.g. `distil_lambda`) and `citations` (BibTeX keys of `hf_srnets.resources.citations.BIBTEX`: the
    papers that define the formula), and implement `forward`, returning the batch-mean loss and a dict of scalar
    components to log. Notation of Win-win §3.3: p_m the main model's softmax, y the one-hot gold label of class
    c, p_b the bias model's probabilities, β = p_b^c the bias degree, p_t a teacher's softmax; d_i the sample
    difficulty of RMC (Du et al. 2023, Eq. 1), one value per example.
    `hf_srnets.objectives.LossObjective` runs a loss inside the trainer.
    """

    name: ClassVar[str] = ""
    requires: ClassVar[tuple[str, ...]] = ()
    options: ClassVar[tuple[str, ...]] = ()
    citations: ClassVar[tuple[str, ...]] = ("winwin",)

    def forward(
        self,
        logits: torch.Tensor,
        labels: torch.Tensor,
        bias_probs: torch.Tensor | None = None,
        teacher_probs: torch.Tensor | None = None,
        difficulty: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        raise NotImplementedError

    def get_config_dict(self) -> dict[str, Any]:
        """What the model card records of this loss: its name, the columns it reads and its options' values."""
        config: dict[str, Any] = {"loss": self.name, "requires": list(self.requires)}
        config.update({option: getattr(self, option) for option in self.options if hasattr(self, option)})
        return config

    def _check(self, logits: torch.Tensor, **columns: torch.Tensor | None) -> None:
        for column in self.requires:
            value = columns.get(column)
            if value is None:
                raise ValueError(
                    f"The {self.name!r} loss needs the {column!r} column; pass --{COLUMN_FLAGS[column]} FILE."
                )
            if column == "difficulty":
                if value.shape != logits.shape[:1]:
                    raise ValueError(f"difficulty has shape {tuple(value.shape)}: one value per example expected")
                continue
            if value.shape != logits.shape:
                raise ValueError(
                    f"{column} has shape {tuple(value.shape)} but the logits have {tuple(logits.shape)}: "
                    "the predictions were made for a task with another number of labels."
                )


# the run_glue_sparse.py flag that gives each column
COLUMN_FLAGS = {
    "bias_probs": "bias_predictions",
    "teacher_probs": "teacher_predictions",
    "difficulty": "sample_difficulty",
}

LOSSES: dict[str, type[DebiasingLoss]] = {}


def register_loss(cls: type[DebiasingLoss]) -> type[DebiasingLoss]:
    """Class decorator: make a loss available by its `name` (e.g. `--loss poe`)."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} needs a non-empty `name`")
    from ..registry import register

    return register(LOSSES, cls.name, cls, "loss")


def get_loss(name: str, **kwargs: Any) -> DebiasingLoss:
    """Instantiate a registered loss by name."""
    if name not in LOSSES:
        raise ValueError(f"Unknown loss {name!r}; available: {sorted(LOSSES)}")
    return LOSSES[name](**kwargs)


def safe_log(probs: torch.Tensor) -> torch.Tensor:
    """log(max(p, PROB_EPS)): a zero probability in a predictions file gives a finite log."""
    return torch.log(probs.clamp_min(PROB_EPS))
