"""Where ModernBERT and the Llama-family decoders (Llama, Qwen2, Qwen3, Gemma, Mistral, ...) keep their attention
and gated-MLP matrices, and how one structured unit spans them.

The layouts are recognised from the modules of the installed transformers, not from a table of model types: a
model whose `base_model.layers[l]` holds

- `self_attn.{q_proj,k_proj,v_proj,o_proj}` and `mlp.{gate_proj,up_proj,down_proj}` (with `mlp.act_fn`) is a
  *decoder* (Llama family; grouped-query attention with `num_key_value_groups` query heads per key/value head);
- `attn.{Wqkv,Wo}` and `mlp.{Wi,Wo}` (with `mlp.act`) is *ModernBERT* (Q, K and V fused in `Wqkv`, rows [Q; K; V];
  the GLU's two halves fused in `Wi`, rows [input; gate]).

A unit is a set of weights removed together; in each matrix it spans (a `Part`) it covers `size` rows (`dim` 0) or
columns (`dim` 1) in each of `stack` stacked copies (a fused matrix holds `stack` blocks of `units·size` rows):

- decoder attention, unit g = key/value group g: rows [g·r·d, (g+1)·r·d) of `q_proj` (its r = num_key_value_groups
  query heads), rows [g·d, (g+1)·d) of `k_proj` and `v_proj`, those r·d columns of `o_proj`. Whole groups keep the
  ratio r of query to key/value heads that stock transformers' attention reads from the config
  (`num_attention_heads // num_key_value_heads`), so a layer with fewer groups still runs the stock forward (its
  reshapes use -1 heads); removing single query heads would break that ratio.
- ModernBERT attention, unit h = head h: rows h·d.. of each of the Q, K, V blocks of `Wqkv` (stack 3), columns of `Wo`.
- gated MLP, unit j: row j of `gate_proj` and `up_proj`, column j of `down_proj` (`down(act(gate x) ⊙ up x)`);
  ModernBERT: row j of both halves of `Wi` (stack 2), column j of `mlp.Wo` (`Wo(act(input) ⊙ gate)`).

A unit contributes exactly 0 (`dead_units`) when its columns of the output matrix are zero, or when a factor it
multiplies by is zero: its value rows (attention), its `up`/gate-half rows (MLP), or its `gate`/input-half rows when
act(0) = 0 (SiLU, GELU). Biases count: a zero row with a non-zero bias is not dead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from .linear import slice_linear

DECODER = "decoder"
MODERNBERT = "modernbert"
SUPPORTED_FAMILIES = "ModernBERT and Llama-family decoders (Llama, Qwen2, Qwen3, Gemma, Mistral)"


@dataclass
class Part:
    """One matrix a unit spans: `holder.<name>`, along `dim` (0 rows, 1 columns), `size` rows/columns per unit in
    each of `stack` stacked copies."""

    holder: nn.Module
    name: str
    dim: int
    size: int
    stack: int = 1

    @property
    def linear(self) -> nn.Linear:
        return getattr(self.holder, self.name)

    def units(self) -> int:
        """The number of units the matrix holds now."""
        width = self.linear.weight.shape[self.dim]
        return width // (self.size * self.stack)

    def index(self, keep: Sequence[int], copies: Sequence[int] | None = None) -> torch.Tensor:
        """The rows/columns of the units `keep` (in each copy of `copies`, all by default), in matrix order."""
        n, size = self.units(), self.size
        copies = range(self.stack) if copies is None else copies
        rows = [c * n * size + u * size + i for c in copies for u in keep for i in range(size)]
        return torch.tensor(rows, dtype=torch.long, device=self.linear.weight.device)

    def zero_units(self, copy: int | None = None) -> torch.Tensor:
        """Per unit: all its weights (in `copy`, or every copy) and, for rows, its biases are exactly 0."""
        linear, n = self.linear, self.units()
        weight = linear.weight if self.dim == 0 else linear.weight.t()
        zero = (weight == 0).all(dim=1)
        if self.dim == 0 and linear.bias is not None:
            zero &= linear.bias == 0
        zero = zero.view(self.stack, n, self.size).all(dim=2)
        return zero.all(dim=0) if copy is None else zero[copy]


@dataclass
class UnitSite:
    """One layer's units of one kind (`head`: attention, `ffn`: gated MLP): the matrices they span and the tests that
    prove a unit contributes 0 (`proofs`: (part index, stack copy or None, needs act(0) = 0))."""

    kind: str
    parts: tuple[Part, ...]
    proofs: tuple[tuple[int, int | None, bool], ...]
    activation: Callable[[Any], Any] | None = None

    @property
    def units(self) -> int:
        return self.parts[0].units()

    def dead_units(self) -> list[int]:
        """The units (current positions) whose contribution is exactly 0 (module docstring)."""
        dead = torch.zeros(self.units, dtype=torch.bool, device=self.parts[0].linear.weight.device)
        for part, copy, needs_zero_act in self.proofs:
            if needs_zero_act and not _zero_at_zero(self.activation, self.parts[part].linear.weight):
                continue
            dead |= self.parts[part].zero_units(copy)
        return dead.nonzero().flatten().tolist()

    def keep(self, keep: Sequence[int]) -> None:
        """Keep only the units `keep` (current positions, ascending) in every matrix, in place."""
        for part in self.parts:
            part.holder.__setattr__(part.name, slice_linear(part.linear, part.index(keep), part.dim))


def _zero_at_zero(activation: Callable[[Any], Any] | None, like: torch.Tensor) -> bool:
    if activation is None:
        return False
    probe = torch.zeros(1, dtype=like.dtype, device=like.device)
    return bool(activation(probe).eq(0).all())


def _linears(module: Any, names: tuple[str, ...]) -> bool:
    return module is not None and all(isinstance(getattr(module, n, None), nn.Linear) for n in names)


def layer_family(layer: nn.Module) -> str | None:
    """`"decoder"`, `"modernbert"` or None, from the modules one layer holds (module docstring)."""
    attn, mlp = getattr(layer, "self_attn", None), getattr(layer, "mlp", None)
    gated = _linears(mlp, ("gate_proj", "up_proj", "down_proj"))
    if gated and _linears(attn, ("q_proj", "k_proj", "v_proj", "o_proj")):
        return DECODER
    attn = getattr(layer, "attn", None)
    if _linears(attn, ("Wqkv", "Wo")) and _linears(mlp, ("Wi", "Wo")):
        return MODERNBERT
    return None


def family_layers(model: Any) -> tuple[str, list[nn.Module]] | None:
    """The family and the layers of a ModernBERT or Llama-family model (`base_model.layers`), or None."""
    base = getattr(model, "base_model", model)
    layers = getattr(base, "layers", None)
    if not isinstance(layers, nn.ModuleList) or len(layers) == 0:
        return None
    families = {layer_family(layer) for layer in layers}
    if len(families) != 1 or None in families:
        return None
    return families.pop(), list(layers)


def model_family(model: Any) -> str | None:
    """`"decoder"`, `"modernbert"` or None (another layout, e.g. BERT's)."""
    found = family_layers(model)
    return found[0] if found else None


def _head_dim(attn: nn.Module, config: Any) -> int:
    return int(getattr(attn, "head_dim", None) or config.hidden_size // config.num_attention_heads)


def query_heads_per_unit(model: Any) -> int:
    """Query heads one attention unit holds: num_attention_heads // num_key_value_heads (decoders), 1 (ModernBERT)."""
    config = model.config
    if model_family(model) != DECODER:
        return 1
    kv = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    return config.num_attention_heads // kv


def attention_unit_site(layer: nn.Module, family: str, config: Any, ratio: int) -> UnitSite:
    """The attention units of one layer: key/value groups (decoders) or heads (ModernBERT)."""
    if family == DECODER:
        attn = layer.self_attn
        d = _head_dim(attn, config)
        parts = (
            Part(attn, "q_proj", 0, ratio * d),
            Part(attn, "k_proj", 0, d),
            Part(attn, "v_proj", 0, d),
            Part(attn, "o_proj", 1, ratio * d),
        )
        return UnitSite("head", parts, ((3, None, False), (2, None, False)))
    attn = layer.attn
    d = _head_dim(attn, config)
    parts = (Part(attn, "Wqkv", 0, d, stack=3), Part(attn, "Wo", 1, d))
    return UnitSite("head", parts, ((1, None, False), (0, 2, False)))


def ffn_unit_site(layer: nn.Module, family: str) -> UnitSite:
    """The gated-MLP units of one layer (module docstring)."""
    mlp = layer.mlp
    if family == DECODER:
        parts = (Part(mlp, "gate_proj", 0, 1), Part(mlp, "up_proj", 0, 1), Part(mlp, "down_proj", 1, 1))
        return UnitSite("ffn", parts, ((2, None, False), (1, None, False), (0, None, True)), mlp.act_fn)
    parts = (Part(mlp, "Wi", 0, 1, stack=2), Part(mlp, "Wo", 1, 1))
    return UnitSite("ffn", parts, ((1, None, False), (0, 1, False), (0, 0, True)), mlp.act)


def unit_sites(model: Any) -> list[tuple[UnitSite, UnitSite]]:
    """Per layer, (attention site, MLP site); `ValueError` if the model is not of a supported family."""
    found = family_layers(model)
    if found is None:
        raise ValueError(f"{type(model).__name__} is not one of {SUPPORTED_FAMILIES}")
    family, layers = found
    ratio = query_heads_per_unit(model)
    return [(attention_unit_site(layer, family, model.config, ratio), ffn_unit_site(layer, family)) for layer in layers]


# The classification head of each family's *ForSequenceClassification (masked with --mask_classifier).
CLASSIFIER_MODULES = {DECODER: ("score",), MODERNBERT: ("head.dense", "classifier")}


def family_targets(model: Any) -> tuple[list[str], list[str]] | None:
    """The default θ_pr of a ModernBERT or Llama-family model: (every matrix its attention and MLP units span, in
    model order; its classifier modules), or None for another layout."""
    family = model_family(model)
    if family is None:
        return None
    wanted = {id(part.linear) for sites in unit_sites(model) for site in sites for part in site.parts}
    layers = [name for name, module in model.named_modules() if id(module) in wanted]
    heads = [name for name, module in model.named_modules() if name in CLASSIFIER_MODULES[family]]
    return layers, [name for name in heads if isinstance(model.get_submodule(name), nn.Linear)]
