"""PyTorch's dynamic INT8 Linear layers (`hf_srnets.export.torch_int8`, issue 71): every Linear of a dense or
compact model becomes int8 with one symmetric scale per output channel (max |W_row| / 127.5, computed here from the
float weights), its logits stay near the float ones, `run_glue_sparse.py --do_eval --quantize int8` writes the run's
per-example files and says what it evaluated, and what would train it, drop masks or run it on a GPU is refused."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import mnli_run_args, tiny_model

from hf_srnets.arguments.glue_sparse_arguments import parse_args
from hf_srnets.commands.glue_sparse import main
from hf_srnets.compact import prune_ffn_units, prune_heads
from hf_srnets.errors import InputError
from hf_srnets.export import export_onnx
from hf_srnets.export.torch_int8 import quantize_torch_int8
from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import ThresholdConfig
from hf_srnets.runner.model import quantized_for_eval

from .helpers import lively, save_classifier

LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}


def float_and_int8(model: torch.nn.Module) -> tuple[dict[str, torch.Tensor], torch.nn.Module]:
    """The float weights of every Linear, by name, and the model after `quantize_torch_int8`."""
    weights = {n: m.weight.detach().clone() for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)}
    quantized, _ = quantize_torch_int8(model)
    return weights, quantized


def test_each_linear_becomes_int8_with_one_symmetric_scale_per_output_channel():
    model = lively(tiny_model("bert"))
    prune_heads(model, {0: [1]})  # a compact model: other shapes per layer
    prune_ffn_units(model, {0: range(10)})
    weights, quantized = float_and_int8(model)
    modules = dict(quantized.named_modules())
    for name, weight in weights.items():
        packed = modules[name].weight()
        assert packed.dtype == torch.qint8 and packed.q_per_channel_axis() == 0, name
        assert not packed.q_per_channel_zero_points().any(), name  # symmetric: every zero point 0
        expected_scales = weight.abs().amax(dim=1) / 127.5  # symmetric int8: the row's largest |w| at ±127.5 steps
        assert torch.allclose(packed.q_per_channel_scales().float(), expected_scales, rtol=1e-5), name
        assert (packed.dequantize() - weight).abs().max() <= expected_scales.max() / 2 + 1e-7, name
    assert not any(isinstance(m, torch.nn.Linear) for m in quantized.modules())


def test_int8_logits_stay_near_the_float_ones_and_the_settings_are_recorded():
    model = lively(tiny_model("bert"))
    inputs = {"input_ids": torch.randint(5, 90, (16, 12))}
    with torch.no_grad():
        expected = model(**inputs).logits
        quantized, settings = quantize_torch_int8(model)
        got = quantized(**inputs).logits
    assert (got - expected).abs().max() < 0.05 * expected.abs().max()  # INT8: close, not equal
    assert (got.argmax(-1) == expected.argmax(-1)).float().mean() >= 0.9
    assert settings["method"] == "torch.ao.quantization.quantize_dynamic"
    assert settings["layers"] == 2 * 6 + 2 and settings["engine"] == torch.backends.quantized.engine


def test_an_srnet_with_unmerged_masks_is_refused_naming_the_merged_folder():
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5, mask_init="soft"))
    with pytest.raises(InputError, match=r"applies masks in \d+ layers .*give the run's merged/ folder"):
        quantize_torch_int8(srnet)


@pytest.fixture(scope="module")
def classifier(tmp_path_factory):
    model = lively(tiny_model("bert", 3))
    model.config.id2label, model.config.label2id = LABELS, {v: k for k, v in LABELS.items()}
    return save_classifier(model, tmp_path_factory.mktemp("torch_int8") / "model")


def test_a_run_evaluates_the_int8_model_with_per_example_files(classifier, data_dir, tmp_path):
    out = tmp_path / "int8"
    main(mnli_run_args(classifier, data_dir, out, "--do_eval", "--quantize", "int8", train=8, eval=64, ood=64))
    results = json.loads((out / "all_results.json").read_text())
    assert results["quantization"]["weights"] == "int8, symmetric, per output channel"
    assert results["eval_mnli_examples"] == 64
    for name in ("mnli", "hans"):
        lines = (out / "eval_predictions" / f"{name}.jsonl").read_text().splitlines()
        assert len(lines) == 64 and {"id", "prediction", "probabilities"} <= set(json.loads(lines[0]))
    card = (out / "README.md").read_text()
    assert "with PyTorch's dynamic INT8 Linear layers (`--quantize int8`) on **MNLI**: this run trained nothing" in card


def test_what_would_train_it_or_run_it_on_a_gpu_is_refused(classifier, data_dir, tmp_path, monkeypatch):
    args = ("--quantize", "int8")
    with pytest.raises(InputError, match=r"--quantize int8 evaluates a trained model \(--do_eval\): drop --do_train"):
        main(mnli_run_args(classifier, data_dir, tmp_path / "t", "--do_train", *args, train=8, eval=8, ood=8))
    onnx_dir = tmp_path / "onnx"
    export_onnx(str(classifier), str(onnx_dir))
    with pytest.raises(InputError, match=r"is an ONNX export, .*drop --quantize int8"):
        main(mnli_run_args(onnx_dir, data_dir, tmp_path / "o", "--do_eval", *args, train=8, eval=8, ood=8))
    run = parse_args(mnli_run_args(classifier, data_dir, tmp_path / "g", "--do_eval", "--use_cpu", "false", *args))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # the check itself: the Trainer is not reached
    with pytest.raises(InputError, match=r"this machine has a GPU the run would move the model to: add --use_cpu"):
        quantized_for_eval(tiny_model("bert"), run)
