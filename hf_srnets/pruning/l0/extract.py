"""One-shot ticket extraction from an l0 search (Robust Tickets §3.3): rank log α, prune the smallest.

E[s_i] grows with α_i (Eq. 2), so the weights whose gates have the smallest log α are pruned: exactly ⌊s·N⌋ of
all N weights of θ_pr for the global scope (the paper's setting) or ⌊s·n_i⌋ of each matrix for the local one,
ties broken by position (`pruning/exact_count.py`). Any sparsity comes from the same search, without training.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
from typing import Any

import torch
from torch import nn

from ...errors import InputError
from ..base import SEARCH_PREFIX, TRAINABLE_PREFIX, PruningConfig
from ..exact_count import binarize, exact_thresholds
from ..mask_files import load_checked_tensors, save_mask_files
from ..units import selection_pools, unit_layer_groups
from ..units.layer import expand_stacked
from .config import L0Config

logger = logging.getLogger(__name__)


def extract_ticket(log_alphas: dict[str, torch.Tensor], sparsity: float, scope: str = "global") -> dict[str, Any]:
    """Binary masks (True = kept) with exactly ⌊s·N⌋ zeros over all matrices (global) or ⌊s·n_i⌋ each (local)."""
    if not 0.0 <= sparsity < 1.0:
        raise ValueError(f"sparsity must be in [0, 1), got {sparsity}: e.g. --sparsity 0.3 for 30%.")
    if scope not in ("global", "local"):
        raise ValueError(f"scope must be 'global' or 'local', got {scope!r}.")
    if not log_alphas:
        raise ValueError("No log α to extract a ticket from.")
    scores = [t.detach().float() for t in log_alphas.values()]
    if scope == "local":
        results = [exact_thresholds([t], math.floor(sparsity * t.numel()))[0] for t in scores]
    else:
        results = exact_thresholds(scores, math.floor(sparsity * sum(t.numel() for t in scores)))
    return {
        name: binarize(t, torch.tensor(phi), torch.tensor(tie), has_tie)
        for name, t, (phi, tie, has_tie) in zip(log_alphas, scores, results)
    }


def extract_unit_ticket(layers: dict[str, nn.Module], sparsity: float, scope: str = "global") -> dict[str, Any]:
    """Element masks (True = kept) of the unit ticket of a structured search: exactly ⌊s·n⌋ units with the smallest
    log α pruned per unit group (local) or per kind of unit (global: all heads, and separately all FFN units, as
    the threshold method's unit selection pools them), ties by position; each member matrix gets its tiles."""
    if not 0.0 <= sparsity < 1.0:
        raise ValueError(f"sparsity must be in [0, 1), got {sparsity}: e.g. --sparsity 0.3 for 30%.")
    groups = unit_layer_groups(layers.items())
    kept: dict[int, torch.Tensor] = {}
    for pool in selection_pools(groups, scope):
        scores = [units.mask_scores.detach().float() for units in pool]
        results = exact_thresholds(scores, math.floor(sparsity * sum(t.numel() for t in scores)))
        for units, score, (phi, tie, has_tie) in zip(pool, scores, results):
            kept[id(units)] = binarize(score, torch.tensor(phi), torch.tensor(tie), has_tie)
    return {
        name: expand_stacked(kept[id(units)].reshape(layer.grid), layer.tile, layer.stack)
        for units, members in groups
        for name, layer in members
    }


def read_search_dir(directory: str | os.PathLike) -> tuple[L0Config, dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """The config, the log α per masked module and the other saved tensors of an l0 search directory.

    Refuses a directory of another method, or an l0 ticket (no log α), saying what to pass instead.
    """

    config = PruningConfig.from_pretrained(directory)
    if not isinstance(config, L0Config):
        raise InputError(
            f"{directory} holds masks of --pruning {config.pruning_method}, not of an l0 search: tickets are "
            "extracted from the log α of a --pruning l0 run's output directory."
        )
    if config.structured:
        raise InputError(
            f"{directory} is an l0 search at --mask_granularity {config.mask_granularity}: its ticket (the units with "
            "the smallest log α pruned) is the one the search saved, at its --sparsity; tickets of other sparsities "
            "are extracted from element searches only. Run the structured search again with the --sparsity wanted."
        )
    tensors = load_checked_tensors(str(directory), config, directory)
    log_alphas = {name: tensors.get(f"{SEARCH_PREFIX}{name}.log_alpha") for name in config.module_shapes}
    missing = [name for name, t in log_alphas.items() if t is None]
    if missing:
        source = f" (extracted from {config.ticket_source})" if config.ticket_source else ""
        raise InputError(
            f"{directory} has no log α for {missing[0]!r}: it is an l0 ticket{source}, not a search directory. "
            "Extract from the --pruning l0 run's output directory."
        )
    return config, log_alphas, tensors


def write_ticket(
    search_dir: str | os.PathLike, output_dir: str | os.PathLike, sparsity: float, scope: str = "global"
) -> dict[str, Any]:
    """Write the ticket at `sparsity` of an l0 search as a mask directory `--mask_from` retrains.

    Masks in the standard format (`save_mask_files`), the search's trained classifier (if any), and a config
    recording the source directory, sparsity and scope; no log α (the directory is a fixed ticket). Returns the
    sparsity report.
    """

    config, log_alphas, tensors = read_search_dir(search_dir)
    masks = extract_ticket(log_alphas, sparsity, scope)
    trained = {k: v for k, v in tensors.items() if k.startswith(TRAINABLE_PREFIX)}
    ticket_config = dataclasses.replace(config, sparsity=sparsity, sparsity_scope=scope, ticket_source=str(search_dir))
    save_mask_files(output_dir, ticket_config, masks, trained)
    pruned = sum(int((~m).sum()) for m in masks.values())
    total = sum(m.numel() for m in masks.values())
    report = {"sparsity": pruned / total, "num_pruned": pruned, "num_prunable": total, "scope": scope}
    logger.info(f"Ticket at sparsity {sparsity} ({scope}): {pruned}/{total} pruned -> {output_dir}")
    return report
