"""Magnitude pruning's one step, shared by IMP's rounds and one-shot magnitude pruning: the smallest remaining |W|
of each matrix (or unit group) pruned up to an exact count (Win-win Algorithm 1, line 8)."""

from __future__ import annotations

import torch

from .exact_count import exact_mask
from .masked_model import MaskedModel
from .units import magnitude_prune_units


@torch.no_grad()
def magnitude_prune(srnet: MaskedModel, sparsity: float) -> None:
    """Prune, per matrix, the smallest remaining |W| until exactly ⌊s·n⌋ weights are 0 (Algorithm 1, line 8).

    Already pruned weights stay pruned (they rank first); ties are broken by position. At a structured
    `mask_granularity`, the same per unit group with the unit's mean |W| (`units.magnitude_prune_units`).
    """
    if srnet.srnet_config.structured:
        magnitude_prune_units(srnet, sparsity)
        return
    masks = {}
    for name, layer in srnet.masked_layers().items():
        kept = layer.binary_mask()
        magnitude = torch.where(kept, layer.base_layer.weight.abs().float(), -1.0)
        masks[name] = exact_mask(magnitude, sparsity)
    srnet.set_masks(masks)
    srnet.zero_pruned_weights()
