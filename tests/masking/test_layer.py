"""MaskedLinear: binarisation, exact thresholds with ties, the straight-through estimator, Eq. 1/2 init."""

import math

import pytest
import torch
from torch import nn

from hf_srnets.pruning import MaskedLinear, binarize, exact_thresholds


def _zeros(layer: MaskedLinear) -> int:
    return int((~layer.binary_mask()).sum())


@pytest.mark.parametrize("sparsity", [0.0, 0.1, 0.3, 0.5, 0.77, 0.9, 0.99])
@pytest.mark.parametrize("init", ["hard", "soft"])
def test_init_gives_exactly_floor_s_n_zeros(sparsity, init):
    torch.manual_seed(0)
    layer = MaskedLinear(nn.Linear(37, 23))
    layer.init_scores(init, sparsity, alpha=2.0, init_threshold=0.01)
    assert _zeros(layer) == math.floor(sparsity * 37 * 23)


def test_hard_init_matches_appendix_eq1():
    torch.manual_seed(1)
    base = nn.Linear(10, 8)
    layer = MaskedLinear(base)
    layer.init_scores("hard", 0.25, alpha=2.0, init_threshold=0.01)
    k = math.floor(0.25 * 80)
    smallest = base.weight.abs().flatten().argsort()[:k]
    scores = layer.mask_scores.flatten()
    assert torch.all(scores[smallest] == 0)
    rest = torch.ones(80, dtype=torch.bool)
    rest[smallest] = False
    assert torch.allclose(scores[rest], torch.full((80 - k,), 0.02))
    assert float(layer.threshold) == pytest.approx(0.01)
    assert torch.equal(layer.binary_mask().flatten(), rest)


def test_soft_init_matches_appendix_eq2():
    torch.manual_seed(2)
    base = nn.Linear(10, 8)
    layer = MaskedLinear(base)
    layer.init_scores("soft", 0.5, alpha=2.0, init_threshold=0.01)
    assert torch.equal(layer.mask_scores, base.weight.abs())
    kept = layer.binary_mask()
    assert base.weight.abs()[kept].min() >= base.weight.abs()[~kept].max()


def test_ties_are_broken_deterministically_by_position():
    scores = torch.tensor([[0.5, 0.5, 0.5], [0.5, 0.1, 0.9]])
    ((phi, tie_index, has_tie),) = exact_thresholds([scores], 3)
    mask = binarize(scores, torch.tensor(phi), torch.tensor(tie_index), has_tie)
    # 0.1 first, then the two earliest 0.5s (flat positions 0 and 1)
    assert mask.tolist() == [[False, False, True], [True, False, True]]


def test_global_thresholds_count_over_all_tensors():
    torch.manual_seed(3)
    tensors = [torch.rand(5, 7), torch.rand(3, 4) * 0.1, torch.full((2, 2), 0.05)]
    total = sum(t.numel() for t in tensors)
    for k in [0, 1, 13, 30, total - 1, total]:
        results = exact_thresholds(tensors, k)
        zeros = sum(
            int((~binarize(t, torch.tensor(p), torch.tensor(i), h)).sum()) for t, (p, i, h) in zip(tensors, results)
        )
        assert zeros == k


def test_straight_through_gradient_is_grad_wrt_mask():
    torch.manual_seed(4)
    base = nn.Linear(6, 4)
    layer = MaskedLinear(base)
    layer.init_scores("hard", 0.5, alpha=2.0, init_threshold=0.01)
    x = torch.randn(3, 6)
    layer(x).pow(2).sum().backward()
    # reference: d/dm of sum((x (m*W)^T + b)^2) with m as a free tensor
    m = layer.binary_mask().float().requires_grad_(True)
    (x @ (m * base.weight).T + base.bias).pow(2).sum().backward()
    assert torch.allclose(layer.mask_scores.grad, m.grad, atol=1e-6)
    assert base.weight.grad is None  # the base layer is frozen
    assert layer.mask_scores.grad.abs().sum() > 0


def test_forward_equals_masked_weight():
    torch.manual_seed(5)
    base = nn.Linear(6, 4)
    layer = MaskedLinear(base)
    layer.init_scores("soft", 0.4, alpha=2.0, init_threshold=0.01)
    x = torch.randn(3, 6)
    expected = x @ (base.weight * layer.binary_mask()).T + base.bias
    assert torch.allclose(layer(x), expected, atol=1e-6)
