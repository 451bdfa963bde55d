"""Head masks, head selection and physical head removal (Du et al. 2023 §3.1), with the loader round trip."""

import os

import pytest
import torch
from conftest import tiny_model
from transformers import AutoModelForSequenceClassification

from compact.helpers import lively, num_params, padded_inputs
from hf_srnets import load_pretrained_model
from hf_srnets.compact import HeadMask, heads_per_layer, heads_to_prune, prune_heads, pruned_heads

KINDS = ["bert", "roberta", "electra", "distilbert"]
HIDDEN, HEAD = 32, 16  # conftest TINY: 2 heads of 16 in a hidden size of 32


def _inputs(seed=0):
    return padded_inputs(seed, (3, 7), {0: 5})


@pytest.mark.parametrize("kind", KINDS)
def test_pruned_model_equals_masked_model_and_is_smaller(kind):
    model = lively(tiny_model(kind))
    batch = _inputs()
    xi = torch.ones(2, 2)
    xi[0, 1] = 0.0
    xi[1, 0] = 0.0
    with torch.no_grad(), HeadMask(model, xi):
        masked = model(**batch).logits
    with torch.no_grad():
        full = model(**batch).logits
    assert (full - masked).abs().max() > 1e-2  # the mask did something, and is gone after the context
    before = num_params(model)
    prune_heads(model, {0: [1], 1: [0]})
    with torch.no_grad():
        pruned = model(**batch).logits
    torch.testing.assert_close(pruned, masked, atol=1e-5, rtol=0)
    # per head: Q, K, V lose HEAD rows of HIDDEN weights + HEAD biases, the output projection HEAD columns
    assert before - num_params(model) == 2 * (3 * (HEAD * HIDDEN + HEAD) + HEAD * HIDDEN)
    assert heads_per_layer(model) == [1, 1]
    assert model.config.srnet_pruned_heads == {"0": [1], "1": [0]}


def test_pruning_again_uses_original_head_numbers():
    model = tiny_model("bert")
    model.config.num_attention_heads = 4  # a 4-head model of the same size: heads of 8
    model = lively(AutoModelForSequenceClassification.from_config(model.config).eval())
    batch = _inputs(1)
    xi = torch.ones(2, 4)
    xi[0, [1, 3]] = 0.0
    with torch.no_grad(), HeadMask(model, xi):
        masked = model(**batch).logits
    prune_heads(model, {0: [1]})
    prune_heads(model, {"0": [3, 1]})  # head 3 of the original model, now at position 2; 1 is already gone
    with torch.no_grad():
        torch.testing.assert_close(model(**batch).logits, masked, atol=1e-5, rtol=0)
    assert pruned_heads(model) == {"0": [1, 3]} and heads_per_layer(model) == [2, 4]


def test_save_and_load_round_trip_is_exact_and_smaller(tmp_path):
    full = tiny_model("bert")
    full.save_pretrained(tmp_path / "full")
    model = prune_heads(tiny_model("bert"), {0: [0], 1: [1]})
    model.save_pretrained(tmp_path / "pruned")
    batch = _inputs()
    loaded, info = load_pretrained_model(str(tmp_path / "pruned"), output_loading_info=True)
    assert info["missing_keys"] == [] and not loaded.training
    with torch.no_grad():
        assert torch.equal(loaded(**batch).logits, model(**batch).logits)
    for a, b in zip(loaded.state_dict().values(), model.state_dict().values()):
        assert torch.equal(a, b)
    size = os.path.getsize
    assert size(tmp_path / "pruned" / "model.safetensors") < size(tmp_path / "full" / "model.safetensors")
    with pytest.raises((RuntimeError, ValueError), match="size"):  # why the loader exists
        AutoModelForSequenceClassification.from_pretrained(tmp_path / "pruned")
    plain = load_pretrained_model(str(tmp_path / "full"))  # no record: from_pretrained
    with torch.no_grad():
        assert torch.equal(plain(**batch).logits, full(**batch).logits)


def test_loader_refuses_weights_that_do_not_fit(tmp_path):
    model = prune_heads(tiny_model("bert"), {0: [0]})
    model.save_pretrained(tmp_path)
    config = tmp_path / "config.json"
    config.write_text(config.read_text().replace('"0": [\n      0\n    ]', '"1": [\n      0\n    ]'))
    assert '"1": [' in config.read_text()
    with pytest.raises(ValueError, match="do not fit the head-pruned model"):
        load_pretrained_model(str(tmp_path))


def test_unsupported_layout_is_refused_by_name():
    with pytest.raises(ValueError, match="DeBERTa's disentangled attention is not supported"):
        prune_heads(tiny_model("deberta-v2"), {0: [0]})


def test_a_layer_keeps_at_least_one_head():
    with pytest.raises(ValueError, match=r"Layer 1: .*keep at least one head"):
        prune_heads(tiny_model("bert"), {1: [0, 1]})
    with pytest.raises(ValueError, match="head indices must be in"):
        prune_heads(tiny_model("bert"), {0: [2]})


def test_heads_to_prune_takes_exactly_the_lowest_with_ties_by_position():
    importance = torch.tensor([[0.5, 0.1, 0.9, 0.3], [0.1, 0.8, 0.2, 0.7], [0.6, 0.4, 0.1, 0.95]])
    # 12 heads: 0.25 -> 3 heads, the three 0.1s (layer 0 head 1, layer 1 head 0, layer 2 head 2)
    assert heads_to_prune(importance, 0.25) == {0: [1], 1: [0], 2: [2]}
    # 0.5 -> 6: + 0.2 (1,2), 0.3 (0,3), 0.4 (2,1)
    assert heads_to_prune(importance, 0.5) == {0: [1, 3], 1: [0, 2], 2: [1, 2]}
    assert heads_to_prune(importance, 0.2) == {0: [1], 1: [0]}  # floor(2.4) = 2: the tie goes to the lower layer
    assert heads_to_prune(importance, 0.0) == {}
    ties = torch.ones(2, 3)
    assert heads_to_prune(ties, 0.5) == {0: [0, 1], 1: [0]}  # all tied: by layer, then head
    # BERT-base, 0.2 -> 28 of 144 (the paper's); all tied: 11 of layer 0 (one is kept), 11 of layer 1, 6 of layer 2
    assert heads_to_prune(torch.full((12, 12), 0.5), 0.2) == {0: list(range(11)), 1: list(range(11)), 2: list(range(6))}


def test_heads_to_prune_never_empties_a_layer():
    importance = torch.tensor([[0.1, 0.2, 0.3], [0.9, 0.8, 0.7]])
    # 4 of 6: layer 0's three are lowest, but its last (0.3) is skipped for layer 1's 0.7 and 0.8
    assert heads_to_prune(importance, 4 / 6) == {0: [0, 1], 1: [1, 2]}
    with pytest.raises(ValueError, match="at most 4 heads"):
        heads_to_prune(importance, 0.9)  # 5 of 6 would empty a layer
    for bad in (1.0, -0.1):
        with pytest.raises(ValueError, match=r"must be in \[0, 1\)"):
            heads_to_prune(importance, bad)
    assert sum(map(len, heads_to_prune(torch.rand(10, 10), 0.29).values())) == 29  # 0.29·100 = 28.999…
