"""Hard-concrete gates over structured units: `--pruning l0` at `--mask_granularity head|ffn|hybrid|block`.

One log α per unit of a group (`hf_srnets.pruning.units`: an attention head's rows of W_Q, W_K, W_V and columns of
W_AO; an FFN unit's row of W_in and column of W_out; a b×b tile), shared by every matrix the unit spans: CoFi's
structured gates z_head and z_int (Xia et al. 2022, §3.1) with the hard concrete of Robust Tickets Eq. 1-5. A
training forward pass draws one gate per unit (Eq. 1-3), once (`new_draw()` at the start of the pass,
`L0Pruning.before_forward`), and every member matrix multiplies its tile of weights by that draw, so a head's four
matrices keep or drop it together; evaluation uses the deterministic gate m̂ (Eq. 5). A fixed ticket (a unit
mask, after extraction or for `--mask_from`) replaces the gates in train and eval mode, as for the element layer.

The expected L0 norm counts weights, not units: a unit's P(m ≠ 0) (Eq. 4) weighs by the weights it covers in all
its matrices (`weights_per_unit`), so R(m) is the expected fraction of θ_pr kept at every granularity.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..precision import KeepsFloat32
from ..units.layer import UnitMaskedLinear, expand_stacked
from .layer import HardConcreteGates


class HardConcreteUnits(HardConcreteGates, KeepsFloat32, nn.Module):
    """The float32 log α of one unit group (shape = the group's shape), its training draw and its fixed ticket."""

    float32_tensors = ("log_alpha",)
    checkpoint_tensors = ("log_alpha",)

    def __init__(
        self, kind: str, shape: tuple[int, ...], temperature: float, init_keep: float, device: torch.device | None
    ) -> None:
        super().__init__()
        self.kind = kind
        self._init_gates(shape, temperature, init_keep, device)
        self._draw: torch.Tensor | None = None

    @property
    def mask_scores(self) -> nn.Parameter:
        return self.log_alpha

    def __getstate__(self) -> dict:
        """A copy (deepcopy, pickle) starts without the draw: a tensor of a forward pass's graph does not copy."""
        return {**self.__dict__, "_draw": None}

    def new_draw(self) -> None:
        """Forget the last training draw: the next gate in training mode draws the units' gates again."""
        self._draw = None

    def gate(self, training: bool) -> torch.Tensor:
        """Per unit: the ticket (fixed), this forward pass's draw of Eq. 1-3 (training), or m̂ of Eq. 5 (eval)."""
        if self.fixed or not training:
            return self.gates(training)
        if self._draw is None:
            self._draw = self.gates(training)
        return self._draw

    def unit_mask(self) -> torch.Tensor:
        """The ticket (fixed), else the units whose deterministic gate is above 0 (the evaluated model's)."""
        return self.support()

    def set_fixed(self, unit_mask: torch.Tensor) -> None:
        """Use the binary unit mask (a ticket) in train and eval mode from now on; log α is kept."""
        self.fix(unit_mask)

    def extra_repr(self) -> str:
        mode = "fixed" if self.fixed else f"search, temperature={self.temperature:.4g}"
        return f"kind={self.kind}, shape={tuple(self.log_alpha.shape)}, {mode}"


class HardConcreteUnitLinear(UnitMaskedLinear):
    """A frozen `nn.Linear` whose weights are gated by the units of a `HardConcreteUnits` group it shares.

    W_eff = g ⊙ W with g the unit gate expanded over each unit's tile in this matrix; gradients reach log α through
    the expansion (autograd sums them over the unit's weights in every member). `binary_mask()` is the support of
    the units' gates, `merged_weight()` m̂ ⊙ W (the evaluated model exactly) or the ticket ⊙ W. Every member saves
    its group's log α as its search state (a copy a member: a few numbers a layer), so loading restores all alike.
    """

    has_search_state = True

    @property
    def units(self) -> HardConcreteUnits:
        return self._units  # type: ignore[return-value]

    @property
    def log_alpha(self) -> nn.Parameter:
        return self.units.log_alpha

    @property
    def fixed(self) -> bool:
        return self.units.fixed

    def element_gate(self, training: bool) -> torch.Tensor:
        """The units' gate expanded over this matrix (float32, the weight's shape)."""
        return expand_stacked(self.units.gate(training).reshape(self.grid), self.tile, self.stack)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.base_layer.weight
        return F.linear(x, weight * self.element_gate(self.training).to(weight.dtype), self.base_layer.bias)

    @torch.no_grad()
    def merged_weight(self) -> torch.Tensor:
        weight = self.base_layer.weight
        return weight * self.element_gate(training=False).to(weight.dtype)

    def search_state(self) -> dict[str, torch.Tensor]:
        return {} if self.fixed else {"log_alpha": self.log_alpha.detach().cpu().clone()}  # a copy a member

    def load_search_state(self, state: dict[str, torch.Tensor]) -> None:
        self.units.load_log_alpha(state["log_alpha"], f"these {self.units.kind} units need")
