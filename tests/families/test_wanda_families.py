"""Wanda on the new families: every masked matrix (fused `Wqkv`/`Wi`, gated `gate/up/down_proj`, GQA projections,
the `score` head) is calibrated on its own inputs, and its masks equal the per-row selection computed from plain
forward hooks on an unwrapped copy of the model."""

import copy

import pytest
import torch
from pruning.test_wanda import input_norms_by_plain_hooks
from transformers import AutoModelForSequenceClassification, GemmaConfig, LlamaConfig, ModernBertConfig, Qwen3Config

from families.helpers import DECODER
from families.test_modernbert import TINY
from hf_srnets.masking import SRNetModel
from hf_srnets.pruning.wanda import WandaConfig, row_mask
from hf_srnets.pruning.wanda.method import wanda_masks

CONFIGS = {
    "llama": lambda: LlamaConfig(**DECODER, pad_token_id=0),
    "qwen3": lambda: Qwen3Config(**DECODER, pad_token_id=0),
    "gemma": lambda: GemmaConfig(**DECODER, pad_token_id=0),
    "modernbert": lambda: ModernBertConfig(**TINY),
}


@pytest.mark.parametrize("family", sorted(CONFIGS))
def test_wanda_calibrates_every_masked_matrix_of_the_family(family):
    torch.manual_seed(0)
    config = CONFIGS[family]()
    config.num_labels = 3
    dense = AutoModelForSequenceClassification.from_config(config).eval()
    batch = {"input_ids": torch.tensor([[2, 7, 9, 11, 3, 0], [2, 5, 6, 3, 0, 0]])}
    batch["attention_mask"] = (batch["input_ids"] != 0).long()
    norms = input_norms_by_plain_hooks(dense, batch)
    wanda = WandaConfig(sparsity=0.5, calibration_samples=2)
    masks = wanda_masks(SRNetModel(copy.deepcopy(dense), wanda), [batch], wanda)
    # every projection of every layer (decoders: q, k, v, o, gate, up, down; ModernBERT: Wqkv, Wo, Wi, Wo) and the head
    per_layer, head = (4, 2) if family == "modernbert" else (7, 1)
    assert len(masks) == per_layer * config.num_hidden_layers + head
    for name, mask in masks.items():
        weight = dense.get_submodule(name).weight
        assert torch.equal(mask, row_mask(weight.abs() * norms[name][None, :], 0.5)), name
