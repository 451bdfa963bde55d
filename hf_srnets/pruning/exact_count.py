"""Exact-count mask selection: m = 1[m̂ ≥ φ] with φ chosen so that exactly ⌊s·n⌋ entries are pruned.

Shared by every method that turns scores (learned scores, Win-win §3.2.2 Eq. 1, or weight magnitudes,
Algorithm 1) into a binary mask of an exact sparsity.

Precision: selection and comparison are made in float32 whatever the scores' dtype. φ is a float32 value
(returned as the Python float that holds it exactly), and m̂ ≥ φ is compared between float32 tensors: torch's
type promotion would otherwise compare an fp16/bf16 score tensor with φ rounded to fp16/bf16, and change the
count of zeros (`hf_srnets.pruning.precision`).
"""

from __future__ import annotations

import math

import torch


def binarize(scores: torch.Tensor, threshold: torch.Tensor, tie_index: torch.Tensor, has_tie: bool) -> torch.Tensor:
    """m = 1[m̂ ≥ φ], except that among scores exactly equal to φ only flat positions ≥ `tie_index` are kept.

    The tie rule makes "exactly ⌊s·n⌋ zeros" hold even when many scores are equal (e.g. right after the
    hard init, where all kept scores equal α·φ). Both sides are compared in float32 (a no-op for float32 scores).
    """
    scores = scores.to(torch.float32)
    threshold = torch.as_tensor(threshold, dtype=torch.float32, device=scores.device)
    if not has_tie:
        return scores >= threshold
    flat = scores.reshape(-1)
    positions = torch.arange(flat.numel(), device=flat.device)
    keep = (flat > threshold) | ((flat == threshold) & (positions >= tie_index))
    return keep.view_as(scores)


def kth_smallest(flat: torch.Tensor, k: int, by_topk: bool | None = None) -> torch.Tensor:
    """The k-th smallest value (1-based) of a 1-D tensor, as a 0-d tensor on its device.

    A selection, not a full sort (seconds instead of a minute for BERT-base's 85M scores on a CPU). The primitive
    depends on the device (`by_topk`, default: on any device but the CPU): on the CPU `kthvalue` is a quickselect,
    but on CUDA it runs each slice in one thread block, 11.9 ms for one 2.4M-score BERT-base FFN matrix on an H100
    against 0.17 ms for `topk` (`bench/bench_threshold_update.py`, `results/gpu/2026-11-28_*`). `topk` keeps the
    shorter side: the k smallest (their largest), or the n - k + 1 largest (their smallest).
    """
    if by_topk is None:
        by_topk = flat.device.type != "cpu"
    if not by_topk:
        return flat.kthvalue(k).values
    n = flat.numel()
    if k <= n - k + 1:
        return flat.topk(k, largest=False, sorted=False).values.max()
    return flat.topk(n - k + 1, largest=True, sorted=False).values.min()


def exact_thresholds(score_list: list[torch.Tensor], num_zeros: int) -> list[tuple[float, int, bool]]:
    """Per-tensor `(φ, tie_index, has_tie)` so that exactly `num_zeros` of all entries are pruned.

    The pruned entries are the first `num_zeros` in the order (score, position), position being the
    index in the concatenation of the flattened tensors: ties are broken deterministically by position.
    Call it with one tensor for local sparsity, with all of them for global sparsity.
    """
    flat = torch.cat([s.detach().reshape(-1).float() for s in score_list])
    total = flat.numel()
    if not 0 <= num_zeros <= total:
        raise ValueError(f"num_zeros={num_zeros} out of range for {total} entries")
    results: list[tuple[float, int, bool]] = []
    if num_zeros == 0:
        return [(-math.inf, 0, False)] * len(score_list)
    if num_zeros == total:
        return [(math.inf, 0, False)] * len(score_list)
    phi_t = kth_smallest(flat, num_zeros + 1)  # the smallest kept score
    ties_pruned = num_zeros - int((flat < phi_t).sum())  # entries equal to φ that are pruned: the first by position
    phi = float(phi_t)
    straddles = ties_pruned > 0
    first_kept = int(torch.nonzero(flat == phi_t)[ties_pruned]) if straddles else 0  # only a tie needs it
    offset = 0
    for s in score_list:
        n = s.numel()
        tie_index = min(max(first_kept - offset, 0), n)
        has_tie = straddles and bool((s.detach().reshape(-1).float() == phi).any())
        results.append((phi, tie_index if has_tie else 0, has_tie))
        offset += n
    return results


def exact_mask(scores: torch.Tensor, sparsity: float) -> torch.Tensor:
    """The binary mask keeping all but the ⌊s·n⌋ smallest scores (ties pruned first by position)."""
    num_zeros = math.floor(sparsity * scores.numel())
    ((phi, tie_index, has_tie),) = exact_thresholds([scores], num_zeros)
    return binarize(scores, torch.tensor(phi, dtype=torch.float32), torch.tensor(tie_index), has_tie)
