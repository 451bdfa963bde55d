"""The masked linear layer: binarised scores in the forward pass, straight-through gradients backward.

Win-win §3.2.2, Eq. 1: m = 1[m̂ ≥ φ]; the frozen weight W is replaced by m ⊙ W, and ∂L/∂m̂ := ∂L/∂m.
Fixed masks (IMP, a loaded subnetwork) are the same layer with scores 1 (kept) / 0 (pruned) and φ = 0.5.

Precision: m̂ and φ are float32 whatever the model's dtype (`KeepsFloat32`: `model.half()` or `.to(bfloat16)`
leaves them alone), the comparison m̂ ≥ φ is made in float32, ∂L/∂m̂ is computed and returned in float32, and
only W, m ⊙ W and the activations use the compute dtype. So the ⌊s·n⌋ count and the selected entries do not
depend on `--fp16`/`--bf16`, and `merged_weight()` (m ⊙ W in W's dtype) equals what `forward` multiplies by.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ..precision import KeepsFloat32
from ..selection import binarize, exact_thresholds
from ..wrapped import WrappedLinear


class _MaskedWeight(torch.autograd.Function):
    """W_eff = m ⊙ W with the straight-through estimator ∂L/∂m̂ := ∂L/∂m = (∂L/∂W_eff) ⊙ W.

    Only the bool mask and the (already stored) weight are kept for backward. W_eff and ∂L/∂W are in W's dtype
    (the compute dtype); ∂L/∂m̂ is multiplied in float32 (an fp16 product could overflow or flush to 0) and
    returned in the scores' dtype, float32.
    """

    @staticmethod
    def forward(ctx: Any, weight: torch.Tensor, scores: torch.Tensor, binary: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(weight, binary)
        return weight * binary.to(weight.dtype)

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None, None]:
        weight, binary = ctx.saved_tensors
        grad_weight = grad_output * binary.to(grad_output.dtype) if ctx.needs_input_grad[0] else None
        grad_scores = grad_output.float() * weight.float() if ctx.needs_input_grad[1] else None
        return grad_weight, grad_scores, None


class MaskedLinear(KeepsFloat32, WrappedLinear):
    """Wraps a frozen `nn.Linear` (`base_layer`) with real-valued mask scores m̂ and a threshold φ.

    `mask_scores` has the weight's shape and is the only tensor that trains (unless the base layer is
    made trainable, as for a classifier trained from scratch). The interface `SRNetModel` relies on:
    `base_layer`, `mask_scores`, `binary_mask()`, `merged_weight()`, `set_fixed_mask()`.
    `mask_scores` and `threshold` stay float32 under any cast of the model (`KeepsFloat32`).
    """

    float32_tensors = ("mask_scores", "threshold")

    def __init__(self, base_layer: nn.Linear) -> None:
        super().__init__(base_layer)
        weight = base_layer.weight
        self.mask_scores = nn.Parameter(torch.ones_like(weight, dtype=torch.float32))
        self.register_buffer("threshold", torch.tensor(0.0, dtype=torch.float32, device=weight.device))
        self.register_buffer("tie_index", torch.tensor(0, dtype=torch.long, device=weight.device))
        self.register_buffer("has_tie", torch.tensor(False, device=weight.device))
        self._has_tie = False
        self._register_load_state_dict_pre_hook(self._sync_after_load_hook, with_module=True)

    @staticmethod
    def _sync_after_load_hook(module: MaskedLinear, state_dict: dict, prefix: str, *args: Any) -> None:
        key = prefix + "has_tie"
        if key in state_dict:
            module._has_tie = bool(state_dict[key])

    # -- initialisation (appendix Eq. 1 and 2) -------------------------------------------------------
    @torch.no_grad()
    def init_scores(self, mask_init: str, sparsity: float, alpha: float, init_threshold: float) -> None:
        """Hard init (Eq. 1): 0 for the ⌊s·n⌋ smallest |W|, α·φ elsewhere, φ = init_threshold.

        Soft init (Eq. 2): m̂ = |W|, with φ chosen so that exactly ⌊s·n⌋ entries are pruned.
        """
        magnitude = self.base_layer.weight.detach().abs().float()
        num_zeros = math.floor(sparsity * magnitude.numel())
        ((phi, tie_index, has_tie),) = exact_thresholds([magnitude], num_zeros)
        pruned = ~binarize(magnitude, torch.tensor(phi, dtype=torch.float32), torch.tensor(tie_index), has_tie)
        if mask_init == "hard":
            self.mask_scores.copy_(torch.where(pruned, 0.0, alpha * init_threshold))
            self.set_threshold(init_threshold, 0, False)
        elif mask_init == "soft":
            self.mask_scores.copy_(magnitude)
            self.set_threshold(phi, tie_index, has_tie)
        else:
            raise ValueError(f"mask_init must be 'hard' or 'soft', got {mask_init!r}")

    @torch.no_grad()
    def set_threshold(self, phi: float, tie_index: int, has_tie: bool) -> None:
        self.threshold.fill_(phi)
        self.tie_index.fill_(tie_index)
        self.has_tie.fill_(has_tie)
        self._has_tie = has_tie

    @torch.no_grad()
    def set_fixed_mask(self, mask: torch.Tensor) -> None:
        """Fix the binary mask: scores become 1 (kept) / 0 (pruned) with φ = 0.5."""
        self.mask_scores.copy_(mask.to(self.mask_scores.dtype))
        self.set_threshold(0.5, 0, False)

    # -- forward ----------------------------------------------------------------------------------------
    def binary_mask(self) -> torch.Tensor:
        """The current binary mask m as a bool tensor (no gradient)."""
        return binarize(self.mask_scores.detach(), self.threshold, self.tie_index, self._has_tie)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        binary = binarize(self.mask_scores.detach(), self.threshold, self.tie_index, self._has_tie)
        weight = _MaskedWeight.apply(self.base_layer.weight, self.mask_scores, binary)
        return F.linear(x, weight, self.base_layer.bias)

    @torch.no_grad()
    def merged_weight(self) -> torch.Tensor:
        """m ⊙ W, the weight a plain `nn.Linear` needs to reproduce this layer."""
        return self.base_layer.weight * self.binary_mask().to(self.base_layer.weight.dtype)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}"
