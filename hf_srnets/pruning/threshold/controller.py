"""The controller of mask training: threshold updates on the sparsity schedule (Algorithm 2, lines 14-16)."""

from __future__ import annotations

from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments
from transformers.utils import logging

from ..masked_model import MaskedModel
from ..sharding import full_parameters
from .schedules import sparsity_at
from .thresholds import update_thresholds

logger = logging.get_logger(__name__)


class MaskThresholdCallback(TrainerCallback):
    """Every Δt_φ steps, recompute φ so each matrix has exactly ⌊s_t·n⌋ zeros (Algorithm 2, lines 14-16).

    s_t follows the model's sparsity schedule (constant, or cubic from s_i to s). φ is also recomputed right
    before every evaluation and checkpoint save the Trainer is about to make (`on_step_end` and `on_epoch_end`
    run before `_maybe_log_save_evaluate`), so the mask that is evaluated, selected as best and saved is one and
    the same, at the exact scheduled sparsity, even when evaluations fall between two Δt_φ updates.

    At the end of training φ is set for the final target sparsity, unless the best checkpoint was loaded
    (`load_best_model_at_end`): its mask is the one that won selection and stays as it is. The schedule
    depends only on `state.global_step`, so a resumed run continues where it stopped. `model` is the
    `SRNetModel` whose masks train.
    """

    def __init__(self, model: MaskedModel) -> None:
        self.model = model

    def target_sparsity(self, state: TrainerState) -> float:
        return sparsity_at(state.global_step, state.max_steps, self.model.srnet_config)

    def _update(self, sparsity: float) -> None:
        with full_parameters(self.model):  # every shard's scores (FSDP)
            update_thresholds(self.model, sparsity)

    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any):
        interval = self.model.srnet_config.update_interval
        if interval >= state.max_steps:
            # Table 4's Δt_φ (1,000 steps) assumes ~60k steps; in a short run φ would only be set at the end
            logger.warning(
                f"threshold_update_interval = {interval} steps is not shorter than the run's {state.max_steps} "
                "steps, so φ is never recomputed during training and the sparsity the masks train at drifts from "
                "the target until the final update. Set --threshold_update_interval to a fraction of the run "
                "(e.g. max_steps / 8)."
            )
        return control

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any):
        # runs after DefaultFlowCallback.on_step_end, so control says whether this step evaluates or saves
        due = state.global_step % self.model.srnet_config.update_interval == 0
        if due or control.should_evaluate or control.should_save:
            self._update(self.target_sparsity(state))
        return control

    def on_epoch_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any):
        if control.should_evaluate or control.should_save:  # epoch eval/save strategies
            self._update(self.target_sparsity(state))
        return control

    def on_train_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any):
        if args.load_best_model_at_end and state.best_model_checkpoint is not None:
            logger.info(f"Keeping the mask of the best checkpoint {state.best_model_checkpoint} as loaded")
            return control
        self._update(self.model.srnet_config.sparsity)
        return control
