"""`magnitude`: iterative magnitude pruning, with or without rewinding (Win-win §3.2.1, Algorithm 1)."""

from __future__ import annotations

from typing import Any, ClassVar

from transformers import TrainerCallback

from ..base import GRANULARITIES, CardContext, PruningMethod, register_pruning_method
from ..masked_linear import MaskedLinear
from ..masked_model import MaskedModel
from .config import MagnitudeConfig
from .controller import IMPCallback
from .rounds import imp_rounds


@register_pruning_method
class MagnitudePruning(PruningMethod):
    """The weights train under fixed masks; every Δt the smallest Δs of each matrix's |W| are pruned (IMP).

    Masks start all-ones (the first round prunes at step 0); the layer is `MaskedLinear` with fixed 0/1 scores.
    The saved masks hold the trained weights, so no base fingerprint is recorded. Every `mask_granularity`: at
    block/ffn/head/hybrid each round prunes whole units by their mean |W| (`hf_srnets.pruning.units`).
    """

    name = "magnitude"
    aliases: ClassVar[dict[str, dict[str, Any]]] = {"imp": {"rewind": False}, "imp-rw": {"rewind": True}}
    config_class = MagnitudeConfig
    layer_class = MaskedLinear
    trains_scores = False
    granularities = tuple(g for g in GRANULARITIES if g != "nm")

    @classmethod
    def prepare_config(cls, config: MagnitudeConfig, training_args: Any, *, fresh_head: bool) -> MagnitudeConfig:
        """Every weight trains (the classifier too), so `trainable_classifier` None is False; refuse runs short of s."""
        imp_rounds(config.sparsity, config.imp_prune_ratio, config.imp_interval, rewind=config.rewind)
        return config.resolved(trainable_classifier=bool(config.trainable_classifier))

    def initialize(self, srnet: MaskedModel) -> None:
        srnet.train_weights_with_fixed_masks()

    def callbacks(self, srnet: MaskedModel) -> list[TrainerCallback]:
        if not srnet.is_search:  # loaded masks: fine-tune the subnetwork with them fixed
            return super().callbacks(srnet)
        cfg = self.config
        return [IMPCallback(srnet, cfg.sparsity, cfg.imp_prune_ratio, cfg.imp_interval, rewind=cfg.rewind)]

    @classmethod
    def search_description(cls, config: MagnitudeConfig, context: CardContext) -> str:
        """Algorithm 1: Δs of each matrix every Δt up to s, with or without rewinding."""
        return (
            f"iterative magnitude pruning (Algorithm 1): {config.imp_prune_ratio:.0%} of each matrix every "
            f"{config.imp_interval} of training up to {config.sparsity:.0%}"
            + (", weights rewound to the starting checkpoint" if config.rewind else "")
        )
