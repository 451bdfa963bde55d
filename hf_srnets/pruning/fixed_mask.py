"""Training the weights under fixed masks: pruned weights stay exactly 0 (IMP, Algorithm 1; paradigm b, §4.3)."""

from __future__ import annotations

from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from .masked_model import MaskedModel
from .sharding import full_parameters


class FixedMaskCallback(TrainerCallback):
    """Keep pruned weights exactly 0 after every optimiser step (AdamW momentum would otherwise move them).

    `model` is the `MaskedModel` (an `SRNetModel`) whose masks are fixed.
    """

    def __init__(self, model: MaskedModel) -> None:
        self.model = model

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any):
        with full_parameters(self.model):
            self.model.zero_pruned_weights()
        return control
