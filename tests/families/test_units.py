"""The structured units of the new families, checked against row/column sets written out by hand: a decoder's
attention unit is a whole key/value group (its query heads with it), ModernBERT's head spans the Q, K and V blocks
of the fused `Wqkv`, and a gated MLP unit is paired across its projections (both halves of ModernBERT's `Wi`)."""

import torch
from transformers import AutoModelForSequenceClassification, LlamaConfig, ModernBertConfig

from families.helpers import DECODER
from hf_srnets.masking import SRNetModel
from hf_srnets.pruning.threshold.config import ThresholdConfig


def _srnet(config):
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_config(config)
    return SRNetModel(model, ThresholdConfig(sparsity=0.5, mask_granularity="neuron"))


def _fix(srnet, layer_name, kept):
    srnet.masked_layers()[layer_name].units.set_fixed(torch.tensor(kept))


def _zero_rows(srnet, name):
    return (~srnet.masked_layers()[name].binary_mask()).all(dim=1).nonzero().flatten().tolist()


def _zero_cols(srnet, name):
    return (~srnet.masked_layers()[name].binary_mask()).all(dim=0).nonzero().flatten().tolist()


def test_decoder_units_are_key_value_groups_and_paired_mlp_rows():
    srnet = _srnet(LlamaConfig(**DECODER, num_labels=3, pad_token_id=0))
    attn, mlp = "model.layers.0.self_attn.", "model.layers.0.mlp."
    _fix(srnet, attn + "q_proj", [True, False])  # drop key/value group 1 = query heads 2, 3 (head_dim 8)
    assert _zero_rows(srnet, attn + "q_proj") == list(range(16, 32))
    assert _zero_rows(srnet, attn + "k_proj") == list(range(8, 16))
    assert _zero_rows(srnet, attn + "v_proj") == list(range(8, 16))
    assert _zero_cols(srnet, attn + "o_proj") == list(range(16, 32))
    kept = [j not in (0, 5, 47) for j in range(48)]
    _fix(srnet, mlp + "gate_proj", kept)
    assert _zero_rows(srnet, mlp + "gate_proj") == [0, 5, 47] == _zero_rows(srnet, mlp + "up_proj")
    assert _zero_cols(srnet, mlp + "down_proj") == [0, 5, 47]


def test_modernbert_units_span_every_block_of_the_fused_matrices():
    config = ModernBertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                              intermediate_size=48, pad_token_id=0, num_labels=3)  # fmt: skip
    srnet = _srnet(config)
    names = [n for n in srnet.masked_layers() if ".layers.0." in n]
    wqkv, wo, wi, mlp_wo = names
    _fix(srnet, wqkv, [True, False, True, True])  # drop head 1: rows 8..15 of each 32-row block Q, K, V
    assert _zero_rows(srnet, wqkv) == [*range(8, 16), *range(40, 48), *range(72, 80)]
    assert _zero_cols(srnet, wo) == list(range(8, 16))
    _fix(srnet, wi, [j != 7 for j in range(48)])  # GLU unit 7: row 7 of the input half, row 48 + 7 of the gate half
    assert _zero_rows(srnet, wi) == [7, 55]
    assert _zero_cols(srnet, mlp_wo) == [7]


def test_ffn_granularity_masks_the_gated_mlp_units_and_leaves_attention_dense():
    # issue 50: --mask_granularity ffn on ModernBERT or Qwen2 crashed ("no encoder layer list found"), head worked
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_config(LlamaConfig(**DECODER, num_labels=3, pad_token_id=0))
    srnet = SRNetModel(model, ThresholdConfig(sparsity=0.5, mask_granularity="ffn"))
    masked = srnet.masked_layers()
    mlp = "model.layers.0.mlp."
    assert {mlp + p for p in ("gate_proj", "up_proj", "down_proj")} <= set(masked)
    assert not any("self_attn" in name for name in masked)  # attention stays dense
    _fix(srnet, mlp + "gate_proj", [j not in (1, 9) for j in range(48)])
    assert _zero_rows(srnet, mlp + "gate_proj") == [1, 9] == _zero_rows(srnet, mlp + "up_proj")
    assert _zero_cols(srnet, mlp + "down_proj") == [1, 9]
    config = ModernBertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                              intermediate_size=48, pad_token_id=0, num_labels=3)  # fmt: skip
    modern = SRNetModel(AutoModelForSequenceClassification.from_config(config), ThresholdConfig(mask_granularity="ffn"))
    wi, mlp_wo = [n for n in modern.masked_layers() if ".layers.0." in n]  # the MLP's two; Wqkv and attn.Wo dense
    _fix(modern, wi, [j != 7 for j in range(48)])
    assert (_zero_rows(modern, wi), _zero_cols(modern, mlp_wo)) == ([7, 55], [7])
