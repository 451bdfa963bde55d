"""`export_onnx`: ONNX Runtime's logits against PyTorch's (≤ 1e-4) for a dense BERT, a compact BERT (heads and FFN
units removed, different per layer) and a decoder classifier, on batches tokenized here with the exported folder's
tokenizer at other sizes and lengths than the exporter traced; the graph's axes are dynamic; a planted error in the
graph is caught by the exporter's own check and leaves no model.onnx."""

from __future__ import annotations

import json
from inspect import signature

import numpy as np
import onnx
import pytest
import torch
from conftest import tiny_model
from families.helpers import DECODER, save_checkpoint
from transformers import AutoTokenizer, Qwen2Config

from hf_srnets import load_pretrained_model
from hf_srnets.compact import prune_ffn_units, prune_heads
from hf_srnets.errors import InputError
from hf_srnets.export import EXPORT_REPORT_NAME, ONNX_NAME, ExportCheckError, export_onnx
from hf_srnets.export import onnx as onnx_export

from .helpers import TEXTS, lively, ort_logits, save_classifier


def ort_and_torch(model_dir, out) -> list[tuple[np.ndarray, np.ndarray]]:
    """(ONNX Runtime's logits, PyTorch's) for each batch of `TEXTS`, tokenized with the exported tokenizer."""
    tokenizer = AutoTokenizer.from_pretrained(out)
    model = load_pretrained_model(str(model_dir))
    pairs = []
    for texts in TEXTS:
        encoded = tokenizer(texts, padding=True, return_tensors="pt")
        with torch.no_grad():
            expected = model(**{k: v for k, v in encoded.items() if k in signature(model.forward).parameters})
        pairs.append((ort_logits(out / ONNX_NAME, {k: v.numpy() for k, v in encoded.items()}), expected.logits.numpy()))
    return pairs


def check_export(model_dir, out, inputs: list[str]) -> dict:
    """Export, then: logits within 1e-4 on both batches (which differ in size and length), dynamic axes named, the
    config, tokenizer and report beside the graph."""
    report = export_onnx(str(model_dir), str(out))
    pairs = ort_and_torch(model_dir, out)
    for got, expected in pairs:
        assert got.shape == expected.shape
        assert np.abs(got - expected).max() <= 1e-4
    assert len({e.shape for _, e in pairs}) == 2
    graph = onnx.load(str(out / ONNX_NAME)).graph
    assert [i.name for i in graph.input] == inputs and [o.name for o in graph.output] == ["logits"]
    for tensor in graph.input:
        assert [d.dim_param for d in tensor.type.tensor_type.shape.dim] == ["batch", "sequence"]
    assert json.loads((out / EXPORT_REPORT_NAME).read_text()) == report
    assert report["max_abs_diff"] <= 1e-4 and report["inputs"] == inputs and report["file_bytes"] > 0
    assert (out / "config.json").is_file() and (out / "tokenizer_config.json").is_file()
    return report


def test_a_dense_bert_runs_in_onnx_runtime_with_its_pytorch_logits(tmp_path):
    model_dir = save_classifier(lively(tiny_model("bert")), tmp_path / "dense")
    report = check_export(model_dir, tmp_path / "onnx", ["input_ids", "attention_mask", "token_type_ids"])
    assert report["opset"] == 17 and report["format"] == "onnx"


def test_a_compact_bert_with_other_shapes_per_layer_runs_in_onnx_runtime(tmp_path):
    model = lively(tiny_model("bert"))
    prune_heads(model, {0: [1]})  # layer 0 keeps 1 head of 2, layer 1 both
    prune_ffn_units(model, {0: range(10), 1: range(40)})  # FFN widths 54 and 24
    model_dir = save_classifier(model, tmp_path / "compact")
    config = json.loads((model_dir / "config.json").read_text())
    assert config["srnet_pruned_heads"] == {"0": [1]} and config["srnet_intermediate_sizes"] == [54, 24]
    report = check_export(model_dir, tmp_path / "onnx", ["input_ids", "attention_mask", "token_type_ids"])
    assert report["parameters"] == sum(p.numel() for p in model.parameters())


def test_a_decoder_classifier_runs_in_onnx_runtime(tmp_path):
    model_dir = save_checkpoint(Qwen2Config(**DECODER, pad_token_id=0), tmp_path / "qwen2")
    lively(load_pretrained_model(str(model_dir))).save_pretrained(model_dir)
    check_export(model_dir, tmp_path / "onnx", ["input_ids", "attention_mask"])  # a decoder takes no token types


def test_a_graph_that_gives_other_logits_is_refused_and_removed(tmp_path, monkeypatch):
    model_dir = save_classifier(lively(tiny_model("bert")), tmp_path / "dense")
    traced = onnx_export.LogitsOnly.forward
    monkeypatch.setattr(onnx_export.LogitsOnly, "forward", lambda self, *x: traced(self, *x) + 1e-3)  # planted
    with pytest.raises(ExportCheckError, match=r"differ from PyTorch's by up to 0\.001 \(> 0\.0001\)"):
        export_onnx(str(model_dir), str(tmp_path / "onnx"))
    assert not (tmp_path / "onnx" / ONNX_NAME).exists()
    assert not (tmp_path / "onnx" / EXPORT_REPORT_NAME).exists()


@pytest.mark.parametrize("opset", [9, 13, onnx_export.MAX_OPSET + 1, 99])
def test_an_opset_outside_the_exporter_s_range_is_refused_before_loading(tmp_path, monkeypatch, opset):
    """Round 4, case 62: opsets below 14 failed in the exporter (dynamic Slice below 10, attention below 14) and 99
    in torch, each a traceback after the model was loaded."""
    monkeypatch.setattr(onnx_export, "load_pretrained_model", lambda *a: pytest.fail("the model was loaded"))
    with pytest.raises(InputError, match=rf"--opset must be in 14-{onnx_export.MAX_OPSET} .*, got {opset}: .*opset 17"):
        export_onnx(str(tmp_path / "any"), str(tmp_path / "onnx"), opset=opset)
    assert not (tmp_path / "onnx").exists()


def test_an_exporter_error_inside_the_range_is_one_line_naming_the_default_opset(tmp_path, monkeypatch):
    model_dir = save_classifier(lively(tiny_model("bert")), tmp_path / "dense")

    def unsupported(*args, **kwargs):  # as torch raises it for an op newer than the opset
        raise torch.onnx.errors.UnsupportedOperatorError("aten::foo", 14, 18)

    monkeypatch.setattr(onnx_export.torch.onnx, "export", unsupported)
    with pytest.raises(InputError, match=r"--opset 14 cannot export .*dense \(.*aten::foo.*\): .*--opset 17"):
        export_onnx(str(model_dir), str(tmp_path / "onnx"), opset=14)
    assert not (tmp_path / "onnx" / ONNX_NAME).exists()
