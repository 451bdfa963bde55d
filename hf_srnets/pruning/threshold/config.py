"""Options of mask training (Win-win §3.2.2, appendix A.1.2 and Table 4)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from ...errors import InputError
from ..base import PruningConfig

DEFAULT_UPDATE_INTERVAL = 1000  # Table 4's Δt_φ when no evaluation interval gives one


@dataclass
class ThresholdConfig(PruningConfig):
    """Mask training: learned scores m̂, binarised at a threshold φ (Algorithm 2).

    The common fields (targets, `sparsity` s, `sparsity_scope`, `trainable_classifier`, what the masks belong
    to) are `PruningConfig`'s. The mask search (Algorithm 2, Table 4):
        initial_sparsity: Starting sparsity s_i of the cubic schedule; `None` keeps s fixed throughout.
        sparsity_schedule: `"constant"` (the paper's default) or `"cubic"` (Zhu & Gupta 2018; §5.2). The
            command line turns it to cubic when s_i is given.
        schedule_start / schedule_end: Fractions of t_max where the cubic ramp starts and reaches s.
        mask_init: `"hard"` (appendix Eq. 1) or `"soft"` (appendix Eq. 2).
        alpha: α of Eq. 1; kept scores start at α·φ.
        init_threshold: φ at start for the hard init (0.01 in Table 4).
        threshold_update_interval: Δt_φ, steps between threshold updates (Table 4: the eval interval). `None`:
            `--eval_steps` when evaluating by steps, else 1000 (`prepare_config`; 1000 when never prepared).

    Weights that move (off by default: the paper's masks search over frozen weights):
        train_weights: Train every weight of the model together with the scores. The straight-through scores then
            receive ∂L/∂m̂ = Σ (∂L/∂W_eff)·W over weights that change, which is movement pruning's score update
            (Sanh et al. 2020, §3); at the unit granularities the kept units take over the removed ones' work
            (nn_pruning, Lagunas et al. 2021; CoFi, Xia et al. 2022). The masks alone then no longer rebuild the
            model: the saved masks carry the trained weights, and `--step_objective dense_distil` needs
            `--teacher_model` (the dense model can no longer be read from the base weights).
        weight_learning_rate: The weights' learning rate when `train_weights`; `None`: `--learning_rate`.
    """

    _argument_group_name: ClassVar[str] = "Pruning method threshold (--pruning threshold or mask)"

    initial_sparsity: float | None = field(
        default=None, metadata={"help": "Start sparsity s_i: enables the cubic schedule s_i -> s (§5.2: 0.7 -> 0.9)."}
    )
    sparsity_schedule: Literal["constant", "cubic"] = field(
        default="constant", metadata={"help": "constant, or cubic (set by --initial_sparsity)."}
    )
    schedule_start: float = field(default=0.0, metadata={"help": "Fraction of training where the cubic ramp starts."})
    schedule_end: float = field(default=0.8, metadata={"help": "Fraction of training where the cubic ramp ends."})
    mask_init: Literal["hard", "soft"] = field(
        default="hard", metadata={"help": "hard (appendix Eq. 1) or soft (Eq. 2)."}
    )
    alpha: float = field(
        default=2.0, metadata={"help": "α of the hard init (Table 4: 2).", "aliases": ["--mask_alpha"]}
    )
    init_threshold: float = field(
        default=0.01, metadata={"help": "φ of the hard init (Table 4: 0.01).", "aliases": ["--mask_threshold"]}
    )
    threshold_update_interval: int | None = field(
        default=None, metadata={"help": "Δt_φ in steps; default: --eval_steps (Table 4), else 1000."}
    )

    train_weights: bool = field(
        default=False,
        metadata={
            "help": "Train the model's weights together with the mask scores (movement pruning, Sanh et al. 2020); "
            "default: frozen weights (the paper). Saved masks then carry the trained weights; dense_distil needs "
            "--teacher_model."
        },
    )
    weight_learning_rate: float | None = field(
        default=None,
        metadata={"help": "Learning rate of the weights with --train_weights; default: --learning_rate."},
    )

    @property
    def trains_weights(self) -> bool:
        return self.train_weights

    @property
    def weights_learning_rate(self) -> float | None:
        return self.weight_learning_rate if self.train_weights else None

    def validate(self) -> None:
        super().validate()
        if self.initial_sparsity is not None and not 0.0 <= self.initial_sparsity <= self.sparsity:
            raise InputError(f"initial_sparsity must be in [0, sparsity={self.sparsity}], got {self.initial_sparsity}.")
        if self.sparsity_schedule not in ("constant", "cubic"):
            raise InputError(f"sparsity_schedule must be 'constant' or 'cubic', got {self.sparsity_schedule!r}.")
        if self.initial_sparsity is not None and self.mask_granularity == "nm":
            raise InputError("--mask_granularity nm has one sparsity, 1 - N/M, at every step: drop --initial_sparsity.")
        if self.sparsity_schedule == "cubic" and self.initial_sparsity is None:
            raise InputError("The cubic sparsity schedule needs initial_sparsity (s_i), e.g. 0.7 for 0.7 -> 0.9.")
        if not 0.0 <= self.schedule_start < self.schedule_end <= 1.0:
            raise InputError(
                "schedule_start and schedule_end are fractions of the training steps with "
                f"0 <= start < end <= 1, got {self.schedule_start} and {self.schedule_end}."
            )
        if self.mask_init not in ("hard", "soft"):
            raise InputError(f"mask_init must be 'hard' or 'soft', got {self.mask_init!r}.")
        if self.alpha < 1.0:
            raise InputError(f"alpha must be >= 1 (appendix Eq. 1), got {self.alpha}.")
        if self.init_threshold <= 0:
            raise InputError(f"init_threshold must be > 0, got {self.init_threshold}.")
        if self.threshold_update_interval is not None and self.threshold_update_interval < 1:
            raise InputError(f"threshold_update_interval must be >= 1, got {self.threshold_update_interval}.")
        rate = self.weight_learning_rate
        if rate is not None and not (math.isfinite(rate) and rate > 0):
            raise InputError(f"weight_learning_rate must be > 0, got {rate}: e.g. --weight_learning_rate 3e-5.")

    def unused_options(self) -> dict[str, str]:
        """The common options, the cubic ramp's ends without `initial_sparsity` and the hard init's α and φ with
        the soft init."""
        unused = super().unused_options()
        if self.initial_sparsity is None:
            why = "the cubic schedule runs only with --initial_sparsity"
            unused.update(schedule_start=why, schedule_end=why)
        if not self.train_weights:
            unused["weight_learning_rate"] = "the weights stay frozen without --train_weights"
        if self.mask_init != "hard":
            unused["alpha"] = "α sets the hard init only (--mask_init hard)"
            unused["init_threshold"] = "φ is set by the hard init only (the soft init chooses it for the sparsity)"
        return unused

    @property
    def start_sparsity(self) -> float:
        """Sparsity at step 0: s_i for the cubic schedule, s otherwise."""
        if self.sparsity_schedule == "cubic" and self.initial_sparsity is not None:
            return self.initial_sparsity
        return self.sparsity

    @property
    def update_interval(self) -> int:
        """Δt_φ in steps (1000 when `threshold_update_interval` was never filled in)."""
        return self.threshold_update_interval or DEFAULT_UPDATE_INTERVAL
