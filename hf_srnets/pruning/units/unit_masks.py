"""Exact-count selection, initial scores, IMP rounds and fixed masks at unit granularity.

The exact-sparsity rule of Win-win §3.2.2 holds per unit group: ⌊s·n⌋ of a group's n units are pruned (local
scope: each block matrix, each layer's FFN units, each layer's heads), or ⌊s·N⌋ of all N units of one kind
(global scope: all blocks; all FFN units and, separately, all heads), ties broken by position
(`hf_srnets.pruning.exact_count.exact_thresholds`).

Aggregation: a unit's magnitude is the *mean* |W| over its weights in all the matrices it spans,

    a_u = (1/|u|) Σ_{e ∈ u} |W_e|.

The mean (rather than the L2 norm of neuron-pruning work) keeps a_u on the scale of one weight's |W|, the element
score of the soft init (appendix Eq. 2), so `--mask_learning_rate`, `--init_threshold` and α mean the same at every
granularity, and it ranks units of the same kind exactly as their L1 norm does (all have the same |u|).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch
from torch import nn

from ..exact_count import exact_mask, exact_thresholds
from ..masked_model import MaskedModel
from .layer import UnitMaskedLinear, UnitScores

Members = list[tuple[str, UnitMaskedLinear]]


def unit_layer_groups(layers: Iterable[tuple[str, nn.Module]]) -> list[tuple[UnitScores, Members]]:
    """The distinct `UnitScores` of the masked layers (in model order of their first member) with their members."""
    groups: dict[int, tuple[UnitScores, Members]] = {}
    for name, layer in layers:
        if isinstance(layer, UnitMaskedLinear):
            groups.setdefault(id(layer.units), (layer.units, []))[1].append((name, layer))
    return list(groups.values())


@torch.no_grad()
def aggregated_magnitude(units: UnitScores, members: Members) -> torch.Tensor:
    """a_u = mean |W| over the unit's weights in all its matrices (float32, the scores' shape)."""
    total = torch.zeros(units.mask_scores.shape, dtype=torch.float32, device=units.mask_scores.device)
    count = 0
    for _, layer in members:
        magnitude = layer.base_layer.weight.detach().abs().float()
        total += layer.unit_sum(magnitude).reshape(total.shape)
        count += layer.unit_size
    return total / count


def selection_pools(groups: list[tuple[UnitScores, Members]], scope: str) -> list[list[UnitScores]]:
    """The score tensors selected together: each group alone (local), or all groups of one kind (global)."""
    if scope != "global":
        return [[units] for units, _ in groups]
    kinds: dict[str, list[UnitScores]] = {}
    for units, _ in groups:
        kinds.setdefault(units.kind, []).append(units)
    return list(kinds.values())


@torch.no_grad()
def update_unit_thresholds(srnet: MaskedModel, sparsity: float) -> None:
    """φ per pool such that exactly ⌊s·n⌋ units of each pool are pruned (ties by position)."""
    groups = unit_layer_groups(srnet.masked_layers().items())
    for pool in selection_pools(groups, srnet.srnet_config.sparsity_scope):
        total = sum(units.mask_scores.numel() for units in pool)
        results = exact_thresholds([units.mask_scores for units in pool], math.floor(sparsity * total))
        for units, (phi, tie_index, has_tie) in zip(pool, results):
            units.set_threshold(phi, tie_index, has_tie)


@torch.no_grad()
def init_unit_scores(srnet: MaskedModel, mask_init: str, sparsity: float, alpha: float, init_threshold: float) -> None:
    """Appendix Eq. 1 / Eq. 2 per unit group, with a_u the aggregated magnitude.

    Hard (Eq. 1): m̂_u = 0 for the ⌊s·n⌋ units with the smallest a_u (ties by position), α·φ elsewhere, φ =
    `init_threshold`. Soft (Eq. 2): m̂_u = a_u with φ exact for ⌊s·n⌋ pruned units of the group.
    """
    for units, members in unit_layer_groups(srnet.masked_layers().items()):
        units.init_from_magnitude(aggregated_magnitude(units, members), mask_init, sparsity, alpha, init_threshold)


@torch.no_grad()
def magnitude_prune_units(srnet: MaskedModel, sparsity: float) -> None:
    """IMP round at unit granularity: per group, prune the units with the smallest a_u of the *current* weights
    until exactly ⌊s·n⌋ are pruned; already pruned units rank first (a = −1), ties by position."""
    for units, members in unit_layer_groups(srnet.masked_layers().items()):
        magnitude = torch.where(units.unit_mask(), aggregated_magnitude(units, members), -1.0)
        units.set_fixed(exact_mask(magnitude, sparsity))
    srnet.zero_pruned_weights()


@torch.no_grad()
def set_unit_masks(layers: dict[str, nn.Module], masks: dict[str, torch.Tensor]) -> None:
    """Fix each group's unit mask from the element masks of its matrices.

    Raises `ValueError` naming the module when a mask is missing, not constant over a unit, or disagrees with
    another matrix of the same units (e.g. row j of W_in kept but column j of W_out pruned).
    """
    for units, members in unit_layer_groups(layers.items()):
        found: torch.Tensor | None = None
        for name, layer in members:
            if name not in masks:
                raise ValueError(f"No mask given for {name!r}, a masked layer.")
            mask = masks[name].to(units.mask_scores.device)
            unit_mask = layer.unit_mask_of(mask, name).reshape(units.mask_scores.shape)
            if found is not None and not torch.equal(found, unit_mask):
                raise ValueError(
                    f"The mask of {name} prunes other units than the mask of {members[0][0]}, whose units it shares "
                    f"({units.kind}): the masks were not made at this mask_granularity."
                )
            found = unit_mask
        units.set_fixed(found)
