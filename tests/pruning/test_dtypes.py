"""Masks under fp16/bf16: scores, log α and φ stay float32, exactly ⌊s·n⌋ zeros, merged equals masked.

CPU only: bf16 through `torch.autocast("cpu")` (what `--bf16` does) and fp16/bf16 through casts of the model
(`.half()`, `.to(torch.bfloat16)`: what `--fp16_full_eval` and DeepSpeed's fp16 engine do).
"""

from __future__ import annotations

import copy
import math

import pytest
import torch
import torch.nn.functional as F
from conftest import tiny_model
from torch import nn
from training.helpers import cpu_args, synthetic_nli, tiny_tokenizer

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import ThresholdConfig
from hf_srnets.pruning.exact_count import binarize, exact_thresholds
from hf_srnets.pruning.l0 import L0Config
from hf_srnets.pruning.masked_linear import MaskedLinear
from hf_srnets.pruning.precision import KeepsFloat32, float32_tensor_names
from hf_srnets.pruning.threshold import update_thresholds
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer

SPARSITY = 0.5
CASTS = {"half": lambda m: m.half(), "bf16": lambda m: m.to(torch.bfloat16), "fp16_to": lambda m: m.to(torch.float16)}


def threshold_model() -> SRNetModel:
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=SPARSITY, mask_init="soft"))
    return srnet.eval()


def l0_model() -> SRNetModel:
    srnet = SRNetModel(tiny_model("bert"), L0Config(sparsity=SPARSITY))
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for layer in srnet.masked_layers().values():
            layer.log_alpha.copy_(torch.randn(layer.log_alpha.shape, generator=generator) * 3)
    return srnet.eval()


def batch(seed: int = 0) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return {"input_ids": torch.randint(5, 100, (4, 11), generator=generator), "labels": torch.tensor([0, 1, 2, 0])}


def assert_exact_counts(srnet: SRNetModel) -> None:
    """Local scope: every matrix has exactly ⌊s·n⌋ zeros."""
    for name, mask in srnet.binary_masks().items():
        assert int((~mask).sum()) == math.floor(SPARSITY * mask.numel()), name


def mask_tensors(srnet: SRNetModel) -> dict[str, torch.Tensor]:
    module = srnet.base_model
    return {name: module.get_parameter(name) if "threshold" not in name else module.get_buffer(name)
            for name in float32_tensor_names(module)}  # fmt: skip


# -- casts of the model ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cast", sorted(CASTS))
def test_casts_keep_scores_and_thresholds_float32_and_the_selection(cast):
    srnet = threshold_model()
    before = {name: t.detach().clone() for name, t in mask_tensors(srnet).items()}
    masks = srnet.binary_masks()
    scores = [layer.mask_scores.detach().clone() for layer in srnet.masked_layers().values()]
    CASTS[cast](srnet)
    after = mask_tensors(srnet)
    assert len(after) == 2 * len(masks)  # mask_scores and threshold of every layer
    for name, tensor in after.items():
        assert tensor.dtype == torch.float32 and torch.equal(tensor, before[name]), name
    layer = next(iter(srnet.masked_layers().values()))
    assert layer.base_layer.weight.dtype != torch.float32  # the weight path was cast
    assert all(torch.equal(masks[n], m) for n, m in srnet.binary_masks().items())
    assert_exact_counts(srnet)
    cast_scores = [layer.mask_scores for layer in srnet.masked_layers().values()]
    total = sum(s.numel() for s in scores)
    assert exact_thresholds(cast_scores, total // 3) == exact_thresholds(scores, total // 3)


def test_a_score_gradient_survives_the_cast():
    layer = MaskedLinear(nn.Linear(4, 3))
    layer.mask_scores.grad = torch.full((3, 4), 1e-8)  # below fp16's smallest subnormal: a cast would zero it
    layer.half()
    assert layer.mask_scores.grad.dtype == torch.float32 and bool((layer.mask_scores.grad == 1e-8).all())


def test_a_misnamed_float32_tensor_is_a_clear_error():
    class Broken(KeepsFloat32, nn.Linear):
        float32_tensors = ("scores",)

    with pytest.raises(AttributeError, match="names 'scores'"):
        Broken(2, 2).half()


def test_binarize_compares_in_float32():
    scores = torch.tensor([1.0, 1.0, 2.0]).to(torch.bfloat16)
    threshold = torch.tensor(1.001)  # rounds to 1.0 in bf16: a bf16 comparison would keep all three
    assert binarize(scores, threshold, torch.tensor(0), False).tolist() == [False, False, True]


def test_fp16_ste_gradient_is_float32_and_exact():
    """∂L/∂m̂ = (∂L/∂W_eff) ⊙ W (Win-win §3.2.2), multiplied in float32 from the fp16 ∂L/∂W_eff and W."""
    torch.manual_seed(0)
    layer = MaskedLinear(nn.Linear(8, 5))
    with torch.no_grad():
        layer.mask_scores.copy_(torch.randn(5, 8))
    layer.set_threshold(0.0, 0, False)
    layer.half()
    x = torch.randn(3, 8).half()
    layer(x).float().square().sum().backward()
    w_eff = layer.merged_weight().detach().requires_grad_(True)  # the same m ⊙ W, as a leaf
    F.linear(x, w_eff, layer.base_layer.bias).float().square().sum().backward()
    assert layer.mask_scores.grad.dtype == torch.float32 and w_eff.dtype == torch.float16
    assert torch.equal(layer.mask_scores.grad, w_eff.grad.float() * layer.base_layer.weight.float())


@pytest.mark.parametrize("make", [threshold_model, l0_model], ids=["threshold", "l0"])
@pytest.mark.parametrize("cast", ["half", "bf16"])
def test_merged_equals_masked_after_a_cast(make, cast):
    srnet = make()
    CASTS[cast](srnet)
    inputs = batch()
    with torch.no_grad():
        masked = srnet(**inputs).logits
        merged = copy.deepcopy(srnet).merge_and_unload()(**inputs).logits
    assert masked.dtype == (torch.float16 if cast == "half" else torch.bfloat16)
    assert torch.equal(masked, merged)


# -- bf16 autocast (what --bf16 runs) ---------------------------------------------------------------------------
def test_bf16_autocast_step_threshold_method():
    srnet = threshold_model().train()
    update_thresholds(srnet, SPARSITY)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = srnet(**batch())
    assert out.logits.dtype == torch.bfloat16
    out.loss.backward()
    layers = list(srnet.masked_layers().values())
    assert all(layer.mask_scores.grad is not None and layer.mask_scores.grad.dtype == torch.float32 for layer in layers)
    assert any(bool(layer.mask_scores.grad.abs().sum() > 0) for layer in layers)
    with torch.no_grad():  # a step on the scores, then the threshold update of the schedule
        for layer in layers:
            layer.mask_scores.sub_(10.0 * layer.mask_scores.grad)
    update_thresholds(srnet, SPARSITY)
    assert_exact_counts(srnet)
    assert all(layer.mask_scores.dtype == torch.float32 and layer.threshold.dtype == torch.float32 for layer in layers)
    srnet.eval()
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        masked = srnet(**batch(1)).logits
        merged = copy.deepcopy(srnet).merge_and_unload()(**batch(1)).logits
    assert masked.dtype == torch.bfloat16 and torch.equal(masked, merged)


def test_bf16_autocast_step_l0_method():
    srnet = l0_model().train()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = srnet(**batch()).loss
    loss.backward()
    layers = list(srnet.masked_layers().values())
    assert all(layer.log_alpha.grad.dtype == torch.float32 for layer in layers)
    assert any(bool(layer.log_alpha.grad.abs().sum() > 0) for layer in layers)
    srnet.half()  # the saved ticket (exact ⌊s·n⌋ of the largest log α, global scope) does not move with the cast
    ticket = srnet.method.saved_masks(srnet)
    zeros = sum(int((~mask).sum()) for mask in ticket.values())
    assert zeros == math.floor(SPARSITY * sum(mask.numel() for mask in ticket.values()))
    assert all(layer.log_alpha.dtype == torch.float32 for layer in layers)


# -- a Trainer run with --bf16 on the CPU ------------------------------------------------------------------------
def test_trainer_bf16_run_keeps_float32_scores_and_exact_counts(tmp_path):
    tokenizer = tiny_tokenizer(tmp_path)
    data = synthetic_nli(tokenizer, n=32)
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=SPARSITY, threshold_update_interval=2))
    initial = srnet.binary_masks()
    args = cpu_args(tmp_path / "out", bf16=True, max_steps=6, mask_learning_rate=0.05)
    trainer = SRNetTrainer(model=srnet, args=args, train_dataset=data, data_collator=SRNetDataCollator(tokenizer))
    assert trainer.accelerator.mixed_precision == "bf16"
    trainer.train()
    layers = list(srnet.masked_layers().values())
    assert all(layer.mask_scores.dtype == torch.float32 and layer.threshold.dtype == torch.float32 for layer in layers)
    assert all(layer.base_layer.weight.dtype == torch.float32 for layer in layers)  # autocast does not cast weights
    assert_exact_counts(srnet)
    assert any(not torch.equal(initial[n], m) for n, m in srnet.binary_masks().items())  # the search moved
