"""INT8 ONNX graphs (`run_export.py --format onnx --quantize int8`): ONNX Runtime's dynamic quantization of the
exported float32 graph.

The weights of every MatMul and Gemm become int8, one scale per output channel (`per_channel=True`); activations are
quantized at run time, per tensor, to uint8 from each batch's own range (no calibration data), and the products run
in integer kernels (VNNI or AMX where the CPU has them). Embeddings, LayerNorm, softmax and the residual sums stay
float32. An INT8 model does not reproduce the float logits to a tolerance, so its check is what a user of the model
sees: the share of predicted labels that agree with PyTorch's float32 model on the check batches (random token ids of
several shapes), and the largest logit difference, both in `export_report.json` beside the settings and the CPU's
integer instructions.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from torch import nn

from ..resources.cpu import cpuinfo_values

QUANTIZE_CHOICES = ("none", "int8")
INT8_CHECK_SHAPES = ((32, 16), (16, 48), (3, 9))  # (batch, sequence): 51 examples
INTEGER_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8", "avx2")


def quantize_onnx(source: str, target: str) -> dict[str, Any]:
    """Write `source`'s graph with INT8 weights to `target` (module docstring); the settings, for the report."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    settings = {"op_types": ["MatMul", "Gemm"], "per_channel": True, "reduce_range": False}
    quantize_dynamic(
        source,
        target,
        op_types_to_quantize=settings["op_types"],
        per_channel=settings["per_channel"],
        reduce_range=settings["reduce_range"],
        weight_type=QuantType.QInt8,
    )
    return {
        "method": "onnxruntime.quantization.quantize_dynamic",
        "weights": "int8, symmetric, per output channel",
        "activations": "uint8, per tensor, range of each batch at run time",
        **settings,
        "cpu_integer_instructions": [flag for flag in INTEGER_FLAGS if flag in cpu_flags()],
    }


def cpu_flags() -> set[str]:
    """The CPU's instruction flags (/proc/cpuinfo)."""
    return set(" ".join(cpuinfo_values("flags") or []).split())  # none known off Linux


def int8_agreement(
    model: nn.Module, names: list[str], path: str, ort: Any, sample_batch: Any, pytorch_logits: Any
) -> dict[str, Any]:
    """The INT8 graph at `path` against the float32 PyTorch `model` on `INT8_CHECK_SHAPES` batches: the share of
    predicted labels that agree, the largest |logit difference| and the number of examples."""
    options = ort.SessionOptions()
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    expected, got = [], []
    for seed, shape in enumerate(INT8_CHECK_SHAPES, start=100):
        inputs = sample_batch(model.config, names, shape, seed)
        expected.append(pytorch_logits(model, inputs, path).numpy())
        got.append(session.run(["logits"], {name: tensor.numpy() for name, tensor in inputs.items()})[0])
    return label_agreement(expected, got)


def label_agreement(expected: list[Any], got: list[Any]) -> dict[str, Any]:
    """INT8 logits `got` against the float ones `expected` (numpy arrays or tensors, batch by batch): the share of
    predicted labels that agree, the largest |logit difference| and the number of examples."""
    expected, got = [np.asarray(e) for e in expected], [np.asarray(g) for g in got]
    agree = sum(int((g.argmax(-1) == e.argmax(-1)).sum()) for g, e in zip(got, expected))
    total = sum(len(e) for e in expected)
    worst = max(float(np.abs(g - e).max()) for g, e in zip(got, expected))
    return {"label_agreement": agree / total, "max_abs_diff": worst, "check_examples": total}


def replace_with_int8(path: str) -> dict[str, Any]:
    """Quantize the graph at `path` in place (through a file beside it); the settings."""
    target = f"{path}.int8.tmp"
    try:
        settings = quantize_onnx(path, target)
        os.replace(target, path)
    finally:
        if os.path.exists(target):
            os.remove(target)
    return settings
