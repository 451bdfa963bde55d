"""Iterative magnitude pruning with and without weight rewinding (Win-win §3.2.1, appendix A.1.1, Algorithm 1).

Also the fixed-mask training used to fine-tune a found subnetwork in isolation (paradigm b, §4.3).
"""

from __future__ import annotations

import logging
import math
from typing import Any

import torch
from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from ..masking import SRNetModel

logger = logging.getLogger(__name__)


def imp_rounds(target_sparsity: float, prune_ratio: float = 0.1, interval: float = 0.1, *, rewind: bool = False) -> int:
    """k, the number of pruning rounds of Algorithm 1 (s = k·Δs); a clear error for settings it cannot run.

    The rounds fall at 0, Δt, …, (k−1)·Δt (fractions of the run); `imp` then trains Δt more at the target, so
    it needs k·Δt ≤ 1, and `imp-rw` stops right after the k-th round, so it needs (k−1)·Δt ≤ 1. Otherwise the
    run would end below the target sparsity: refuse it and say which sparsity is reachable and which interval
    would reach the target.
    """
    rounds = target_sparsity / prune_ratio if 0 < prune_ratio < 1 else 0.0
    if abs(rounds - round(rounds)) > 1e-6 or round(rounds) < 1:
        raise ValueError(
            f"IMP needs a target sparsity that is a multiple k >= 1 of the pruning ratio: s = {target_sparsity}, "
            f"Δs = {prune_ratio} (e.g. --sparsity 0.5 with --imp_prune_ratio 0.1)."
        )
    if not 0 < interval <= 1:
        raise ValueError(f"The IMP interval is a fraction of the training steps in (0, 1], got {interval}")
    k = round(rounds)
    spans = k - 1 if rewind else k  # intervals of Δt the run must hold
    if spans * interval > 1 + 1e-9:
        fitting = math.floor(1 / interval + 1e-9) + (1 if rewind else 0)  # rounds that fit in the run
        reachable = min(fitting, k - 1) * prune_ratio
        needed = math.floor(1000 / spans) / 1000
        method = "imp-rw" if rewind else "imp"
        timeline = f"(k−1)·Δt = {spans} × {interval}" if rewind else f"k·Δt = {k} × {interval}"
        raise ValueError(
            f"--pruning {method} with --sparsity {target_sparsity} and --imp_prune_ratio {prune_ratio} needs k = {k} "
            f"pruning rounds spaced --imp_interval {interval} of the run apart"
            + ("" if rewind else ", plus one interval of training at the target")
            + f": {timeline} = {spans * interval:.3g} > 1, so the run would stop short of the target. With "
            f"--imp_interval {interval} the largest sparsity reachable is {round(reachable, 6)}; for --sparsity "
            f"{target_sparsity} use --imp_interval {needed} or less."
        )
    return k


class FixedMaskCallback(TrainerCallback):
    """Keep pruned weights exactly 0 after every optimiser step (AdamW momentum would otherwise move them)."""

    def __init__(self, model: SRNetModel) -> None:
        self.model = model

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any):
        self.model.zero_pruned_weights()
        return control


class IMPCallback(FixedMaskCallback):
    """Algorithm 1: every Δt = `interval`·t_max steps (from step 0) prune Δs of each matrix's weights by magnitude.

    - `imp`: once the target s = k·Δs is reached, train Δt more steps and stop: f(m ⊙ θ_t).
    - `imp-rw` (`rewind=True`): stop right after the k-th pruning and rewind every weight to θ_0, the weights
      the run started from: f(m ⊙ θ_0), the lottery-ticket setting.
    """

    def __init__(
        self,
        model: SRNetModel,
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

    def rounds_done(self) -> int:
        """Pruning rounds so far, read off the masks (so a resumed run continues where it stopped)."""
        return round(self.model.sparsity_report()["sparsity"] / self.prune_ratio)

    def steps_needed(self, interval_steps: int) -> int:
        """Optimisation steps the k rounds (and, for imp, the Δt of training at the target) take."""
        return (self.target_rounds - 1 if self.rewind else self.target_rounds) * interval_steps

    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any):
        self.interval_steps = max(1, math.floor(self.interval * state.max_steps))
        if self.steps_needed(self.interval_steps) > state.max_steps:  # a run too short for Δt = 1 step
            raise ValueError(
                f"IMP needs {self.target_rounds} pruning rounds at least {self.interval_steps} step(s) apart, i.e. "
                f"{self.steps_needed(self.interval_steps)} training steps, but the run has {state.max_steps}: it "
                f"would end below the target sparsity. Raise --max_steps (or --num_train_epochs) to at least "
                f"{self.steps_needed(self.interval_steps)}."
            )
        if self.rewind:
            if state.global_step > 0:
                raise ValueError("Resuming imp-rw is not supported: θ_0 is kept in memory. Restart the search.")
            self.initial_state = {k: v.detach().clone() for k, v in self.model.base_model.state_dict().items()}
        if state.global_step == 0:
            self._prune_round(control)
        return control

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any):
        super().on_step_end(args, state, control, **kwargs)
        if state.global_step % self.interval_steps == 0:
            self._prune_round(control)
        return control

    def on_train_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any):
        done = self.rounds_done()
        if done < self.target_rounds:  # stopped early (another callback, an interrupted run)
            logger.warning(
                f"IMP ended after {done} of {self.target_rounds} pruning rounds: the masks are "
                f"{done * self.prune_ratio:.0%} sparse, not the target {self.target_rounds * self.prune_ratio:.0%}."
            )
        return control

    def _prune_round(self, control: TrainerControl) -> None:
        done = self.rounds_done()
        if done >= self.target_rounds:  # imp: the extra Δt of training at the target sparsity is over
            control.should_training_stop = True
            return
        self.model.magnitude_prune((done + 1) * self.prune_ratio)
        if self.rewind and done + 1 >= self.target_rounds:
            with torch.no_grad():
                masks = self.model.binary_masks()
                self.model.base_model.load_state_dict(self.initial_state)
                self.model.set_masks(masks)
                self.model.zero_pruned_weights()
            control.should_training_stop = True
