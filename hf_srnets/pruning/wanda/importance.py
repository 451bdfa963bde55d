"""Wanda's selection (Sun et al. 2024, §3, Eq. 1): S_ij = |W_ij| · ‖X_j‖₂, compared within each output row.

W is (out, in) and X_j the j-th input feature over all N·L calibration tokens, so ‖X_j‖₂ = sqrt(Σ_tokens X_j²).
Per output row i (the paper's comparison group), the ⌊s·in⌋ weights with the lowest S_ij are pruned; the N:M form
keeps the N largest S_ij of every M consecutive inputs of a row. Ties go by position (the earlier input is pruned
first), so a selection is reproducible.
"""

from __future__ import annotations

import math

import torch


def wanda_scores(weight: torch.Tensor, input_norm: torch.Tensor) -> torch.Tensor:
    """S = |W| · ‖X‖ (float32, W's shape): column j of |W| scaled by ‖X_j‖₂."""
    if input_norm.shape != (weight.shape[1],):
        raise ValueError(f"input norms of shape {tuple(input_norm.shape)} do not fit a weight of {tuple(weight.shape)}")
    return weight.detach().abs().float() * input_norm.float().to(weight.device)[None, :]


def row_mask(scores: torch.Tensor, sparsity: float) -> torch.Tensor:
    """Keep-mask (bool) pruning the ⌊s·in⌋ lowest scores of each row (ties: lower position first)."""
    count = math.floor(sparsity * scores.shape[1] + 1e-9)
    order = torch.sort(scores, dim=1, stable=True).indices
    mask = torch.ones_like(scores, dtype=torch.bool)
    mask.scatter_(1, order[:, :count], False)
    return mask
