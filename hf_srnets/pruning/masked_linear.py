"""The masked linear layer of every method with one score per weight (a method with a layer of its own brings it):
binarised scores in the forward pass, straight-through gradients backward.

Win-win §3.2.2, Eq. 1: m = 1[m̂ ≥ φ]; the frozen weight W is replaced by m ⊙ W, and ∂L/∂m̂ := ∂L/∂m.
Fixed masks (IMP, a loaded subnetwork) are the same layer with scores 1 (kept) / 0 (pruned) and φ = 0.5.

Precision: m̂ and φ are float32 whatever the model's dtype (`KeepsFloat32`: `model.half()` or `.to(bfloat16)`
leaves them alone), the comparison m̂ ≥ φ is made in float32, ∂L/∂m̂ is computed and returned in float32, and
only W, m ⊙ W and the activations use the compute dtype. So the ⌊s·n⌋ count and the selected entries do not
depend on `--fp16`/`--bf16`, and `merged_weight()` (m ⊙ W in W's dtype) equals what `forward` multiplies by.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from .nm import check_nm_shape, is_nm, nm_mask
from .scores import ThresholdedScores
from .wrapped import MaskedLayer


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


class MaskedLinear(ThresholdedScores, MaskedLayer):
    """Wraps a frozen `nn.Linear` (`base_layer`) with real-valued mask scores m̂ and a threshold φ.

    `mask_scores` has the weight's shape and is the only tensor that trains (unless the base layer is
    made trainable, as for a classifier trained from scratch). A `MaskedLayer`: `binary_mask()` and
    `set_fixed_mask()` are its own, `merged_weight()` the default; `checkpoint_tensors` (from `ThresholdedScores`)
    adds φ and its tie rule to what a training checkpoint restores.
    `mask_scores` and `threshold` stay float32 under any cast of the model (`ThresholdedScores`).
    """

    def __init__(self, base_layer: nn.Linear, nm: tuple[int, int] | None = None) -> None:
        super().__init__(base_layer)
        self._init_scores(base_layer.weight.shape, base_layer.weight.device)
        self.nm = nm  # (N, M): the mask keeps the N highest scores of every M consecutive inputs (`pruning.nm`)
        if nm is not None:
            check_nm_shape(tuple(base_layer.weight.shape), nm[1], f"a {tuple(base_layer.weight.shape)} weight")

    def scores_mask(self) -> torch.Tensor:
        """m = 1[m̂ ≥ φ] with the tie rule; with an N:M pattern, the top N of m̂ in every group of M instead."""
        if self.nm is None:
            return super().scores_mask()
        return nm_mask(self.mask_scores.detach(), *self.nm)

    # -- initialisation (appendix Eq. 1 and 2) -------------------------------------------------------
    @torch.no_grad()
    def init_scores(self, mask_init: str, sparsity: float, alpha: float, init_threshold: float) -> None:
        """Hard init (Eq. 1): 0 for the ⌊s·n⌋ smallest |W|, α·φ elsewhere, φ = init_threshold.

        Soft init (Eq. 2): m̂ = |W|, with φ chosen so that exactly ⌊s·n⌋ entries are pruned.
        N:M: the kept weights are the N largest |W| of every group; hard: α·φ for them, 0 for the rest; soft: |W|.
        """
        if self.nm is not None:
            magnitude = self.base_layer.weight.detach().abs().float()
            kept = nm_mask(magnitude, *self.nm)
            self.mask_scores.copy_(magnitude if mask_init == "soft" else torch.where(kept, alpha * init_threshold, 0.0))
            self.set_threshold(init_threshold, 0, False)
            return
        self.init_from_magnitude(self.base_layer.weight.detach().abs(), mask_init, sparsity, alpha, init_threshold)

    @torch.no_grad()
    def set_fixed_mask(self, mask: torch.Tensor) -> None:
        """Fix the binary mask: scores become 1 (kept) / 0 (pruned) with φ = 0.5 (an N:M layer takes N:M masks only)."""
        if self.nm is not None and not is_nm(mask.reshape(self.mask_scores.shape), *self.nm):
            raise ValueError(
                f"This mask is not {self.nm[0]}:{self.nm[1]} (exactly {self.nm[0]} kept in every {self.nm[1]} "
                "consecutive inputs): load it with the mask_granularity it was saved with."
            )
        self.fix_scores(mask)

    # -- forward ----------------------------------------------------------------------------------------
    def binary_mask(self) -> torch.Tensor:
        """The current binary mask m as a bool tensor (no gradient)."""
        return self.scores_mask()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        binary = self.scores_mask()
        weight = _MaskedWeight.apply(self.base_layer.weight, self.mask_scores, binary)
        return F.linear(x, weight, self.base_layer.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}"
