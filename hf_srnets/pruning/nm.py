"""N:M semi-structured masks (`--mask_granularity nm`): exactly N of every M consecutive input weights kept.

Each row of W (one output) is cut into groups of M consecutive input weights, and a mask keeps the N with the
largest scores in every group (ties: the earlier position is pruned first, as in the exact-count selection of
`selection.py`). 2:4 is the pattern NVIDIA's sparse tensor cores (Ampere and later) run, through
`torch.sparse.to_sparse_semi_structured` (`hf_srnets.compact.to_semi_structured`). The sparsity is fixed at
1 − N/M. With mask training the binary mask is the per-group top-N of the scores m̂ at every step (no threshold φ),
and the straight-through gradient is the element one (Win-win §3.2.2, Eq. 1).
"""

from __future__ import annotations

import torch

from ..errors import InputError


def check_nm(n: int, m: int, sparsity: float) -> None:
    """1 ≤ N < M, and `sparsity` = 1 − N/M (an N:M mask has no other); `InputError` naming the fix."""
    if isinstance(n, bool) or isinstance(m, bool) or not (isinstance(n, int) and isinstance(m, int)) or not 1 <= n < m:
        raise InputError(f"--nm_n and --nm_m must be integers with 1 <= N < M, got {n!r}:{m!r}: e.g. 2:4.")
    if abs(sparsity - (1.0 - n / m)) > 1e-9:
        raise InputError(
            f"--mask_granularity nm keeps {n} of every {m} weights, a sparsity of {1.0 - n / m:g}, but --sparsity is "
            f"{sparsity:g}: pass --sparsity {1.0 - n / m:g}."
        )


def check_nm_shape(shape: tuple[int, ...] | torch.Size, m: int, name: str) -> None:
    """The input dimension is a multiple of M; `InputError` naming the matrix otherwise."""
    if shape[-1] % m:
        raise InputError(
            f"--mask_granularity nm groups {m} consecutive input weights, but {name} has {shape[-1]} inputs: drop it "
            f"from the target modules, or use --mask_granularity element."
        )


def nm_mask(scores: torch.Tensor, n: int, m: int) -> torch.Tensor:
    """The bool mask keeping the `n` largest of every `m` consecutive entries of the last dimension."""
    groups = scores.reshape(*scores.shape[:-1], scores.shape[-1] // m, m)
    order = torch.sort(groups, dim=-1, stable=True).indices  # ascending; equal scores keep their position order
    kept = torch.ones_like(groups, dtype=torch.bool)
    kept.scatter_(-1, order[..., : m - n], False)
    return kept.reshape(scores.shape)


def is_nm(mask: torch.Tensor, n: int, m: int) -> bool:
    """Whether `mask` (bool or 0/1, last dimension a multiple of m) has exactly n nonzeros in every group of m."""
    kept = (mask != 0).reshape(*mask.shape[:-1], mask.shape[-1] // m, m).sum(-1)
    return bool((kept == n).all())
