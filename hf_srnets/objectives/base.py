"""The `Objective` interface: what the trainer asks of a training objective.

A debiasing loss (`hf_srnets.losses`) sees logits and probability columns only; an objective sees the model and
the batch, so it can run the forward pass itself (`LossObjective`), or the whole training step with several
forward/backward passes (`StepObjective`: adversarial training such as FreeLB, Zhu et al. 2020).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import torch
from torch import nn

if TYPE_CHECKING:
    from transformers import Trainer


class Objective:
    """A training objective, called by `SRNetTrainer.compute_loss` and `SRNetTrainer.training_step`.

    - `compute_loss(model, inputs, training=...)` runs the model on a batch and returns
      `(loss, outputs, components)`: the batch-mean loss, the model outputs (for prediction) and the scalar
      components to log (as `loss_<key>`, averaged over the logging interval).
    - `training_step(trainer, model, inputs, num_items_in_batch)` returns None to let the `Trainer` run its own
      step (one forward and backward through `compute_loss`), or runs the step itself and returns the
      detached loss to report.
    - `requires` names the dataset columns the objective reads (kept through the Trainer's column pruning),
      `citations` the BibTeX keys of `hf_srnets.resources.citations.BIBTEX` that define it, and `get_config_dict()` the
      settings the model card records.

    Subclasses document their formula with its equation number and citation in their docstring.
    """

    name: ClassVar[str] = ""

    @property
    def requires(self) -> tuple[str, ...]:
        """Dataset columns this objective reads besides the model inputs and `label`."""
        return ()

    @property
    def citations(self) -> tuple[str, ...]:
        """BibTeX keys (of `hf_srnets.resources.citations.BIBTEX`) of the papers that define this objective."""
        return ()

    def compute_loss(
        self, model: nn.Module, inputs: dict[str, Any], *, training: bool
    ) -> tuple[torch.Tensor, Any, dict[str, torch.Tensor]]:
        """The loss of `model` on the batch `inputs`, the model outputs and the loss components to log."""
        raise NotImplementedError

    def training_step(
        self, trainer: Trainer, model: nn.Module, inputs: dict[str, Any], num_items_in_batch: Any
    ) -> torch.Tensor | None:
        """Run a whole training step and return its detached loss, or None for the Trainer's own step."""
        return None

    def check_model(self, model: nn.Module) -> None:
        """Raise `InputError` before the first step when this objective cannot train `model` as it is set up."""

    def get_config_dict(self) -> dict[str, Any]:
        """The settings of this objective, for the model card."""
        return {"objective": self.name}
