"""Base class and registry of the debiasing losses (Win-win §3.3, appendix A.2)."""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from torch import nn

PROB_EPS = 1e-12  # bias/teacher probabilities are clipped to this before the log


class DebiasingLoss(nn.Module):
    """A classification loss that may use the bias model's p_b and/or a teacher's p_t per example.

    Subclasses set `requires` (the dataset columns they need, among `"bias_probs"` and
    `"teacher_probs"`) and implement `forward`, returning the batch-mean loss and a dict of scalar
    components to log.
    """

    name: ClassVar[str] = ""
    requires: ClassVar[tuple[str, ...]] = ()

    def forward(
        self,
        logits: torch.Tensor,
        labels: torch.Tensor,
        bias_probs: torch.Tensor | None = None,
        teacher_probs: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        raise NotImplementedError

    def get_config_dict(self) -> dict[str, Any]:
        return {"loss": self.name}

    def _check(self, logits: torch.Tensor, **columns: torch.Tensor | None) -> None:
        for column in self.requires:
            value = columns.get(column)
            if value is None:
                raise ValueError(
                    f"The {self.name!r} loss needs the {column!r} column; pass "
                    f"--{'bias_predictions' if column == 'bias_probs' else 'teacher_predictions'} FILE."
                )
            if value.shape != logits.shape:
                raise ValueError(
                    f"{column} has shape {tuple(value.shape)} but the logits have {tuple(logits.shape)}: "
                    "the predictions were made for a task with another number of labels."
                )


LOSSES: dict[str, type[DebiasingLoss]] = {}


def register_loss(cls: type[DebiasingLoss]) -> type[DebiasingLoss]:
    """Class decorator: make a loss available by its `name` (e.g. `--loss poe`)."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} needs a non-empty `name`")
    if cls.name in LOSSES and LOSSES[cls.name] is not cls:
        raise ValueError(f"A loss named {cls.name!r} is already registered ({LOSSES[cls.name].__name__})")
    LOSSES[cls.name] = cls
    return cls


def get_loss(name: str, **kwargs: Any) -> DebiasingLoss:
    """Instantiate a registered loss by name."""
    if name not in LOSSES:
        raise ValueError(f"Unknown loss {name!r}; available: {sorted(LOSSES)}")
    return LOSSES[name](**kwargs)


def safe_log(probs: torch.Tensor) -> torch.Tensor:
    return torch.log(probs.clamp_min(PROB_EPS))
