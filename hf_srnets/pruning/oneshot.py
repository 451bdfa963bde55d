"""The controller of one-shot pruning: masks chosen once, from the starting weights, before any update.

A Trainer always takes at least one optimisation step, so `OneShotCallback` chooses the masks at `on_train_begin`
(from the first training batches when the method calibrates), keeps the starting weights θ_0, and after the first
step puts θ_0 back under the masks and stops: the run's model is m ⊙ θ_0, no weight retrained (the one-shot
baselines of the LLM-pruning tools). The masks are recorded as belonging to θ_0, the base model.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

import torch
from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from .masked_model import MaskedModel
from .sharding import copy_state, full_parameters

logger = logging.getLogger(__name__)

# chooses the masks (module name -> bool keep-mask) of a model from the training batches; called with the model's
# parameters as they are (sharded under FSDP): a chooser gathers what it reads (`sharding.full_parameters`)
MaskChooser = Callable[[MaskedModel, Iterable[Any]], dict[str, torch.Tensor]]


def keep_all(srnet: MaskedModel) -> dict[str, Any]:
    """Set every mask to keep all weights (the dense model calibrates); the masked layers by name."""
    layers = srnet.masked_layers()
    with full_parameters(srnet):
        srnet.set_masks(
            {name: torch.ones_like(lay.base_layer.weight, dtype=torch.bool) for name, lay in layers.items()}
        )
    return layers


class OneShotCallback(TrainerCallback):
    """Masks from `choose(model, train_dataloader)` at step 0; θ_0 restored after the one step; training stops."""

    def __init__(self, model: MaskedModel, choose: MaskChooser) -> None:
        self.model = model
        self.choose = choose
        self.initial_state: dict[str, torch.Tensor] | None = None

    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any):
        if state.global_step > 0:
            raise ValueError("Resuming a one-shot run is not supported: θ_0 is kept in memory. Restart the run.")
        base = self.model.base_model
        was_training = base.training
        base.eval()
        try:
            with torch.no_grad():
                masks = self.choose(self.model, kwargs.get("train_dataloader") or [])
        finally:
            base.train(was_training)
        with full_parameters(self.model):
            self.model.set_masks(masks)
            self.model.zero_pruned_weights()
            self.initial_state = {k: v.detach().clone() for k, v in base.state_dict().items()}
            sparsity = self.model.sparsity_report()["sparsity"]
        control.should_training_stop = True
        logger.info(f"one-shot masks set: sparsity {sparsity:.4f}; no retraining")
        return control

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any):
        if self.initial_state is not None:
            with full_parameters(self.model):
                copy_state(self.model.base_model, self.initial_state)
        control.should_training_stop = True
        return control
