"""`LossObjective`: a debiasing loss (`hf_srnets.losses`) run on the model's logits, as a training objective."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ..data.example_columns import EXAMPLE_COLUMNS
from ..losses import DebiasingLoss
from .base import Objective


def split_batch(
    inputs: dict[str, Any], requires: tuple[str, ...] = ()
) -> tuple[dict[str, Any], torch.Tensor, dict[str, Any]]:
    """A batch as (the model's inputs, the labels, the per-example columns): every registered column
    (`EXAMPLE_COLUMNS`) and those in `requires` are taken out, None where absent. `inputs` is not modified."""
    inputs = dict(inputs)
    labels = inputs.pop("labels", None)
    if labels is None:
        raise ValueError("SRNetTrainer needs a 'label' column in the dataset")
    names = dict.fromkeys((*EXAMPLE_COLUMNS, *requires))  # each once
    return inputs, labels, {c: inputs.pop(c, None) for c in names}


class LossObjective(Objective):
    """L = loss(logits, y, **columns) of a `DebiasingLoss`, whose docstring gives the formula and citation.

    `compute_loss` takes `labels` and the per-example columns (every registered one,
    `hf_srnets.data.example_columns.EXAMPLE_COLUMNS`, and any other the loss `requires`) out of the batch, runs the
    model on the rest and applies the loss to the columns it `requires`, only those. Evaluation batches that lack a
    column the loss needs (ID dev and OOD sets carry no bias predictions) report plain cross-entropy, −y·log p_m,
    with no components.
    The batch dict passed in is not modified, so a step-level objective may call this several times.
    """

    name = "loss"

    def __init__(self, loss: DebiasingLoss) -> None:
        self.loss = loss

    @property
    def requires(self) -> tuple[str, ...]:
        return tuple(self.loss.requires)

    @property
    def citations(self) -> tuple[str, ...]:
        return tuple(self.loss.citations)

    def compute_loss(
        self, model: nn.Module, inputs: dict[str, Any], *, training: bool
    ) -> tuple[torch.Tensor, Any, dict[str, torch.Tensor]]:
        inputs, labels, popped = split_batch(inputs, self.loss.requires)
        required = {c: popped[c] for c in self.loss.requires}
        outputs = model(**inputs)
        logits = outputs["logits"] if isinstance(outputs, dict) else outputs[0]
        if training or all(value is not None for value in required.values()):
            loss, components = self.loss(logits, labels, **required)
        else:  # evaluation sets carry no bias predictions: report cross-entropy there
            loss, components = F.cross_entropy(logits.float(), labels), {}
        return loss, outputs, components

    def get_config_dict(self) -> dict[str, Any]:
        return self.loss.get_config_dict()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.loss.name!r})"
