"""The controller of IMP: pruning rounds, rewinding and the stop at the target (Win-win Algorithm 1)."""

from __future__ import annotations

import logging
from typing import Any

import torch
from transformers import TrainerControl, TrainerState, TrainingArguments

from ...errors import InputError
from ..fixed_mask import FixedMaskCallback
from ..magnitude_masks import magnitude_prune
from ..masked_model import MaskedModel
from ..schedule import interval_in_steps, is_round_step, staircase_rounds, staircase_value
from ..sharding import copy_state, full_parameters
from .rounds import imp_rounds

logger = logging.getLogger(__name__)


class IMPCallback(FixedMaskCallback):
    """Algorithm 1: every Δt = `interval`·t_max steps (from step 0) prune Δs of each matrix's weights by magnitude.

    - `imp`: once the target s = k·Δs is reached, train Δt more steps and stop: f(m ⊙ θ_t).
    - `imp-rw` (`rewind=True`): stop right after the k-th pruning and rewind every weight to θ_0, the weights
      the run started from: f(m ⊙ θ_0), the lottery-ticket setting.
    """

    def __init__(
        self,
        model: MaskedModel,
        target_sparsity: float,
        prune_ratio: float = 0.1,
        interval: float = 0.1,
        rewind: bool = False,
    ) -> None:
        super().__init__(model)
        self.target_rounds = imp_rounds(target_sparsity, prune_ratio, interval, rewind=rewind)
        self.prune_ratio = prune_ratio
        self.interval = interval
        self.rewind = rewind
        self.interval_steps = 1
        self.initial_state: dict[str, torch.Tensor] | None = None
        self.unit_rounds = 0  # rounds done, counted by step (structured granularities)

    def rounds_done(self) -> int:
        """Pruning rounds so far, read off the masks (so a resumed run continues where it stopped).

        At a structured `mask_granularity` the masks cannot tell (⌊k·Δs·n⌋ units may be equal for two rounds k
        when a group has few units, e.g. 12 heads), so the rounds are counted from the step: rounds fall at steps
        0, Δt, 2Δt, …, so after step t (its round included) min(⌊t/Δt⌋ + 1, k) rounds are done
        (`hf_srnets.pruning.schedule.staircase_rounds`).
        """
        if self.model.srnet_config.structured:
            return self.unit_rounds
        return round(self.model.sparsity_report()["sparsity"] / self.prune_ratio)

    def steps_needed(self, interval_steps: int) -> int:
        """Optimisation steps the k rounds (and, for imp, the Δt of training at the target) take."""
        return (self.target_rounds - 1 if self.rewind else self.target_rounds) * interval_steps

    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any):
        self.interval_steps = interval_in_steps(self.interval, state.max_steps)
        if self.steps_needed(self.interval_steps) > state.max_steps:  # a run too short for Δt = 1 step
            raise InputError(
                f"IMP needs {self.target_rounds} pruning rounds at least {self.interval_steps} step(s) apart, i.e. "
                f"{self.steps_needed(self.interval_steps)} training steps, but the run has {state.max_steps}: it "
                f"would end below the target sparsity. Raise --max_steps (or --num_train_epochs) to at least "
                f"{self.steps_needed(self.interval_steps)}."
            )
        if self.rewind:
            if state.global_step > 0:
                raise ValueError("Resuming imp-rw is not supported: θ_0 is kept in memory. Restart the search.")
            with full_parameters(self.model):
                self.initial_state = {k: v.detach().clone() for k, v in self.model.base_model.state_dict().items()}
        if state.global_step > 0:  # resumed: the rounds at steps 0, Δt, … up to global_step are done
            self.unit_rounds = staircase_rounds(state.global_step, self.interval_steps, self.target_rounds)
        else:
            self._prune_round(control)
        return control

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any):
        super().on_step_end(args, state, control, **kwargs)
        if is_round_step(state.global_step, self.interval_steps):
            self._prune_round(control)
        return control

    def on_train_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any):
        with full_parameters(self.model):  # the masks (ZeRO-3: partitioned outside the forward)
            done = self.rounds_done()
        if done < self.target_rounds:  # stopped early (another callback, an interrupted run)
            logger.warning(
                f"IMP ended after {done} of {self.target_rounds} pruning rounds: the masks are "
                f"{staircase_value(done, self.prune_ratio):.0%} sparse, not the target "
                f"{staircase_value(self.target_rounds, self.prune_ratio):.0%}."
            )
        return control

    def _prune_round(self, control: TrainerControl) -> None:
        with full_parameters(self.model):  # every shard's weights (FSDP)
            self._prune_whole_round(control)

    def _prune_whole_round(self, control: TrainerControl) -> None:
        done = self.rounds_done()
        if done >= self.target_rounds:  # imp: the extra Δt of training at the target sparsity is over
            control.should_training_stop = True
            return
        magnitude_prune(self.model, staircase_value(done + 1, self.prune_ratio))
        self.unit_rounds = done + 1
        if self.rewind and done + 1 >= self.target_rounds:
            with torch.no_grad():
                masks = self.model.binary_masks()
                copy_state(self.model.base_model, self.initial_state)
                self.model.set_masks(masks)
                self.model.zero_pruned_weights()
            control.should_training_stop = True
