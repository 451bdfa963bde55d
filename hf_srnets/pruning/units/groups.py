"""Mask units of the structured granularities: which weights one mask bit covers, in which matrices.

A unit is a set of weights pruned together; it covers, in each matrix it spans (a *member*), a rectangular tile
of `tile = (rows, cols)` weights, and the member's units form a grid of `grid = (out / rows, in / cols)` tiles.
The element mask of a member is its unit mask expanded: m_e = m_u for every weight e of unit u.

- `block`: one group per masked matrix, units = its b×b tiles (grid (out/b, in/b)).
- `ffn` and `hybrid` (older name `neuron`), FFN part: one group per Transformer layer, unit j = row j of W_in
  (tile (1, d_model)) and column j of W_out (tile (d_model, 1)); the FFN intermediate unit of neuron pruning
  (Lagunas et al. 2021's "hybrid" rows/columns use the same units). `ffn` leaves attention dense.
- `hybrid` and `head`, attention part: one group per layer, head h = rows [h·d, (h+1)·d) of W_Q, W_K, W_V
  (tile (d, d_model)) and the same columns of W_AO (tile (d_model, d)), d = the head size (Michel et al. 2019).

`head` leaves the FFN matrices unmasked (dense), `ffn` the attention matrices. Group kinds (`"block"`, `"ffn"`,
`"head"`) are the pools of the global scope: FFN units and heads are ranked separately.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from torch import nn

from ...compact.families import Part, model_family, unit_sites
from ...compact.layout import attention_site, encoder_layers, ffn_site

UNIT_KINDS = ("block", "ffn", "head")


@dataclass(frozen=True)
class UnitMember:
    """One masked matrix of a unit group: its module name, the tile one unit covers in it and the unit grid;
    `stack` > 1 for a fused matrix holding that grid `stack` times along its rows (ModernBERT's `Wqkv`, `Wi`)."""

    name: str
    tile: tuple[int, int]
    grid: tuple[int, int]
    stack: int = 1


@dataclass(frozen=True)
class UnitGroup:
    """Units sharing one score tensor of shape `shape` (n units in order) and one exact-count selection."""

    kind: str
    shape: tuple[int, ...]
    members: tuple[UnitMember, ...]


def _largest_fitting_block(dims: list[int], wanted: int) -> int:
    """The largest divisor of gcd(dims) not above `wanted` (1 at worst)."""
    common = math.gcd(*dims)
    return max(b for b in range(1, min(common, wanted) + 1) if common % b == 0)


def block_groups(model: nn.Module, targets: list[str], block_size: int) -> list[UnitGroup]:
    """One group per target matrix, units = its `block_size`×`block_size` tiles; `ValueError` if b does not divide
    both dimensions, naming the module, its shape and a block size that fits every target."""
    shapes = {name: tuple(model.get_submodule(name).weight.shape) for name in targets}
    groups = []
    for name, (rows, cols) in shapes.items():
        if rows % block_size or cols % block_size:
            fits = _largest_fitting_block([d for shape in shapes.values() for d in shape], block_size)
            raise ValueError(
                f"--block_size {block_size} does not tile {name}, whose weight is {rows}×{cols}: a block size must "
                f"divide both dimensions of every masked matrix. Use --block_size {fits} (fits all of them), or "
                "--mask_granularity element."
            )
        grid = (rows // block_size, cols // block_size)
        groups.append(UnitGroup("block", grid, (UnitMember(name, (block_size, block_size), grid),)))
    return groups


def _names(model: nn.Module) -> dict[int, str]:
    return {id(module): name for name, module in model.named_modules()}


def ffn_groups(model: nn.Module) -> list[UnitGroup]:
    """Per encoder layer, the FFN intermediate units: row j of W_in and column j of W_out."""
    names = _names(model)
    groups = []
    holder, attr = encoder_layers(model)
    for index, layer in enumerate(getattr(holder, attr)):
        site = ffn_site(layer, index)
        w_in, w_out = site.w_in, site.w_out
        width = w_in.out_features
        if w_out.in_features != width:
            raise ValueError(f"Layer {index}: W_in has {width} units but W_out reads {w_out.in_features}.")
        members = (
            UnitMember(names[id(w_in)], (1, w_in.in_features), (width, 1)),
            UnitMember(names[id(w_out)], (w_out.out_features, 1), (1, width)),
        )
        groups.append(UnitGroup("ffn", (width,), members))
    return groups


def head_groups(model: nn.Module) -> list[UnitGroup]:
    """Per encoder layer, the attention heads: rows [h·d, (h+1)·d) of W_Q, W_K, W_V and those columns of W_AO."""
    names = _names(model)
    groups = []
    holder, attr = encoder_layers(model)
    for index, layer in enumerate(getattr(holder, attr)):
        try:
            site = attention_site(layer, index)
        except ValueError as err:
            raise ValueError(
                f"--mask_granularity neuron/head needs per-head attention projections: {err}. Use "
                "--mask_granularity element or block for this model."
            ) from None
        size, heads = site.head_size, site.num_heads
        qkv = [getattr(site.attention, attr_name) for attr_name in site.qkv]
        members = [UnitMember(names[id(lin)], (size, lin.in_features), (heads, 1)) for lin in qkv]
        members.append(UnitMember(names[id(site.output)], (site.output.out_features, size), (1, heads)))
        groups.append(UnitGroup("head", (heads,), tuple(members)))
    return groups


def _family_member(names: dict[int, str], part: Part, units: int) -> UnitMember:
    linear = part.linear
    if part.dim == 0:
        return UnitMember(names[id(linear)], (part.size, linear.in_features), (units, 1), part.stack)
    return UnitMember(names[id(linear)], (linear.out_features, part.size), (1, units), part.stack)


def family_groups(model: nn.Module, kind: str) -> list[UnitGroup]:
    """ModernBERT and Llama-family decoders (`hf_srnets.compact.families`): per layer, the `head` group (a decoder's
    units are its key/value groups, each with its query heads; ModernBERT's its heads, in the Q, K and V blocks of
    the fused `Wqkv`) or the `ffn` group (row j of `gate_proj` and `up_proj`, column j of `down_proj`; ModernBERT:
    row j of both halves of `Wi`, column j of `Wo`): a gated MLP's unit is pruned in all its projections at once."""
    names = _names(model)
    groups = []
    for attention, ffn in unit_sites(model):
        site = attention if kind == "head" else ffn
        members = tuple(_family_member(names, part, site.units) for part in site.parts)
        groups.append(UnitGroup(kind, (site.units,), members))
    return groups


def _check_covered(groups: list[UnitGroup], targets: list[str], granularity: str, dense: set[str]) -> None:
    """Every unit's matrices are all targets, and every target belongs to a unit (or is left dense on purpose)."""
    target_set = set(targets)
    members = set()
    for group in groups:
        names = [member.name for member in group.members]
        missing = [name for name in names if name not in target_set]
        if missing:
            raise ValueError(
                f"--mask_granularity {granularity}: a unit spans {names}, but {missing[0]!r} is not among the "
                "target modules; target all of them (the default targets do), or use --mask_granularity element."
            )
        members.update(names)
    stray = [name for name in targets if name not in members and name not in dense]
    if stray:
        raise ValueError(
            f"--mask_granularity {granularity}: {stray[0]!r} belongs to no FFN unit or attention head; drop it "
            "from the target modules or use --mask_granularity element or block."
        )


HYBRID = ("hybrid", "neuron")  # FFN units and heads; `neuron` is the older name of `hybrid`


def unit_groups(model: nn.Module, targets: list[str], granularity: str, block_size: int) -> list[UnitGroup]:
    """The unit groups of `granularity` over the (still plain `nn.Linear`) target modules of `model`.

    `block`: one group per target. `hybrid` (or its alias `neuron`): per layer, the FFN group then the head group.
    `head`: per layer, the head group; FFN matrices among the targets stay dense. `ffn`: per layer, the FFN group;
    attention matrices among the targets stay dense. Raises `ValueError` for a granularity the model's layout
    cannot give (DeBERTa-v2's heads, a block size that does not divide a matrix).
    """
    if granularity == "block":
        return block_groups(model, targets, block_size)
    if granularity not in ("ffn", "head", *HYBRID):
        raise ValueError(f"No units for mask_granularity={granularity!r}: use block, ffn, head or hybrid.")
    family = model_family(model) is not None  # ModernBERT, Llama-family decoders
    ffn = family_groups(model, "ffn") if family else ffn_groups(model)
    heads = [] if granularity == "ffn" else (family_groups(model, "head") if family else head_groups(model))
    if granularity == "head":
        dense = {member.name for group in ffn for member in group.members}
        groups = heads
    elif granularity == "ffn":
        dense = set(_attention_names(model, family))
        groups = ffn
    else:
        dense = set()
        groups = [group for pair in zip(ffn, heads) for group in pair]
    _check_covered(groups, targets, granularity, dense)
    return groups


def _attention_names(model: nn.Module, family: bool = False) -> list[str]:
    """The attention projections (Q, K, V, W_AO) of every layer that has per-head projections; of a `family` model
    (ModernBERT, Llama-family decoders: no BERT encoder layer list), the matrices of its head groups."""
    if family:
        return [member.name for group in family_groups(model, "head") for member in group.members]
    names = _names(model)
    holder, attr = encoder_layers(model)
    found = []
    for index, layer in enumerate(getattr(holder, attr)):
        try:
            site = attention_site(layer, index)
        except ValueError:
            continue
        found += [names[id(getattr(site.attention, a))] for a in site.qkv] + [names[id(site.output)]]
    return found
