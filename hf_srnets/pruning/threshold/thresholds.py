"""Initial scores and exact thresholds of mask training (appendix Eq. 1 and 2; Algorithm 2, lines 14-16)."""

from __future__ import annotations

import math

import torch

from ..exact_count import exact_thresholds
from ..masked_model import MaskedModel
from ..units import init_unit_scores, update_unit_thresholds


@torch.no_grad()
def initialize_scores(srnet: MaskedModel) -> None:
    """Appendix Eq. 1 (hard) or Eq. 2 (soft) at the schedule's starting sparsity, layer by layer in model order.

    With the soft init and global scope, φ is then shared over all masked matrices (`update_thresholds`). At a
    structured `mask_granularity` the same rules hold per unit group, with the unit's mean |W| as its magnitude
    (`hf_srnets.pruning.units.init_unit_scores`).
    """
    cfg = srnet.srnet_config
    if cfg.structured:
        init_unit_scores(srnet, cfg.mask_init, cfg.start_sparsity, cfg.alpha, cfg.init_threshold)
    else:
        for layer in srnet.masked_layers().values():
            layer.init_scores(cfg.mask_init, cfg.start_sparsity, cfg.alpha, cfg.init_threshold)
    if cfg.mask_init == "soft" and cfg.sparsity_scope == "global":
        update_thresholds(srnet, cfg.start_sparsity)


@torch.no_grad()
def update_thresholds(srnet: MaskedModel, sparsity: float) -> None:
    """Recompute φ so that exactly ⌊s·n⌋ weights are pruned per matrix (local) or over all (global).

    At a structured `mask_granularity`: ⌊s·n⌋ units per group (local) or per kind of unit (global). At `nm` there
    is no φ: the layers keep the top N of every M scores.
    """
    if not 0.0 <= sparsity < 1.0:
        raise ValueError(f"sparsity must be in [0, 1), got {sparsity}")
    if srnet.srnet_config.mask_granularity == "nm":
        return  # the mask is the top N of every M scores at every step: no threshold to set
    if srnet.srnet_config.structured:
        update_unit_thresholds(srnet, sparsity)
        return
    layers = list(srnet.masked_layers().values())
    if srnet.srnet_config.sparsity_scope == "global":
        total = sum(layer.mask_scores.numel() for layer in layers)
        results = exact_thresholds([layer.mask_scores for layer in layers], math.floor(sparsity * total))
    else:
        results = [
            exact_thresholds([layer.mask_scores], math.floor(sparsity * layer.mask_scores.numel()))[0]
            for layer in layers
        ]
    for layer, (phi, tie_index, has_tie) in zip(layers, results):
        layer.set_threshold(phi, tie_index, has_tie)
