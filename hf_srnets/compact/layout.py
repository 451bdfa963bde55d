"""Where a BERT-family classifier keeps its encoder layers and, in each, the parts of multi-head attention and of
the feed-forward network (FFN).

Supported layouts (transformers 5, whose attention reshapes with `view(..., -1, attention_head_size)`, so a layer
may hold fewer heads than `config.num_attention_heads`):

- BERT, RoBERTa, ELECTRA, XLM-R, MiniLM: `<base>.encoder.layer[l].attention.self.{query,key,value}` and the output
  projection `attention.output.dense`; head counts in `self.num_attention_heads` and `self.all_head_size`.
- DistilBERT: `<base>.transformer.layer[l].attention.{q_lin,k_lin,v_lin,out_lin}`; head count in `n_heads`.

FFN (`FFN_l(x) = W_out act(W_in x + b_in) + b_out`, one intermediate unit j = row j of W_in, b_in[j] and column j of
W_out):

- BERT family: `W_in` = `layer[l].intermediate.dense` (activation `intermediate.intermediate_act_fn`), `W_out` =
  `layer[l].output.dense`; width in `config.intermediate_size`.
- DistilBERT: `W_in` = `layer[l].ffn.lin1` (activation `ffn.activation`), `W_out` = `layer[l].ffn.lin2`; width in
  `config.hidden_dim`.

DeBERTa-v2 (disentangled attention, relative-position projections shared across heads) and other layouts raise
`ValueError` naming the supported ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from torch import nn

PRUNED_HEADS_ATTR = "srnet_pruned_heads"  # config attribute: {"<layer>": [original head indices removed]}
INTERMEDIATE_SIZES_ATTR = "srnet_intermediate_sizes"  # config attribute: [FFN width of each layer] when they differ
SUPPORTED = "BERT, RoBERTa, ELECTRA, XLM-R, MiniLM and DistilBERT"


def is_compact_config(config: Any) -> bool:
    """Whether `config` records removed heads or per-layer FFN widths: shapes stock transformers cannot rebuild from
    it (`hf_srnets.load_pretrained_model` or the saved modeling file must); False for a stock checkpoint."""
    return bool(getattr(config, PRUNED_HEADS_ATTR, None) or getattr(config, INTERMEDIATE_SIZES_ATTR, None))


@dataclass
class AttentionSite:
    """One layer's self-attention: the module holding Q, K, V (`attention`, attribute names `qkv`), the module
    holding the output projection (`output_holder.<output_name>`) and the head-count attribute(s)."""

    attention: nn.Module
    qkv: tuple[str, str, str]
    output_holder: nn.Module
    output_name: str
    count_attr: str

    @property
    def head_size(self) -> int:
        return int(self.attention.attention_head_size)

    @property
    def num_heads(self) -> int:
        return getattr(self.attention, self.qkv[0]).out_features // self.head_size

    @property
    def output(self) -> nn.Linear:
        return getattr(self.output_holder, self.output_name)


def encoder_layers(model: Any) -> tuple[nn.Module, str]:
    """The module holding the encoder's `nn.ModuleList` of layers and the list's attribute name
    (`<base>.encoder.layer` in BERT and most of its family, `<base>.transformer.layer` in DistilBERT)."""
    base = getattr(model, "base_model", model)
    for name in ("encoder", "transformer"):
        holder = getattr(base, name, None)
        if isinstance(getattr(holder, "layer", None), nn.ModuleList):
            return holder, "layer"
    raise ValueError(
        f"{type(model).__name__}: no encoder layer list found (expected <base>.encoder.layer as in BERT or "
        f"<base>.transformer.layer as in DistilBERT); hf_srnets.compact supports {SUPPORTED}"
    )


def _linears(module: nn.Module, names: tuple[str, ...]) -> bool:
    return all(isinstance(getattr(module, n, None), nn.Linear) for n in names)


def attention_site(layer: nn.Module, index: int = 0) -> AttentionSite:
    """The `AttentionSite` of an encoder layer; `ValueError` for an unsupported layout."""
    attention = getattr(layer, "attention", None)
    inner = getattr(attention, "self", None)
    if inner is not None and _linears(inner, ("query", "key", "value")) and _linears(attention.output, ("dense",)):
        if hasattr(inner, "attention_head_size") and hasattr(inner, "num_attention_heads"):
            return AttentionSite(inner, ("query", "key", "value"), attention.output, "dense", "num_attention_heads")
    if attention is not None and _linears(attention, ("q_lin", "k_lin", "v_lin", "out_lin")):
        if hasattr(attention, "attention_head_size") and hasattr(attention, "n_heads"):
            return AttentionSite(attention, ("q_lin", "k_lin", "v_lin"), attention, "out_lin", "n_heads")
    what = type(inner if inner is not None else attention).__name__
    raise ValueError(
        f"Layer {index}: unsupported attention layout ({what}); head pruning supports {SUPPORTED} "
        "(DeBERTa's disentangled attention is not supported)"
    )


def attention_sites(model: Any) -> list[AttentionSite]:
    """Every encoder layer's `AttentionSite`, in order."""
    holder, attr = encoder_layers(model)
    return [attention_site(layer, i) for i, layer in enumerate(getattr(holder, attr))]


@dataclass
class FFNSite:
    """One layer's FFN: `W_in` at `in_holder.<in_name>`, its activation, `W_out` at `out_holder.<out_name>`."""

    in_holder: nn.Module
    in_name: str
    activation: Callable[[Any], Any]
    out_holder: nn.Module
    out_name: str

    @property
    def w_in(self) -> nn.Linear:
        return getattr(self.in_holder, self.in_name)

    @property
    def w_out(self) -> nn.Linear:
        return getattr(self.out_holder, self.out_name)

    @property
    def width(self) -> int:
        return self.w_in.out_features


def ffn_site(layer: nn.Module, index: int = 0) -> FFNSite:
    """The `FFNSite` of an encoder layer; `ValueError` for an unsupported layout (or a layer still wrapped)."""
    intermediate, output = getattr(layer, "intermediate", None), getattr(layer, "output", None)
    if _linears(intermediate, ("dense",)) and _linears(output, ("dense",)):
        return FFNSite(intermediate, "dense", intermediate.intermediate_act_fn, output, "dense")
    ffn = getattr(layer, "ffn", None)
    if _linears(ffn, ("lin1", "lin2")):
        return FFNSite(ffn, "lin1", ffn.activation, ffn, "lin2")
    raise ValueError(
        f"Layer {index}: no FFN of plain nn.Linear layers found (intermediate.dense/output.dense or ffn.lin1/lin2); "
        f"FFN pruning supports {SUPPORTED}, on a plain (merged) model"
    )


def ffn_sites(model: Any) -> list[FFNSite]:
    """Every encoder layer's `FFNSite`, in order."""
    holder, attr = encoder_layers(model)
    return [ffn_site(layer, i) for i, layer in enumerate(getattr(holder, attr))]


def width_attr(config: Any) -> str:
    """The config attribute holding the FFN width: `hidden_dim` (DistilBERT) or `intermediate_size`."""
    return "hidden_dim" if getattr(config, "model_type", None) == "distilbert" else "intermediate_size"
