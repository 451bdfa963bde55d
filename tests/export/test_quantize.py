"""`--quantize int8` (`hf_srnets.export.quantize`, issue 71): the exported graph's encoder products run on int8
weights, it still classifies the texts the float model classifies (ONNX Runtime on batches tokenized here, not the
exporter's own check batches), and the report records the settings and the agreement the export measured."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from conftest import tiny_model

from hf_srnets.commands.export import main
from hf_srnets.errors import InputError
from hf_srnets.export import EXPORT_REPORT_NAME, ONNX_NAME, export_onnx

from .helpers import lively, save_classifier
from .test_onnx import ort_and_torch


def op_types(path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in onnx.load(str(path)).graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return counts


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("int8")
    model_dir = save_classifier(lively(tiny_model("bert")), root / "model")
    float_report = export_onnx(str(model_dir), str(root / "float"))
    int8_report = export_onnx(str(model_dir), str(root / "int8"), quantize="int8")
    return model_dir, root, float_report, int8_report


def test_the_int8_graph_multiplies_int8_weights(exported):
    _, root, _, _ = exported
    plain, int8 = op_types(root / "float" / ONNX_NAME), op_types(root / "int8" / ONNX_NAME)
    assert "MatMulInteger" not in plain and "DynamicQuantizeLinear" not in plain
    # the 2 layers' Q, K, V, output, FFN in and out (12 matrices), the pooler and the classifier: 14 weight products
    assert int8.get("MatMulInteger", 0) == 14 and int8.get("DynamicQuantizeLinear", 0) >= 1
    initializers = onnx.load(str(root / "int8" / ONNX_NAME)).graph.initializer
    assert sum(1 for t in initializers if t.data_type == onnx.TensorProto.INT8) >= 14


def test_the_int8_graph_classifies_as_the_float_model_does(exported):
    model_dir, root, _, _ = exported
    pairs = ort_and_torch(model_dir, root / "int8")
    got = np.concatenate([ort for ort, _ in pairs])
    expected = np.concatenate([torch for _, torch in pairs])
    assert (got.argmax(-1) == expected.argmax(-1)).mean() >= 0.8
    assert 0 < np.abs(got - expected).max() < 0.2  # not the float graph, and not far from it


def test_the_report_records_the_settings_and_the_measured_agreement(exported):
    _, root, float_report, int8_report = exported
    assert float_report["quantize"] == "none" and "quantization" not in float_report
    quantization = int8_report["quantization"]
    assert int8_report["quantize"] == "int8" and quantization["per_channel"] is True
    assert quantization["op_types"] == ["MatMul", "Gemm"] and quantization["check_examples"] == 32 + 16 + 3
    assert 0.0 <= quantization["label_agreement"] <= 1.0 and quantization["max_abs_diff"] > 0
    assert json.loads((root / "int8" / EXPORT_REPORT_NAME).read_text()) == int8_report


def test_a_quantization_that_does_not_exist_or_another_format_is_refused(exported, tmp_path):
    model_dir = exported[0]
    with pytest.raises(InputError, match=r"^quantize must be one of none, int8, got 'int4'"):
        export_onnx(str(model_dir), str(tmp_path / "a"), quantize="int4")
    with pytest.raises(InputError, match=r"^--quantize would do nothing with --format compressed-tensors"):
        main([str(model_dir), "--format", "compressed-tensors", "--quantize", "int8", "--output_dir", str(tmp_path)])
    assert not (tmp_path / "a").exists()
