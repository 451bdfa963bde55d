"""`exact_thresholds` selects with `kthvalue` (CPU) or `topk` (other devices); either way it must prune exactly
what sorting by (score, position) prunes."""

from __future__ import annotations

import functools
import math

import pytest
import torch

from hf_srnets.pruning import exact_count
from hf_srnets.pruning.exact_count import exact_thresholds, kth_smallest


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


@pytest.mark.parametrize("by_topk", [False, True], ids=["kthvalue", "topk"])
@pytest.mark.parametrize("seed", range(5))
def test_the_selection_equals_the_sorting_selection_for_every_count(seed, by_topk, monkeypatch):
    monkeypatch.setattr(exact_count, "kth_smallest", functools.partial(kth_smallest, by_topk=by_topk))
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


@pytest.mark.parametrize("by_topk", [False, True], ids=["kthvalue", "topk"])
@pytest.mark.parametrize("n", [1, 2, 7, 64])
def test_the_kth_smallest_is_python_sorted_at_every_k(n, by_topk):
    values = torch.randint(0, 5, (n,), generator=torch.Generator().manual_seed(n)).float()  # ties
    reference = sorted(values.tolist())
    for k in range(1, n + 1):
        assert float(kth_smallest(values, k, by_topk)) == reference[k - 1], k


def test_the_cpu_selects_with_kthvalue_and_other_devices_with_topk(monkeypatch):
    """The choice of primitive follows the device; a meta tensor stands in for a GPU's."""
    called = []
    monkeypatch.setattr(
        torch.Tensor,
        "kthvalue",
        lambda self, k: called.append("kthvalue") or torch.return_types.kthvalue((self[0], self[0])),
    )
    monkeypatch.setattr(
        torch.Tensor,
        "topk",
        lambda self, k, **kw: called.append("topk") or torch.return_types.topk((self[:k], self[:k])),
    )
    kth_smallest(torch.zeros(4), 2)
    kth_smallest(torch.zeros(4, device="meta"), 2)
    assert called == ["kthvalue", "topk"]
