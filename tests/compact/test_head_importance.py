"""Head importance I_h = E_x |∂L(x)/∂ξ_h| (Du et al. 2023 appendix A; Michel et al. 2019) against finite
differences of the gated model's loss."""

import torch
from conftest import tiny_model
from torch.nn import functional as F

from hf_srnets.compact import HeadMask, head_importance


def _batches():
    g = torch.Generator().manual_seed(3)
    out = []
    for size in (4, 3):
        ids = torch.randint(5, 90, (size, 6), generator=g)
        mask = torch.ones_like(ids)
        mask[0, 4:] = 0
        out.append({"input_ids": ids, "attention_mask": mask, "labels": torch.randint(0, 3, (size,), generator=g)})
    return out


def _loss(model, batch, xi):
    with HeadMask(model, xi):
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    return F.cross_entropy(logits, batch["labels"]).item()


def _finite_difference(model, batches, eps=1e-5):
    """|∂L/∂ξ| per batch by central differences at ξ = 1, averaged over the batches."""
    total = torch.zeros(2, 2, dtype=torch.float64)
    for batch in batches:
        for layer in range(2):
            for head in range(2):
                up, down = torch.ones(2, 2, dtype=torch.float64), torch.ones(2, 2, dtype=torch.float64)
                up[layer, head] += eps
                down[layer, head] -= eps
                total[layer, head] += abs(_loss(model, batch, up) - _loss(model, batch, down)) / (2 * eps)
    return total / len(batches)


def test_importance_equals_finite_differences():
    model = tiny_model("bert").double()
    batches = _batches()
    expected = _finite_difference(model, batches)
    got = head_importance(model, batches, normalize=False)
    assert got.shape == (2, 2) and (got > 0).all()
    torch.testing.assert_close(got.double(), expected, rtol=1e-5, atol=1e-8)
    normalised = head_importance(model, batches)  # each layer divided by its ℓ2 norm
    torch.testing.assert_close(normalised.double(), expected / expected.norm(dim=1, keepdim=True), rtol=1e-5, atol=0)
    torch.testing.assert_close(normalised.norm(dim=1), torch.ones(2, dtype=normalised.dtype))


def test_importance_caps_examples_and_leaves_the_model_as_it_was():
    model = tiny_model("roberta").double().train()
    batches = _batches()
    first3 = {k: v[:3] for k, v in batches[0].items()}
    capped = head_importance(model, batches, max_examples=3, normalize=False)
    model.eval()
    expected = _finite_difference(model, [first3])
    torch.testing.assert_close(capped.double(), expected, rtol=1e-5, atol=1e-8)
    assert all(p.grad is None for p in model.parameters())
    model.train()
    head_importance(model, batches)
    assert model.training  # restored after the eval-mode pass


def test_masking_one_head_changes_only_what_it_should():
    """ξ = 0 on every head of a layer removes the attention output: the layer's attention adds only its bias."""
    model = tiny_model("bert").double()
    batch = _batches()[0]
    xi = torch.ones(2, 2, dtype=torch.float64)
    xi[1] = 0.0
    captured = {}
    dense = model.bert.encoder.layer[1].attention.output.dense
    handle = dense.register_forward_hook(lambda m, a, out: captured.update(out=out))
    with HeadMask(model, xi):
        model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
    handle.remove()
    torch.testing.assert_close(captured["out"], dense.bias.expand_as(captured["out"]))
