"""The hard-concrete layer against Robust Tickets Eq. 1-5, computed directly from the printed formulas."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from hf_srnets.pruning.l0 import (
    GAMMA,
    ZETA,
    HardConcreteLinear,
    deterministic_gate,
    expected_nonzero,
    hard_concrete_sample,
    init_log_alpha,
)


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def layer(keep: float = 0.9, temperature: float = 2 / 3, seed: int = 0) -> HardConcreteLinear:
    torch.manual_seed(seed)
    return HardConcreteLinear(nn.Linear(6, 4), temperature=temperature, init_keep=keep)


def test_constants_are_the_papers():
    assert (GAMMA, ZETA) == (-0.1, 1.1)


@pytest.mark.parametrize("u", [0.01, 0.3, 0.5, 0.97])
@pytest.mark.parametrize("log_alpha", [-3.0, -0.2, 0.0, 1.5, 4.0])
def test_eq_2_3_sample(u, log_alpha):
    beta = 2 / 3
    s = sigmoid((math.log(u) - math.log(1 - u) + log_alpha) / beta)  # Eq. 2
    expected = min(1.0, max(0.0, s * (1.1 + 0.1) - 0.1))  # Eq. 3
    got = hard_concrete_sample(torch.tensor([log_alpha]), torch.tensor([u]), beta)
    assert got.item() == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("log_alpha", [-5.0, -2.0, 0.0, 0.7, 3.0])
def test_eq_4_and_5(log_alpha):
    beta = 0.5
    assert expected_nonzero(torch.tensor(log_alpha), beta).item() == pytest.approx(
        sigmoid(log_alpha - beta * math.log(0.1 / 1.1)), abs=1e-6
    )
    gate = min(1.0, max(0.0, sigmoid(log_alpha) * 1.2 - 0.1))
    assert deterministic_gate(torch.tensor(log_alpha)).item() == pytest.approx(gate, abs=1e-6)


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.9])
def test_init_gives_the_deterministic_gate_p(keep):
    hc = layer(keep)
    assert hc.log_alpha.dtype == torch.float32 and hc.log_alpha.shape == hc.weight.shape
    assert hc.log_alpha.requires_grad and not hc.base_layer.weight.requires_grad
    assert torch.allclose(deterministic_gate(hc.log_alpha), torch.full_like(hc.log_alpha, keep), atol=1e-6)
    assert init_log_alpha(keep) == pytest.approx(math.log((keep + 0.1) / 1.2 / (1 - (keep + 0.1) / 1.2)))
    with pytest.raises(ValueError, match="p must be in"):
        init_log_alpha(1.0)


def test_eval_is_deterministic_eq_5_and_merges_exactly():
    hc = layer().eval()
    with torch.no_grad():
        hc.log_alpha.copy_(torch.randn_like(hc.log_alpha) * 3)
    x = torch.randn(5, 6)
    expected = x @ (hc.weight * deterministic_gate(hc.log_alpha)).T + hc.bias
    assert torch.allclose(hc(x), expected, atol=1e-6) and torch.equal(hc(x), hc(x))
    plain = nn.Linear(6, 4)
    plain.weight.data, plain.bias.data = hc.merged_weight(), hc.bias.data
    assert torch.allclose(plain(x), hc(x), atol=1e-6)
    assert torch.equal(hc.binary_mask(), deterministic_gate(hc.log_alpha) > 0)


def test_train_is_stochastic_and_gradients_reach_log_alpha_only():
    hc = layer().train()
    x = torch.randn(5, 6)
    first, second = hc(x), hc(x)
    assert not torch.allclose(first, second)
    second.pow(2).sum().backward()
    assert hc.log_alpha.grad is not None and hc.log_alpha.grad.abs().sum() > 0
    assert hc.base_layer.weight.grad is None


def test_train_uses_the_uniform_sample(monkeypatch):
    hc = layer().train()
    u = torch.rand_like(hc.log_alpha).clamp(0.05, 0.95)
    monkeypatch.setattr(torch, "rand_like", lambda t: u)
    x = torch.randn(3, 6)
    gate = hard_concrete_sample(hc.log_alpha.detach(), u, hc.temperature)
    assert torch.allclose(hc(x), x @ (hc.weight * gate).T + hc.bias, atol=1e-6)


def test_fixed_ticket_in_train_and_eval_and_search_state():
    hc = layer()
    ticket = torch.rand(4, 6) > 0.5
    assert hc.search_state().keys() == {"log_alpha"}
    hc.set_fixed_mask(ticket)
    x = torch.randn(5, 6)
    expected = x @ (hc.weight * ticket).T + hc.bias
    for mode in (True, False):
        assert torch.allclose(hc.train(mode)(x), expected, atol=1e-6)
    assert torch.equal(hc.binary_mask(), ticket) and hc.search_state() == {}
    saved = torch.randn(4, 6)
    hc.load_search_state({"log_alpha": saved})
    assert not hc.fixed and torch.equal(hc.log_alpha.data, saved)
    with pytest.raises(ValueError, match="shape"):
        hc.load_search_state({"log_alpha": torch.zeros(6, 4)})
