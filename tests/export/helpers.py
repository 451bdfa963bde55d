"""What the export tests share: tiny classifiers saved with a tokenizer, merged SRNets with exact zeros, and ONNX
Runtime's logits computed here from a tokenizer's output, as a user of the exported folder would."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from training.helpers import tiny_tokenizer

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import ThresholdConfig

# two batches of other sizes and lengths than the ones the exporter traced and checked
TEXTS = (
    ["w5 w6 w7", "w8 w9 w10 w11 w12 w13 w14 w15 w16 w17 w18"],
    ["w20", "w21 w22 w23 w24 w25", "w30 w31 w32 w33 w34 w35 w36 w37 w38 w39 w40 w41 w42 w43 w44 w45 w46", "w50 w51"],
)


def lively(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """Weights of std 0.3 instead of the init's 0.02, so that logits differ visibly between inputs."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.3)
    return model.eval()


def save_classifier(model: torch.nn.Module, path: Path, tokenizer: bool = True) -> Path:
    """`model` (and the tiny BERT tokenizer) saved in `path`."""
    model.save_pretrained(path)
    if tokenizer:
        tiny_tokenizer(path).save_pretrained(path)
    return path


def merged_srnet(model: torch.nn.Module, granularity: str, sparsity: float) -> torch.nn.Module:
    """`model` masked at `granularity` and merged: a plain model whose pruned weights are exactly 0."""
    srnet = SRNetModel(model, ThresholdConfig(mask_granularity=granularity, sparsity=sparsity, mask_init="soft"))
    return srnet.merge_and_unload().eval()


def ort_logits(onnx_path: Path, encoded: dict) -> np.ndarray:
    """ONNX Runtime's logits for a tokenizer's numpy output, fed the inputs the graph declares."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    (logits,) = session.run(["logits"], {i.name: encoded[i.name] for i in session.get_inputs()})
    return logits
