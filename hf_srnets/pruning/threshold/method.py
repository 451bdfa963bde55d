"""`threshold`: mask training over frozen weights (Win-win §3.2.2, Algorithm 2), the paper's SRNet search."""

from __future__ import annotations

from typing import Any, ClassVar

from torch import nn
from transformers import TrainerCallback

from ..base import GRANULARITIES, CardContext, PruningMethod, register_pruning_method
from ..masked_linear import MaskedLinear
from ..masked_model import MaskedModel
from ..wrapped import model_weights
from .config import DEFAULT_UPDATE_INTERVAL, ThresholdConfig
from .controller import MaskThresholdCallback
from .schedules import schedule_end_step, sparsity_at
from .thresholds import initialize_scores


@register_pruning_method
class ThresholdPruning(PruningMethod):
    """Scores m̂ train with the straight-through estimator; φ keeps exactly ⌊s_t·n⌋ zeros per matrix (or over all).

    Starts from appendix Eq. 1 (hard) or Eq. 2 (soft), follows a constant or cubic sparsity schedule (§5.2), and
    records the base weights' fingerprint so the masks refuse other weights when loaded. Every `mask_granularity`:
    at block/ffn/head/hybrid one score per unit, ⌊s_t·n⌋ units per group (`hf_srnets.pruning.units`).
    """

    name = "threshold"
    aliases: ClassVar[dict[str, dict[str, Any]]] = {"mask": {}}
    title = "mask training"
    config_class = ThresholdConfig
    layer_class = MaskedLinear
    trains_scores = True
    granularities = GRANULARITIES

    @classmethod
    def prepare_config(cls, config: ThresholdConfig, training_args: Any, *, fresh_head: bool) -> ThresholdConfig:
        """Δt_φ defaults to `--eval_steps` when evaluating by steps (Table 4), else 1000; s_i given -> cubic."""
        config = super().prepare_config(config, training_args, fresh_head=fresh_head)
        derived: dict[str, Any] = {}
        if config.threshold_update_interval is None:
            by_steps = getattr(training_args, "eval_strategy", None) == "steps"
            eval_steps = getattr(training_args, "eval_steps", None)
            interval = eval_steps if by_steps and eval_steps else DEFAULT_UPDATE_INTERVAL
            derived["threshold_update_interval"] = int(interval)
        if config.initial_sparsity is not None:
            derived["sparsity_schedule"] = "cubic"
        return config.resolved(**derived)  # validated

    def make_layer(self, base_layer: nn.Linear) -> MaskedLinear:
        """`MaskedLinear`, with the N:M pattern at `--mask_granularity nm`."""
        if self.config.mask_granularity == "nm":
            return MaskedLinear(base_layer, nm=(self.config.nm_n, self.config.nm_m))
        return MaskedLinear(base_layer)

    def initialize(self, srnet: MaskedModel) -> None:
        """The initial scores (appendix Eq. 1 or 2), the starting weights' fingerprint, and with `train_weights`
        every weight of the model trainable from here on."""
        initialize_scores(srnet)
        srnet.record_fingerprint()
        if self.config.train_weights:
            for param in model_weights(srnet.base_model):
                param.requires_grad_(True)

    def callbacks(self, srnet: MaskedModel) -> list[TrainerCallback]:
        if any(p.requires_grad for p in srnet.masked_layers_scores()):
            return [MaskThresholdCallback(srnet)]
        return super().callbacks(srnet)  # masks frozen (loaded, or fixed for fine-tuning the subnetwork)

    def target_sparsity(self, step: int, max_steps: int) -> float:
        return sparsity_at(step, max_steps, self.config)

    def selection_start_step(self, max_steps: int) -> int:
        return schedule_end_step(max_steps, self.config)

    @classmethod
    def card_settings(cls, config: ThresholdConfig, context: CardContext) -> dict[str, Any]:
        """The schedule (s_i only for the cubic one), the init, the scores' rate, Δt_φ and classifier training."""
        out = {
            "sparsity": config.sparsity,
            **config.unit_settings(),
            "sparsity_schedule": config.sparsity_schedule,
            "initial_sparsity": config.initial_sparsity,
            "mask_init": config.mask_init,
            "mask_learning_rate": context.mask_learning_rate,
            "threshold_update_interval": config.threshold_update_interval,
            "sparsity_scope": config.sparsity_scope,
            "trainable_classifier": config.trainable_classifier,
            "train_weights": config.train_weights or None,
            "weight_learning_rate": config.weights_learning_rate,
            "select_best_after": context.select_best_after,
        }
        if config.sparsity_schedule != "cubic":
            out.pop("initial_sparsity")
        return {key: value for key, value in out.items() if value is not None}

    @classmethod
    def search_description(cls, config: ThresholdConfig, context: CardContext) -> str:
        """Mask training with its schedule, init (appendix Eq. 1 or 2) and Δt_φ."""
        init = f"{config.mask_init} init (appendix Eq. {1 if config.mask_init == 'hard' else 2})"
        interval = f", threshold updated every {config.threshold_update_interval} steps"
        if config.train_weights:  # the masks alone no longer rebuild the model: the card must say so
            interval += ", the model's weights trained together with the scores (movement pruning)"
        if config.sparsity_schedule != "cubic":
            return f"mask training, sparsity fixed at {config.sparsity}, {init}{interval}"
        return (
            f"mask training, cubic sparsity schedule {config.initial_sparsity} -> {config.sparsity} (reached at "
            f"{config.schedule_end} of training), {init}{interval}"
        )
