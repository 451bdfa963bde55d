"""Every registered loss under bf16 autocast: the loss of bf16 logits is the loss of the same logits in float32
(each loss upcasts before its softmax and logs), with a gradient that reaches the logits; so `--bf16` changes a
run's logits, never how a loss is computed from them."""

from __future__ import annotations

import pytest
import torch

from hf_srnets.losses import LOSSES


def columns(batch: int, classes: int) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    probs = lambda: torch.softmax(torch.randn(batch, classes, generator=generator), dim=-1)  # noqa: E731
    return {"bias_probs": probs(), "teacher_probs": probs(), "difficulty": torch.rand(batch, generator=generator)}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_a_loss_of_bf16_logits_is_the_loss_of_their_float32_values(name):
    loss = LOSSES[name]()
    given = {column: value for column, value in columns(8, 3).items() if column in loss.requires}
    logits = (4 * torch.randn(8, 3, generator=torch.Generator().manual_seed(0))).to(torch.bfloat16).requires_grad_()
    labels = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    value, _ = loss(logits, labels, **given)
    expected, _ = loss(logits.detach().float(), labels, **given)
    assert value.dtype == torch.float32
    torch.testing.assert_close(value, expected, rtol=0, atol=1e-6)
    value.backward()
    assert logits.grad is not None and torch.isfinite(logits.grad.float()).all() and logits.grad.abs().sum() > 0
