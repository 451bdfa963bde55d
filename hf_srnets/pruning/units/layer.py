"""Unit scores and the layer that masks a matrix by units (block tiles, FFN units, attention heads).

Win-win §3.2.2, Eq. 1 at unit level: one real score m̂_u per unit, m_u = 1[m̂_u ≥ φ] (exact ⌊s·n⌋ units pruned,
ties by position, `hf_srnets.pruning.exact_count`), and every weight e of unit u is masked by m_e = m_u. The
straight-through estimator carries over by the chain rule of m_e = m_u:

    ∂L/∂m̂_u := ∂L/∂m_u = Σ_{e ∈ u} ∂L/∂m_e = Σ_{e ∈ u} (∂L/∂W_eff)_e · W_e,

summed over the unit's weights in *all* the matrices it spans (each member layer adds its part; autograd sums
them into the one shared score).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ..scores import ThresholdedScores
from ..wrapped import MaskedLayer
from .groups import UnitGroup, UnitMember


def expand_units(grid_mask: torch.Tensor, tile: tuple[int, int]) -> torch.Tensor:
    """The element mask of a (R, C) unit grid whose units are `tile` = (r, c) weights: shape (R·r, C·c)."""
    rows, cols = grid_mask.shape
    r, c = tile
    return grid_mask[:, None, :, None].expand(rows, r, cols, c).reshape(rows * r, cols * c)


def sum_over_units(values: torch.Tensor, grid: tuple[int, int], tile: tuple[int, int], stack: int = 1) -> torch.Tensor:
    """Σ of an (R·r, C·c) tensor over each unit's tile: shape `grid` = (R, C). With `stack` = k, the tensor holds
    k such grids along its rows (a fused matrix, (k·R·r, C·c)) and each unit sums over its tile in all k."""
    if stack > 1:
        values = values.reshape(stack, -1, values.shape[-1]).sum(dim=0)
    return values.reshape(grid[0], tile[0], grid[1], tile[1]).sum(dim=(1, 3))


def expand_stacked(grid_mask: torch.Tensor, tile: tuple[int, int], stack: int) -> torch.Tensor:
    """`expand_units` repeated `stack` times along the rows (a fused matrix's element mask)."""
    mask = expand_units(grid_mask, tile)
    return mask.repeat(stack, 1) if stack > 1 else mask


class UnitScores(ThresholdedScores, nn.Module):
    """The scores m̂ of one unit group (float32, shape = the group's shape) and its threshold φ with tie rule.

    Registered once, on the first member layer (`unit_scores`), so each score is one tensor in a state dict.
    """

    def __init__(self, kind: str, shape: tuple[int, ...], device: torch.device | None = None) -> None:
        super().__init__()
        self.kind = kind
        self._init_scores(shape, device)

    @torch.no_grad()
    def set_fixed(self, unit_mask: torch.Tensor) -> None:
        """Fix the unit mask: scores 1 (kept) / 0 (pruned) with φ = 0.5."""
        self.fix_scores(unit_mask)

    def unit_mask(self) -> torch.Tensor:
        """m_u = 1[m̂_u ≥ φ] with the tie rule, a bool tensor of the scores' shape."""
        return self.scores_mask()

    def extra_repr(self) -> str:
        return f"kind={self.kind}, shape={tuple(self.mask_scores.shape)}"


class _UnitMaskedWeight(torch.autograd.Function):
    """W_eff = m ⊙ W with m = the unit mask expanded over each unit's tile; ∂L/∂m̂_u = Σ_{e ∈ tile u} (∂L/∂W_eff ⊙ W)_e
    (this matrix's part), computed in float32."""

    @staticmethod
    def forward(
        ctx: Any, weight: torch.Tensor, scores: torch.Tensor, binary: torch.Tensor, tile: tuple[int, int], stack: int
    ) -> torch.Tensor:
        ctx.save_for_backward(weight, binary)
        ctx.tile = tile
        ctx.stack = stack
        ctx.grid = tuple(scores.shape)
        return weight * binary.to(weight.dtype)

    @staticmethod
    def backward(
        ctx: Any, grad_output: torch.Tensor
    ) -> tuple[torch.Tensor | None, torch.Tensor | None, None, None, None]:
        weight, binary = ctx.saved_tensors
        grad_weight = grad_output * binary.to(grad_output.dtype) if ctx.needs_input_grad[0] else None
        grad_scores = None
        if ctx.needs_input_grad[1]:
            grad_scores = sum_over_units(grad_output.float() * weight.float(), ctx.grid, ctx.tile, ctx.stack)
        return grad_weight, grad_scores, None, None, None


class UnitMaskedLinear(MaskedLayer):
    """A frozen `nn.Linear` masked by the units of a `UnitScores` group it shares with other matrices.

    `tile` = (r, c) weights per unit in this matrix, `grid` = (out/r, in/c); the group's scores are viewed as that
    grid (FFN: (n, 1) for W_in, (1, n) for W_out; heads: (H, 1) for Q, K, V, (1, H) for W_AO; blocks: (out/b, in/b)).
    A `MaskedLayer`: `mask_scores` (the shared scores), `binary_mask()` (the element mask), `set_fixed_mask()` (fixes
    the shared units), `merged_weight()` (the default); `units` is the group's `UnitScores`. The group's first member
    (`owner`) registers the scores and lists their tensors in `checkpoint_tensors`, so a checkpoint restores each once.
    """

    def __init__(
        self,
        base_layer: nn.Linear,
        units: UnitScores,
        tile: tuple[int, int],
        grid: tuple[int, int],
        owner: bool,
        stack: int = 1,
    ) -> None:
        super().__init__(base_layer)
        rows, cols = base_layer.weight.shape
        covered = (stack * grid[0] * tile[0], grid[1] * tile[1])
        if covered != (rows, cols) or grid[0] * grid[1] != units.mask_scores.numel():
            raise ValueError(f"A unit grid {grid} of {tile} tiles does not cover a {rows}×{cols} weight.")
        if owner:
            self.unit_scores = units  # registered here only: other members refer to it without registering it
            self.checkpoint_tensors = tuple(f"unit_scores.{name}" for name in units.checkpoint_tensors)
        object.__setattr__(self, "_units", units)
        self.tile = tile
        self.grid = grid
        self.stack = stack  # > 1: a fused matrix holding the grid `stack` times along its rows

    @property
    def units(self) -> UnitScores:
        return self._units

    @property
    def mask_scores(self) -> nn.Parameter:
        return self._units.mask_scores

    def binary_mask(self) -> torch.Tensor:
        """The element mask m_e = m_u (bool, the weight's shape)."""
        return expand_stacked(self._units.unit_mask().reshape(self.grid), self.tile, self.stack)

    @property
    def unit_size(self) -> int:
        """The weights of one unit in this matrix (over all stacked copies)."""
        return self.tile[0] * self.tile[1] * self.stack

    def unit_sum(self, values: torch.Tensor) -> torch.Tensor:
        """Σ of a weight-shaped tensor over each unit's weights: shape `grid`."""
        return sum_over_units(values, self.grid, self.tile, self.stack)

    @torch.no_grad()
    def set_fixed_mask(self, mask: torch.Tensor) -> None:
        """Fix the group's units to those `mask` keeps: every matrix sharing them follows (`set_unit_masks` fixes a
        whole group from all its matrices' masks and checks that they agree)."""
        scores = self._units.mask_scores
        self._units.set_fixed(self.unit_mask_of(mask.to(scores.device), type(self).__name__).reshape(scores.shape))

    def unit_mask_of(self, mask: torch.Tensor, name: str) -> torch.Tensor:
        """The unit grid of an element mask; `ValueError` naming the module if it is not constant over a unit."""
        mask = mask.to(torch.bool).reshape(self.base_layer.weight.shape)
        kept = self.unit_sum(mask.to(torch.int64))
        size = self.unit_size
        if bool(((kept != 0) & (kept != size)).any()):
            raise ValueError(
                f"The mask of {name} is not constant over its {self.tile[0]}×{self.tile[1]} units: it cannot be "
                f"applied at this mask_granularity. Load it with mask_granularity element (the masks' own config)."
            )
        return kept == size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        units = self._units
        binary = expand_stacked(units.unit_mask().reshape(self.grid), self.tile, self.stack)
        scores = units.mask_scores.view(self.grid)
        weight = _UnitMaskedWeight.apply(self.base_layer.weight, scores, binary, self.tile, self.stack)
        return F.linear(x, weight, self.base_layer.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, tile={self.tile}"


def unit_masked_linear(base: nn.Linear, units: UnitScores, member: UnitMember, owner: bool) -> UnitMaskedLinear:
    """The `UnitMaskedLinear` of one member matrix of a unit group (`owner`: the first member, which holds the
    group's scores)."""
    return UnitMaskedLinear(base, units, member.tile, member.grid, owner=owner, stack=member.stack)


def inject_unit_layers(
    model: nn.Module,
    groups: list[UnitGroup],
    make_layer: Callable[[nn.Linear, UnitScores, UnitMember, bool], MaskedLayer] = unit_masked_linear,
    make_units: Callable[[str, tuple[int, ...], torch.device], nn.Module] = UnitScores,
) -> list[str]:
    """Wrap every member matrix of `groups` in `make_layer`'s layer (a method's `make_unit_layer`; by default a
    `UnitMaskedLinear`) over its group's shared scores (`make_units(kind, shape, device)`, a method's
    `make_unit_scores`; by default `UnitScores`); the names."""
    wrapped = []
    for group in groups:
        first = model.get_submodule(group.members[0].name)
        units = make_units(group.kind, group.shape, first.weight.device)
        for index, member in enumerate(group.members):
            parent_name, _, child = member.name.rpartition(".")
            parent = model.get_submodule(parent_name) if parent_name else model
            base = getattr(parent, child)
            setattr(parent, child, make_layer(base, units, member, index == 0))
            wrapped.append(member.name)
    return wrapped
