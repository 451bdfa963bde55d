"""`magnitude-oneshot`: the smallest |W| of each matrix pruned once, weights kept (Algorithm 1's round, no training).

The selection is IMP's (`hf_srnets.pruning.magnitude_masks.magnitude_prune`: exactly ⌊s·n⌋ per matrix, ties by
position; at block/neuron/head granularity whole units by their mean |W|) done once at s, before any update; the
weights stay θ_0 (`hf_srnets.pruning.oneshot.OneShotCallback`). It is the magnitude baseline of the LLM-pruning tools
and the layer-wise magnitude baseline of Sun et al. (2024).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from transformers import TrainerCallback

from ...errors import InputError
from ..base import GRANULARITIES, CardContext, PruningMethod, register_pruning_method
from ..magnitude_masks import magnitude_prune
from ..masked_linear import MaskedLinear
from ..masked_model import MaskedModel
from ..oneshot import OneShotCallback, keep_all
from ..sharding import full_parameters
from .config import OneShotMagnitudeConfig


def magnitude_masks(srnet: MaskedModel, batches: Iterable[Any], sparsity: float) -> dict[str, torch.Tensor]:
    """IMP's magnitude selection at `sparsity` from all-ones masks (no data needed)."""
    keep_all(srnet)
    with full_parameters(srnet):
        magnitude_prune(srnet, sparsity)
        return srnet.binary_masks()


@register_pruning_method
class OneShotMagnitudePruning(PruningMethod):
    """One-shot magnitude pruning with no retraining (module docstring)."""

    name = "magnitude-oneshot"
    config_class = OneShotMagnitudeConfig
    layer_class = MaskedLinear
    trains_scores = False
    granularities = tuple(g for g in GRANULARITIES if g != "nm")  # as IMP: N:M is a mask-training granularity

    @classmethod
    def prepare_config(
        cls, config: OneShotMagnitudeConfig, training_args: Any, *, fresh_head: bool
    ) -> OneShotMagnitudeConfig:
        """Nothing trains, so the classifier must not be new, and `trainable_classifier` is False."""
        if fresh_head:
            raise InputError(
                "--pruning magnitude-oneshot prunes a fine-tuned classifier once, with no training, but this "
                "checkpoint's classifier is newly initialised: give a fine-tuned --model_name_or_path."
            )
        return config.resolved(trainable_classifier=False)

    def initialize(self, srnet: MaskedModel) -> None:
        srnet.train_weights_with_fixed_masks()

    def callbacks(self, srnet: MaskedModel) -> list[TrainerCallback]:
        if not srnet.is_search:
            return super().callbacks(srnet)
        sparsity = self.config.sparsity
        return [OneShotCallback(srnet, lambda model, batches: magnitude_masks(model, batches, sparsity))]

    @classmethod
    def search_description(cls, config: OneShotMagnitudeConfig, context: CardContext) -> str:
        return f"one-shot magnitude pruning: the {config.sparsity:.0%} smallest |W| of each matrix, no weight retrained"
