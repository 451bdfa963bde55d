"""`ThresholdedScores`: real-valued mask scores m̂ binarised at a threshold φ with the exact-count tie rule.

What a weight-level `MaskedLinear` and a unit-level `UnitScores` share (Win-win §3.2.2, Eq. 1): the float32
`mask_scores`, the buffers of φ and its tie rule (`threshold`, `tie_index`, `has_tie`, so checkpoints restore them),
`set_threshold`, fixed 0/1 masks, and m = 1[m̂ ≥ φ] (`pruning/exact_count.py` `binarize`).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import torch
from torch import nn

from .exact_count import binarize, exact_thresholds
from .precision import KeepsFloat32


class ThresholdedScores(KeepsFloat32):
    """Mixin for an `nn.Module` holding `mask_scores` (float32, any shape) and φ with its tie rule.

    Call `_init_scores(shape, device)` in `__init__` after `nn.Module.__init__`. Scores and φ stay float32 under
    any cast of the model (`KeepsFloat32`).
    """

    float32_tensors = ("mask_scores", "threshold")
    # what a training checkpoint restores (`SRNetModel.trainable_state_dict`), trainable or not
    checkpoint_tensors: ClassVar[tuple[str, ...]] = ("mask_scores", "threshold", "tie_index", "has_tie")

    def _init_scores(self, shape: tuple[int, ...] | torch.Size, device: torch.device | None) -> None:
        module: nn.Module = self  # type: ignore[assignment]
        module.mask_scores = nn.Parameter(torch.ones(shape, dtype=torch.float32, device=device))
        module.register_buffer("threshold", torch.tensor(0.0, dtype=torch.float32, device=device))
        module.register_buffer("tie_index", torch.tensor(0, dtype=torch.long, device=device))
        module.register_buffer("has_tie", torch.tensor(False, device=device))
        self._has_tie = False  # a Python copy of `has_tie`, read in every forward without a device sync
        module._register_load_state_dict_pre_hook(_sync_has_tie, with_module=True)

    @torch.no_grad()
    def set_threshold(self, phi: float, tie_index: int, has_tie: bool) -> None:
        self.threshold.fill_(phi)
        self.tie_index.fill_(tie_index)
        self.has_tie.fill_(has_tie)
        self._has_tie = has_tie

    @torch.no_grad()
    def init_from_magnitude(
        self, magnitude: torch.Tensor, mask_init: str, sparsity: float, alpha: float, init_threshold: float
    ) -> None:
        """Initial scores from magnitudes a (|W| per weight, or a unit's aggregate), of the scores' shape.

        Hard init (appendix Eq. 1): 0 for the ⌊s·n⌋ smallest a (ties by position), α·φ elsewhere, φ =
        `init_threshold`. Soft init (Eq. 2): m̂ = a, with φ chosen so that exactly ⌊s·n⌋ entries are pruned.
        """
        magnitude = magnitude.float()
        num_zeros = math.floor(sparsity * magnitude.numel())
        ((phi, tie_index, has_tie),) = exact_thresholds([magnitude], num_zeros)
        if mask_init == "hard":
            kept = binarize(magnitude, torch.tensor(phi, dtype=torch.float32), torch.tensor(tie_index), has_tie)
            self.mask_scores.copy_(torch.where(kept, alpha * init_threshold, 0.0))
            self.set_threshold(init_threshold, 0, False)
        elif mask_init == "soft":
            self.mask_scores.copy_(magnitude)
            self.set_threshold(phi, tie_index, has_tie)
        else:
            raise ValueError(f"mask_init must be 'hard' or 'soft', got {mask_init!r}")

    @torch.no_grad()
    def fix_scores(self, mask: torch.Tensor) -> None:
        """A fixed mask: scores 1 (kept) / 0 (pruned) with φ = 0.5."""
        self.mask_scores.copy_(mask.reshape(self.mask_scores.shape).to(self.mask_scores.dtype))
        self.set_threshold(0.5, 0, False)

    def scores_mask(self) -> torch.Tensor:
        """m = 1[m̂ ≥ φ] with the tie rule, a bool tensor of the scores' shape (no gradient).

        Eager, the Python `_has_tie` skips the tie rule when there is no tie. Under `torch.compile` the tie rule
        always runs (with `tie_index` 0 when there is no tie it gives the same mask): a Python flag read in the
        forward would be guarded, and every threshold update that flips it in some layer would recompile."""
        has_tie = True if torch.compiler.is_compiling() else self._has_tie
        return binarize(self.mask_scores.detach(), self.threshold, self.tie_index, has_tie)


def _sync_has_tie(module: ThresholdedScores, state_dict: dict, prefix: str, *args: Any) -> None:
    key = prefix + "has_tie"
    if key in state_dict:
        module._has_tie = bool(state_dict[key])
