"""Structured pruning of FFN intermediate units: remove them physically, record the widths for the loader.

Layer `l`'s FFN is `FFN_l(x) = W_out act(W_in x + b_in) + b_out = Σ_j W_out[:, j] · act(W_in[j] · x + b_in[j])
+ b_out`, a sum over its intermediate units `j`. Removing unit `j` drops row `j` of `W_in`, `b_in[j]` and column
`j` of `W_out` (Michel et al. 2019 do the same for heads; structured FFN pruning as in McCarley et al. 2019). The
model computes the FFN without unit `j`'s term, exactly what it computes when that term is zero (see
`hf_srnets.compact.compaction.compact_model`, which finds such units).

A layer may lose all its units: `nn.Linear` of width 0 works, and the FFN is then `b_out` alone.

What is saved: if every layer ends with the same width `w`, `config.intermediate_size` (DistilBERT:
`config.hidden_dim`) becomes `w` and nothing else is recorded, so without head pruning the saved directory is a
stock transformers checkpoint (`AutoModelForSequenceClassification.from_pretrained` loads it). Otherwise the width
attribute holds the largest width and `config.srnet_intermediate_sizes` the width of each layer, from which
`hf_srnets.compact.load_pretrained_model` rebuilds the model before loading its weights.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import torch

from .layout import INTERMEDIATE_SIZES_ATTR, FFNSite, ffn_sites, width_attr
from .linear import slice_linear

logger = logging.getLogger(__name__)


def ffn_widths(model: Any) -> list[int]:
    """The number of FFN intermediate units each encoder layer has now."""
    return [site.width for site in ffn_sites(model)]


def _keep_units(site: FFNSite, keep: Sequence[int]) -> None:
    index = torch.tensor(list(keep), dtype=torch.long, device=site.w_in.weight.device)
    setattr(site.in_holder, site.in_name, slice_linear(site.w_in, index, 0))
    setattr(site.out_holder, site.out_name, slice_linear(site.w_out, index, 1))


def record_widths(model: Any) -> None:
    """Write the FFN widths to the config (module docstring): the width attribute = the largest width; the
    per-layer list `srnet_intermediate_sizes` only if the widths differ (removed otherwise)."""
    widths, config = ffn_widths(model), model.config
    if not widths:
        return
    setattr(config, width_attr(config), max(widths))
    if len(set(widths)) > 1:
        setattr(config, INTERMEDIATE_SIZES_ATTR, widths)
    elif hasattr(config, INTERMEDIATE_SIZES_ATTR):
        delattr(config, INTERMEDIATE_SIZES_ATTR)


def prune_ffn_units(model: Any, units: Mapping[int | str, Iterable[int]]) -> Any:
    """Remove FFN units in place ({layer: [unit positions in the layer's current numbering]}); return the model.

    Unit `j` of layer `l` is row `j` of `W_in`, `b_in[j]` and column `j` of `W_out` (module docstring). A layer may
    lose every unit. Widths are recorded in the config for `save_pretrained` (`record_widths`).
    """
    sites = ffn_sites(model)
    for layer, chosen in units.items():
        index = int(layer)
        if not 0 <= index < len(sites):
            raise ValueError(f"Layer {layer} does not exist: the model has {len(sites)} layers")
        drop = {int(j) for j in chosen}
        width = sites[index].width
        if any(not 0 <= j < width for j in drop):
            raise ValueError(f"Layer {index}: FFN unit indices must be in [0, {width}), got {sorted(drop)}")
        if drop:
            _keep_units(sites[index], [j for j in range(width) if j not in drop])
    record_widths(model)
    return model


def set_ffn_widths(model: Any, widths: Sequence[int]) -> Any:
    """Give layer `l` an FFN of `widths[l]` units (its first ones), in place, for a loader that then overwrites
    the weights; `ValueError` if the list does not have one width per layer or a width exceeds the current one."""
    sites = ffn_sites(model)
    if len(widths) != len(sites):
        raise ValueError(
            f"{INTERMEDIATE_SIZES_ATTR} has {len(widths)} widths but the model has {len(sites)} layers: the config "
            "does not match the checkpoint (one width per layer)"
        )
    for index, (site, width) in enumerate(zip(sites, widths)):
        if not 0 <= int(width) <= site.width:
            raise ValueError(f"Layer {index}: FFN width {width} is not in [0, {site.width}] (the config's width)")
        if int(width) != site.width:
            _keep_units(site, range(int(width)))
    record_widths(model)
    return model


def unit_magnitudes(site: FFNSite) -> torch.Tensor:
    """a_j = the mean |W| of FFN unit j over its weights, row j of W_in and column j of W_out (the rule that ranks
    units for mask training's init and IMP at `--mask_granularity ffn`, `hf_srnets.pruning.units.unit_masks`)."""
    w_in, w_out = site.w_in.weight.detach().float().abs(), site.w_out.weight.detach().float().abs()
    return (w_in.sum(dim=1) + w_out.sum(dim=0)) / (w_in.shape[1] + w_out.shape[0])


def narrow_ffn(model: Any, width: int) -> list[int]:
    """Keep the `width` FFN units of largest mean |W| in every layer (ties by position: the earlier unit stays),
    in place; the widths before. A dense student with narrower FFNs, initialised from the model's own units."""
    sites = ffn_sites(model)
    before = [site.width for site in sites]
    if not 1 <= width <= min(before):
        raise ValueError(
            f"--student_ffn_size {width}: the model's FFNs have {min(before)} units (the narrowest layer); pass a "
            f"number from 1 to {min(before) - 1}"
        )
    drop = {}
    for index, site in enumerate(sites):
        magnitude = unit_magnitudes(site).tolist()
        order = sorted(range(site.width), key=lambda j: (-magnitude[j], j))
        drop[index] = order[width:]
    prune_ffn_units(model, drop)
    logger.info(f"Student: FFN units {before} -> {width} per layer (largest mean |W| kept)")
    return before
