"""Compact export and reload of ModernBERT and Llama-family decoders (`hf_srnets.compact.families`).

`compact_family_model` removes every attention unit (a decoder's key/value group with its query heads, a ModernBERT
head) and gated-MLP unit that contributes exactly 0 (`UnitSite.dead_units`), as `compact_model` does for BERT.
The config records what a loader must rebuild, in the attributes BERT-family compact checkpoints use:
`srnet_pruned_heads` = {"<layer>": [original *query* head indices removed]} (whole groups of r =
num_key_value_groups heads for a decoder) and the FFN widths (`intermediate_size` = the largest;
`srnet_intermediate_sizes` when they differ). `shrink_family_model` rebuilds that shape on a model made from the
config, before `hf_srnets.compact.loading` loads the saved weights. Each layer keeps at least one attention unit
(a layer whose units are all zero keeps its first, which contributes 0: `zero_heads_kept`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from .families import query_heads_per_unit, unit_sites
from .layout import INTERMEDIATE_SIZES_ATTR, PRUNED_HEADS_ATTR, is_compact_config

logger = logging.getLogger(__name__)


def _original_units(model: Any) -> int:
    return model.config.num_attention_heads // query_heads_per_unit(model)


def removed_units(model: Any) -> dict[int, set[int]]:
    """The attention units removed so far, per layer, in the original numbering (from `srnet_pruned_heads`)."""
    ratio = query_heads_per_unit(model)
    record = getattr(model.config, PRUNED_HEADS_ATTR, None) or {}
    return {int(layer): {int(h) // ratio for h in heads} for layer, heads in record.items()}


def _record_heads(model: Any, removed: dict[int, set[int]]) -> None:
    ratio = query_heads_per_unit(model)
    record = {
        str(layer): [g * ratio + i for g in sorted(units) for i in range(ratio)]
        for layer, units in sorted(removed.items())
        if units
    }
    setattr(model.config, PRUNED_HEADS_ATTR, record or None)


def _record_widths(model: Any) -> None:
    widths, config = [ffn.units for _, ffn in unit_sites(model)], model.config
    config.intermediate_size = max(widths)
    if len(set(widths)) > 1:
        setattr(config, INTERMEDIATE_SIZES_ATTR, widths)
    elif hasattr(config, INTERMEDIATE_SIZES_ATTR):
        delattr(config, INTERMEDIATE_SIZES_ATTR)


def _remove_attention(model: Any, layer: int, positions: list[int], removed: dict[int, set[int]]) -> None:
    """Remove the attention units at current `positions` of `layer`, recording their original indices."""
    site = unit_sites(model)[layer][0]
    done = removed.setdefault(layer, set())
    alive = [g for g in range(_original_units(model)) if g not in done]
    site.keep([j for j in range(site.units) if j not in set(positions)])
    done.update(alive[j] for j in positions)


def shrink_family_model(model: Any, heads: Mapping[str, Sequence[int]], widths: Sequence[int] | None) -> Any:
    """Give a model built from a compact checkpoint's config the recorded shape (module docstring), in place."""
    ratio, removed = query_heads_per_unit(model), {}
    for layer, query_heads in heads.items():
        units = sorted({int(h) // ratio for h in query_heads})
        alive = list(range(_original_units(model)))
        _remove_attention(model, int(layer), [alive.index(g) for g in units], removed)
    sites = unit_sites(model)
    if widths is not None:
        if len(widths) != len(sites):
            raise ValueError(
                f"{INTERMEDIATE_SIZES_ATTR} has {len(widths)} widths but the model has {len(sites)} layers: the "
                "config does not match the checkpoint (one width per layer)"
            )
        for (_, ffn), width in zip(sites, widths):
            ffn.keep(range(int(width)))
    _record_heads(model, removed)
    _record_widths(model)
    return model


@torch.no_grad()
def compact_family_model(model: Any) -> dict[str, Any]:
    """Remove every attention and MLP unit of a merged ModernBERT/decoder that contributes exactly 0; the report of
    `hf_srnets.compact.compact_model` (heads counted as query heads)."""
    before = sum(p.numel() for p in model.parameters())
    removed = removed_units(model)
    heads_removed: dict[str, list[int]] = {}
    kept_zero: dict[str, int] = {}
    ratio, ffn_removed = query_heads_per_unit(model), []
    for layer, (attention, ffn) in enumerate(unit_sites(model)):
        dead = attention.dead_units()
        alive = [g for g in range(_original_units(model)) if g not in removed.get(layer, set())]
        if dead and len(dead) == attention.units:
            kept_zero[str(layer)] = alive[dead.pop(0)] * ratio
        if dead:
            heads_removed[str(layer)] = [alive[j] * ratio + i for j in dead for i in range(ratio)]
            _remove_attention(model, layer, dead, removed)
        zero = set(ffn.dead_units())
        ffn.keep([j for j in range(ffn.units) if j not in zero])
        ffn_removed.append(len(zero))
    _record_heads(model, removed)
    _record_widths(model)
    sites = unit_sites(model)
    report = {
        "heads_per_layer": [attention.units * ratio for attention, _ in sites],
        "ffn_units_per_layer": [ffn.units for _, ffn in sites],
        "heads_removed": heads_removed,
        "ffn_units_removed": ffn_removed,
        "zero_heads_kept": kept_zero,
        "parameters_before": before,
        "parameters_after": sum(p.numel() for p in model.parameters()),
        "stock_checkpoint": not is_compact_config(model.config),
    }
    logger.info(f"compact_family_model: {report['parameters_before']} -> {report['parameters_after']} parameters")
    return report
