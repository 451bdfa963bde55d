"""Every registered loss computes in float32 whatever precision its inputs come in (`DebiasingLoss.__call__`
casts the logits and the float columns once; issue 51: each loss used to cast them itself)."""

import pytest
import torch

from hf_srnets.losses import LOSSES, get_loss


def _columns(n: int, k: int, dtype: torch.dtype) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    return {
        "bias_probs": torch.softmax(torch.randn(n, k, generator=generator), -1).to(dtype),
        "teacher_probs": torch.softmax(torch.randn(n, k, generator=generator), -1).to(dtype),
        "difficulty": torch.rand(n, generator=generator).clamp_min(0.1).to(dtype),
    }


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_a_loss_given_bf16_logits_and_float64_columns_computes_in_float32(name):
    loss = get_loss(name)
    labels = torch.tensor([0, 2, 1, 1])
    logits = torch.randn(4, 3, generator=torch.Generator().manual_seed(1)).to(torch.bfloat16)
    mixed, _ = loss(logits, labels, **_columns(4, 3, torch.float64))
    plain, _ = loss(logits.float(), labels, **_columns(4, 3, torch.float32))
    assert mixed.dtype == torch.float32
    assert torch.equal(mixed, plain)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_every_loss_logs_the_plain_cross_entropy_of_the_model(name):
    """`ce` = −mean_i log p_m(y_i), written out here, for every loss whatever its own terms (issue 51: each loss
    used to log it itself, poe and confreg from log p_m, the others from their per-example CE)."""
    labels = torch.tensor([0, 2, 1, 1])
    logits = torch.randn(4, 3, generator=torch.Generator().manual_seed(2))
    _, parts = get_loss(name)(logits, labels, **_columns(4, 3, torch.float32))
    by_hand = -sum(logits[i, labels[i]] - torch.log(torch.exp(logits[i]).sum()) for i in range(len(labels))) / len(
        labels
    )
    assert parts["ce"].item() == pytest.approx(by_hand.item(), abs=1e-6)
    assert not parts["ce"].requires_grad
