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
