"""`compact_model`: remove every FFN unit and attention head whose removal leaves the model's output unchanged.

A merged SRNet (pruned weights set to exact zeros) with structured masks has whole units and heads that contribute
nothing. The rules, with `FFN_l(x) = Σ_j W_out[:, j] · act(W_in[j] · x + b_in[j]) + b_out`:

- FFN unit `j` is removed if column `j` of `W_out` is all zero (its term is 0 whatever `act(...)` gives), or if
  row `j` of `W_in` and `b_in[j]` are zero and `act(0) = 0` (GELU, ReLU: the term is `W_out[:, j] · 0`).
  All units of a layer may go (width 0; the FFN is then `b_out`).
- Head `h` (Michel et al. 2019; `MHA(x) = W_O [Att_1(x); ...; Att_H(x)] + b_O`) is removed if the columns of the
  output projection `W_O` that read it are all zero, or if its rows of `W_V` and of `b_V` are all zero (its
  attention output `softmax(·) V_h` is then 0). All heads of a layer may go: its attention block is then the
  residual path plus `b_O` (`prune_heads(..., whole_layers=True)`; reported in `attention_removed`), as a layer
  whose FFN units all go keeps only `b_out` (`ffn_removed`).

Up to the order of floating-point sums, the compact model computes what the masked model computes (tests check
1e-5); an element mask that zeroes no whole column, row or head changes nothing.
"""

from __future__ import annotations

import logging
from typing import Any

import torch

from ..errors import check_plain_model_argument
from .families import model_family
from .family_compaction import compact_family_model
from .heads import prune_heads, pruned_heads
from .layout import AttentionSite, FFNSite, attention_sites, ffn_sites, is_compact_config
from .neurons import prune_ffn_units

logger = logging.getLogger(__name__)


def _zero_units(site: FFNSite) -> list[int]:
    """Units whose term is exactly 0: zero column of `W_out`, or zero row of `W_in` and `b_in` with `act(0) = 0`."""
    w_in, w_out = site.w_in, site.w_out
    zero = (w_out.weight == 0).all(dim=0)
    dead_in = (w_in.weight == 0).all(dim=1)
    if w_in.bias is not None:
        dead_in &= w_in.bias == 0
    probe = torch.zeros(1, dtype=w_in.weight.dtype, device=w_in.weight.device)
    if bool(site.activation(probe).eq(0).all()):
        zero |= dead_in
    return zero.nonzero().flatten().tolist()


def _zero_heads(site: AttentionSite) -> list[int]:
    """Heads (current positions) whose output is exactly 0: zero columns of `W_O`, or zero rows of `W_V`, `b_V`."""
    d, heads = site.head_size, site.num_heads
    out_cols = (site.output.weight == 0).all(dim=0).view(heads, d).all(dim=1)
    value = getattr(site.attention, site.qkv[2])
    v_rows = (value.weight == 0).all(dim=1)
    if value.bias is not None:
        v_rows &= value.bias == 0
    return (out_cols | v_rows.view(heads, d).all(dim=1)).nonzero().flatten().tolist()


def _check_plain(model: Any) -> None:
    check_plain_model_argument(model, "compact_model")
    wrapped = [name for name, module in model.named_modules() if hasattr(module, "base_layer")]
    if wrapped:
        raise ValueError(
            f"compact_model needs a plain model, but {wrapped[0]} (and {len(wrapped) - 1} more) still wrap a "
            "base_layer: merge the masks first (SRNetModel.merge_and_unload()) and pass the merged model"
        )


def _count(model: Any) -> int:
    return sum(p.numel() for p in model.parameters())


def compact_model(model: Any) -> dict[str, Any]:
    """Remove every FFN unit and attention head that contributes exactly 0 (module docstring), in place.

    `model` is a plain (merged) BERT-family or DistilBERT classifier, or a ModernBERT or Llama-family one
    (`hf_srnets.compact.family_compaction.compact_family_model`: attention units are key/value groups there).
    Returns a report: `heads_per_layer` and
    `ffn_units_per_layer` (kept), `heads_removed` ({"<layer>": [original head indices]}, this call only),
    `ffn_units_removed` (count per layer), `attention_removed` and `ffn_removed` (the layers whose attention or FFN
    is gone entirely: the residual path plus a bias), `parameters_before`, `parameters_after`, `stock_checkpoint`.
    The config records the change for `save_pretrained`; a model with one FFN width and no pruned heads saves as a
    stock transformers checkpoint.
    """
    _check_plain(model)
    if model_family(model) is not None:  # ModernBERT, Llama-family decoders
        return compact_family_model(model)
    heads_sites, ffn = attention_sites(model), ffn_sites(model)
    before = _count(model)
    original = model.config.num_attention_heads
    done = pruned_heads(model)
    heads: dict[int, list[int]] = {}
    for layer, site in enumerate(heads_sites):
        removed = set(done.get(str(layer), []))
        alive = [h for h in range(original) if h not in removed]  # current position j = original head alive[j]
        zero = [alive[j] for j in _zero_heads(site)]
        if zero:
            heads[layer] = zero
    units = {layer: _zero_units(site) for layer, site in enumerate(ffn)}
    with torch.no_grad():
        if heads:  # otherwise the config stays without a (empty) head record
            prune_heads(model, heads, whole_layers=True)
        prune_ffn_units(model, units)
    heads_left, widths = [site.num_heads for site in attention_sites(model)], [site.width for site in ffn_sites(model)]
    report = {
        "heads_per_layer": heads_left,
        "ffn_units_per_layer": widths,
        "heads_removed": {str(layer): hs for layer, hs in heads.items()},
        "ffn_units_removed": [len(units[layer]) for layer in range(len(ffn))],
        "attention_removed": [layer for layer, count in enumerate(heads_left) if count == 0],
        "ffn_removed": [layer for layer, width in enumerate(widths) if width == 0],
        "parameters_before": before,
        "parameters_after": _count(model),
        "stock_checkpoint": not is_compact_config(model.config),
    }
    logger.info(
        f"compact_model: {sum(map(len, heads.values()))} heads and {sum(report['ffn_units_removed'])} FFN units "
        f"removed, {before} -> {report['parameters_after']} parameters"
    )
    return report
