"""`exact_thresholds` selects with `kthvalue`; it must prune exactly what sorting by (score, position) prunes."""

from __future__ import annotations

import math

import pytest
import torch

from hf_srnets.pruning.selection import exact_thresholds


def sorted_selection(score_list: list[torch.Tensor], num_zeros: int) -> list[tuple[float, int, bool]]:
    """The reference: a stable full sort, the first `num_zeros` in (score, position) order pruned."""
    flat = torch.cat([s.reshape(-1).float() for s in score_list])
    order = torch.sort(flat, stable=True).indices
    first_kept = int(order[num_zeros])
    phi = float(flat[first_kept])
    straddles = bool(flat[order[num_zeros - 1]] == phi)
    results, offset = [], 0
    for s in score_list:
        n = s.numel()
        has_tie = straddles and bool((s.reshape(-1).float() == phi).any())
        results.append((phi, min(max(first_kept - offset, 0), n) if has_tie else 0, has_tie))
        offset += n
    return results


@pytest.mark.parametrize("seed", range(5))
def test_the_selection_equals_the_sorting_selection_for_every_count(seed):
    generator = torch.Generator().manual_seed(seed)
    tensors = [torch.randn(shape, generator=generator).mul(2).round() for shape in [(5, 7), (3,), (4, 4), (9, 2)]]
    total = sum(t.numel() for t in tensors)
    assert exact_thresholds(tensors, 0) == [(-math.inf, 0, False)] * len(tensors)  # nothing pruned
    assert exact_thresholds(tensors, total) == [(math.inf, 0, False)] * len(tensors)  # everything pruned
    for num_zeros in range(1, total):  # many ties: the scores are rounded
        assert exact_thresholds(tensors, num_zeros) == sorted_selection(tensors, num_zeros), num_zeros
        for tensor in tensors:
            count = num_zeros % tensor.numel() or 1
            assert exact_thresholds([tensor], count) == sorted_selection([tensor], count)
