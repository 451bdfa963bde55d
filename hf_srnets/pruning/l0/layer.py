"""The hard-concrete masked linear layer (Robust Tickets §3.2, Eq. 1-5; Louizos et al. 2018).

Every weight W_i of a frozen `base_layer` gets a gate m_i ~ HardConcrete(log α_i, β) with γ = −0.1, ζ = 1.1:

    u ~ U(0, 1)                                   (Eq. 1)
    s = σ((log u − log(1 − u) + log α) / β)       (Eq. 2)
    m = min(1, max(0, s·(ζ − γ) + γ))             (Eq. 3)

W_eff = m ⊙ W in training (a new u per forward pass; gradients reach log α by reparametrisation), and the
deterministic gate m̂ = min(1, max(0, σ(log α)·(ζ − γ) + γ)) (Eq. 5) in evaluation. u is clamped to
[1e-6, 1 − 1e-6] so that log u and log(1 − u) stay finite. The expected L0 norm per gate, P(m ≠ 0), is
σ(log α − β·log(−γ/ζ)) (Eq. 4).

A layer is either *searching* (the gates above) or *fixed*: a binary ticket in train and eval mode, as after
extraction (§3.3) or for retraining the weights under it (`--mask_from`).

Precision: log α is float32 whatever the model's dtype (`KeepsFloat32`: `model.half()` or `.to(bfloat16)` leaves
it alone), u, s and the gate are computed in float32 and only the product m ⊙ W is formed in W's dtype, so
∂L/∂log α is float32 and `merged_weight()` is exactly what `forward` multiplies by.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..precision import KeepsFloat32
from ..wrapped import MaskedLayer

GAMMA = -0.1
ZETA = 1.1
U_EPS = 1e-6


def init_log_alpha(keep: float) -> float:
    """log α = logit((p − γ)/(ζ − γ)): the value whose deterministic gate (Eq. 5) is p."""
    if not 0.0 < keep < 1.0:
        raise ValueError(f"the initial gate p must be in (0, 1), got {keep}")
    q = (keep - GAMMA) / (ZETA - GAMMA)
    return math.log(q / (1.0 - q))


def hard_concrete_sample(log_alpha: torch.Tensor, u: torch.Tensor, temperature: float) -> torch.Tensor:
    """Eq. 2-3 for given uniform samples u (already clamped away from 0 and 1)."""
    s = torch.sigmoid((torch.log(u) - torch.log1p(-u) + log_alpha) / temperature)
    return (s * (ZETA - GAMMA) + GAMMA).clamp(0.0, 1.0)


def deterministic_gate(log_alpha: torch.Tensor) -> torch.Tensor:
    """Eq. 5: m̂ = min(1, max(0, σ(log α)·(ζ − γ) + γ))."""
    return (torch.sigmoid(log_alpha) * (ZETA - GAMMA) + GAMMA).clamp(0.0, 1.0)


def expected_nonzero(log_alpha: torch.Tensor, temperature: float) -> torch.Tensor:
    """Eq. 4, per gate: P(m ≠ 0) = σ(log α − β·log(−γ/ζ)); R(m) is its mean."""
    return torch.sigmoid(log_alpha - temperature * math.log(-GAMMA / ZETA))


class HardConcreteGates:
    """The state of a set of hard-concrete gates, shared by the element layer (a gate a weight) and the unit groups
    (`l0.units.HardConcreteUnits`, a gate a unit): a float32 `log_alpha`, a `ticket` buffer and whether it is `fixed`.
    Mixed into an `nn.Module` that calls `_init_gates` in its `__init__`."""

    log_alpha: nn.Parameter
    ticket: torch.Tensor

    def _init_gates(self, shape: torch.Size | tuple[int, ...], temperature: float, init_keep: float, device) -> None:
        self.temperature = temperature
        self.log_alpha = nn.Parameter(torch.full(shape, init_log_alpha(init_keep), dtype=torch.float32, device=device))
        self.register_buffer("ticket", torch.ones(shape, dtype=torch.bool, device=device), persistent=False)
        self.fixed = False

    def gates(self, training: bool) -> torch.Tensor:
        """The gate of each entry now: the ticket (fixed), a sample of Eq. 1-3 (training), or Eq. 5 (eval)."""
        if self.fixed:
            return self.ticket.to(torch.float32)
        if training:
            u = torch.rand_like(self.log_alpha).clamp(U_EPS, 1.0 - U_EPS)
            return hard_concrete_sample(self.log_alpha, u, self.temperature)
        return deterministic_gate(self.log_alpha)

    @torch.no_grad()
    def support(self) -> torch.Tensor:
        """The ticket (fixed), else the entries whose deterministic gate is above 0 (the evaluated model's, Eq. 5)."""
        if self.fixed:
            return self.ticket.clone()
        return deterministic_gate(self.log_alpha.detach()) > 0

    @torch.no_grad()
    def fix(self, mask: torch.Tensor) -> None:
        """Use the binary `mask` (a ticket) in train and eval mode from now on; log α is kept."""
        self.ticket.copy_(mask.reshape(self.ticket.shape).to(torch.bool))
        self.fixed = True

    @torch.no_grad()
    def load_log_alpha(self, saved: torch.Tensor, what: str) -> None:
        """Restore a saved log α and go back to search mode; refuse another shape or dtype (`what` needs it)."""
        if saved.shape != self.log_alpha.shape or saved.dtype != self.log_alpha.dtype:
            raise ValueError(
                f"A saved log_alpha is a {saved.dtype} tensor of shape {tuple(saved.shape)}; {what} a "
                f"{self.log_alpha.dtype} tensor of shape {tuple(self.log_alpha.shape)}."
            )
        self.log_alpha.copy_(saved)
        self.fixed = False


class HardConcreteLinear(HardConcreteGates, KeepsFloat32, MaskedLayer):
    """Wraps a frozen `nn.Linear` with a float32 `log_alpha` of the weight's shape (the only tensor that trains).

    A `MaskedLayer` with a search state (`has_search_state`): `mask_scores` (= `log_alpha`), `binary_mask()`,
    `merged_weight()`, `set_fixed_mask()`, `search_state()` / `load_search_state()` are its own.
    In search mode `binary_mask()` is the support of the deterministic gate (m̂ > 0, the weights the evaluated
    model uses) and `merged_weight()` is m̂ ⊙ W (the evaluated model exactly); for a fixed ticket both are the
    ticket.
    """

    float32_tensors = ("log_alpha",)
    has_search_state = True

    def __init__(self, base_layer: nn.Linear, temperature: float = 2 / 3, init_keep: float = 0.9) -> None:
        super().__init__(base_layer)
        weight = base_layer.weight
        self._init_gates(weight.shape, temperature, init_keep, weight.device)

    @property
    def mask_scores(self) -> nn.Parameter:
        """The mask parameters under the name every masked layer uses (`SRNetModel.masked_layers_scores`)."""
        return self.log_alpha

    # -- state ------------------------------------------------------------------------------------------
    @torch.no_grad()
    def set_fixed_mask(self, mask: torch.Tensor) -> None:
        """Use the binary `mask` (a ticket) in train and eval mode from now on; log α is kept."""
        self.fix(mask)

    def search_state(self) -> dict[str, torch.Tensor]:
        """The float state a search directory saves besides the packed ticket (nothing for a fixed ticket)."""
        return {} if self.fixed else {"log_alpha": self.log_alpha.detach().cpu().contiguous()}

    def load_search_state(self, state: dict[str, torch.Tensor]) -> None:
        """Restore `search_state()` and go back to search mode; refuse a tensor of another shape or dtype."""
        self.load_log_alpha(state["log_alpha"], "this layer needs")

    # -- forward ----------------------------------------------------------------------------------------
    def gate(self) -> torch.Tensor:
        """The gate applied to W now: the ticket (fixed), a sample of Eq. 1-3 (training), or Eq. 5 (eval)."""
        return self.gates(self.training)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.base_layer.weight
        return F.linear(x, weight * self.gate().to(weight.dtype), self.base_layer.bias)  # as merged_weight()

    @torch.no_grad()
    def binary_mask(self) -> torch.Tensor:
        """The ticket (fixed), else the support of the deterministic gate, m̂ > 0 (Eq. 5)."""
        return self.support()

    @torch.no_grad()
    def merged_weight(self) -> torch.Tensor:
        """The weight a plain `nn.Linear` needs to reproduce the layer in eval mode: ticket ⊙ W or m̂ ⊙ W."""
        weight = self.base_layer.weight
        gate = self.ticket if self.fixed else deterministic_gate(self.log_alpha.detach())
        return weight * gate.to(weight.dtype)

    def extra_repr(self) -> str:
        mode = "fixed" if self.fixed else f"search, temperature={self.temperature:.4g}"
        return f"in_features={self.in_features}, out_features={self.out_features}, {mode}"
