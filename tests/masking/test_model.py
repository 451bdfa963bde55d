"""SRNetModel: targets by architecture, exact sparsity, merging, saving and loading masks."""

import math
import os

import pytest
import torch
from conftest import tiny_model
from safetensors.torch import load_file

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import MASKS_NAME, MaskedLinear, ThresholdConfig
from hf_srnets.pruning.threshold import update_thresholds

ARCHS = ["bert", "roberta", "distilbert", "electra", "deberta-v2"]
# θ_pr per layer is 6 matrices (Q, K, V, AO, in, out); 2 tiny layers; plus the classifier linear(s)
CLASSIFIER_LAYERS = {"bert": 1, "roberta": 2, "distilbert": 2, "electra": 2, "deberta-v2": 1}


def _inputs(batch=3, length=7):
    torch.manual_seed(11)
    return {
        "input_ids": torch.randint(5, 100, (batch, length)),
        "attention_mask": torch.ones(batch, length, dtype=torch.long),
    }


def _shuffle_scores(srnet: SRNetModel, seed=0):
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for layer in srnet.masked_layers().values():
            layer.mask_scores.copy_(torch.rand(layer.mask_scores.shape, generator=gen))


@pytest.mark.parametrize("arch", ARCHS)
def test_default_targets_are_theta_pr(arch):
    srnet = SRNetModel(tiny_model(arch), ThresholdConfig(sparsity=0.5))
    layers = srnet.masked_layers()
    assert len(srnet.layer_targets) == 2 * 6
    assert len(layers) == 12 + CLASSIFIER_LAYERS[arch]
    for name, param in srnet.named_parameters():
        assert param.requires_grad == name.endswith("mask_scores"), name
    for name in layers:
        assert "embeddings" not in name and "LayerNorm" not in name and "pooler" not in name


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("sparsity", [0.2, 0.5, 0.9])
def test_exact_zeros_per_matrix_after_threshold_update(arch, sparsity):
    srnet = SRNetModel(tiny_model(arch), ThresholdConfig(sparsity=0.3))
    _shuffle_scores(srnet)
    update_thresholds(srnet, sparsity)
    for name, mask in srnet.binary_masks().items():
        assert int((~mask).sum()) == math.floor(sparsity * mask.numel()), name


def test_global_sparsity_counts_all_matrices_together():
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5, sparsity_scope="global", mask_init="soft"))
    report = srnet.sparsity_report()
    assert report["num_pruned"] == math.floor(0.5 * report["num_prunable"])
    assert len(set(report["per_module"].values())) > 1  # matrices differ under a global budget


def test_no_classifier_mask_and_explicit_targets():
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(mask_classifier=False, target_modules=["query", "value"]))
    assert set(n.rsplit(".", 1)[-1] for n in srnet.masked_layers()) == {"query", "value"}
    regex = SRNetModel(
        tiny_model("bert"), ThresholdConfig(mask_classifier=False, target_modules=r"intermediate\.dense$")
    )
    assert len(regex.masked_layers()) == 2


def test_unknown_targets_give_clear_error():
    with pytest.raises(ValueError, match=r"matched no nn\.Linear"):
        SRNetModel(tiny_model("bert"), ThresholdConfig(target_modules=["no_such_layer"]))


@pytest.mark.parametrize("arch", ARCHS)
def test_merge_and_unload_equals_masked_forward(arch):
    srnet = SRNetModel(tiny_model(arch), ThresholdConfig(sparsity=0.6, mask_init="soft"))
    _shuffle_scores(srnet, seed=3)
    update_thresholds(srnet, 0.6)
    srnet.eval()
    inputs = _inputs()
    with torch.no_grad():
        masked_logits = srnet(**inputs).logits
    masks = srnet.binary_masks()
    merged = srnet.merge_and_unload()
    assert not any(isinstance(m, MaskedLinear) for m in merged.modules())
    with torch.no_grad():
        merged_logits = merged(**inputs).logits
    assert torch.allclose(masked_logits, merged_logits, atol=1e-5)
    for name, mask in masks.items():
        weight = merged.get_submodule(name).weight
        assert torch.all(weight[~mask] == 0)
        assert int((weight == 0).sum()) >= int((~mask).sum())


@pytest.mark.parametrize("arch", ["bert", "roberta", "distilbert"])
def test_save_and_load_round_trip(tmp_path, arch):
    srnet = SRNetModel(tiny_model(arch), ThresholdConfig(sparsity=0.5))
    _shuffle_scores(srnet, seed=5)
    update_thresholds(srnet, 0.5)
    srnet.save_pretrained(tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["srnet_config.json", MASKS_NAME]
    loaded = SRNetModel.from_pretrained(tiny_model(arch), tmp_path)
    for name, mask in srnet.binary_masks().items():
        assert torch.equal(loaded.binary_masks()[name], mask), name
    srnet.eval()
    loaded.eval()
    inputs = _inputs()
    with torch.no_grad():
        assert torch.allclose(srnet(**inputs).logits, loaded(**inputs).logits, atol=1e-6)


def test_saved_masks_are_bit_packed_and_hold_no_base_weights(tmp_path):
    from transformers import AutoModelForSequenceClassification, BertConfig

    torch.manual_seed(0)
    config = BertConfig(
        hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512, vocab_size=200, num_labels=3
    )
    srnet = SRNetModel(AutoModelForSequenceClassification.from_config(config), ThresholdConfig(sparsity=0.5))
    srnet.save_pretrained(tmp_path)
    tensors = load_file(os.path.join(tmp_path, MASKS_NAME))
    assert all(t.dtype == torch.uint8 for t in tensors.values())
    n = srnet.sparsity_report()["num_prunable"]
    bits = 8 * os.path.getsize(os.path.join(tmp_path, MASKS_NAME))
    assert bits / n <= 1.1


def test_trainable_classifier_is_saved_with_masks(tmp_path):
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5, trainable_classifier=True))
    with torch.no_grad():
        srnet.base_model.classifier.base_layer.bias.add_(1.0)
    srnet.save_pretrained(tmp_path)
    loaded = SRNetModel.from_pretrained(tiny_model("bert"), tmp_path)
    assert torch.allclose(loaded.base_model.classifier.base_layer.bias, srnet.base_model.classifier.base_layer.bias)


def test_foreign_masks_are_refused(tmp_path):
    SRNetModel(tiny_model("bert"), ThresholdConfig()).save_pretrained(tmp_path / "bert")
    with pytest.raises(ValueError, match="saved for a 'bert' model"):
        SRNetModel.from_pretrained(tiny_model("roberta"), tmp_path / "bert")
    with pytest.raises(ValueError, match="Shape mismatch"):
        SRNetModel.from_pretrained(tiny_model("bert", num_labels=2), tmp_path / "bert")
    with pytest.raises(ValueError, match="base weights differ"):
        SRNetModel.from_pretrained(tiny_model("bert", seed=1), tmp_path / "bert")
    loaded = SRNetModel.from_pretrained(tiny_model("bert", seed=1), tmp_path / "bert", check_fingerprint=False)
    assert loaded.sparsity_report()["sparsity"] == pytest.approx(0.5, abs=0.01)
    with pytest.raises(FileNotFoundError, match=r"srnet_config\.json"):
        SRNetModel.from_pretrained(tiny_model("bert"), tmp_path)


def test_training_state_round_trip(tmp_path):
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5))
    _shuffle_scores(srnet, seed=9)
    update_thresholds(srnet, 0.4)
    srnet.save_training_state(tmp_path)
    other = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5))
    other.load_training_state(tmp_path)
    for (name, a), b in zip(srnet.masked_layers().items(), other.masked_layers().values()):
        assert torch.equal(a.mask_scores, b.mask_scores)
        assert torch.equal(a.binary_mask(), b.binary_mask()), name


def test_prunable_count_matches_the_papers_84m_for_bert_base():
    from transformers import AutoModelForSequenceClassification, BertConfig

    one_layer = BertConfig(num_hidden_layers=1, num_labels=3)  # bert-base widths: 768 hidden, 3072 FFN
    srnet = SRNetModel(AutoModelForSequenceClassification.from_config(one_layer), ThresholdConfig())
    per_layer = srnet.sparsity_report()["num_prunable"] - 768 * 3  # minus W_cls
    assert 12 * per_layer == 84_934_656  # "84M parameters in the Transformer layers" (§4.1.4)


def test_a_merged_srnet_refuses_to_save_push_or_merge_again(tmp_path):
    """Issue 33, round 4: after merge_and_unload() the masked layers are gone; save_pretrained then wrote a "mask
    dir" with no mask and every base weight as a trained tensor (a silently wrong save). Now each call is refused."""
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5))
    merged = srnet.merge_and_unload()
    assert isinstance(merged.bert.encoder.layer[0].attention.self.query, torch.nn.Linear)
    for call, run in [
        ("save_pretrained", lambda: srnet.save_pretrained(tmp_path / "masks")),
        ("push_to_hub", lambda: srnet.push_to_hub("someone/masks")),
        ("merge_and_unload", srnet.merge_and_unload),
    ]:
        with pytest.raises(
            ValueError,
            match=rf"{call}\(\): this SRNetModel was merged \(merge_and_unload\(\) is "
            r"one-way.*Save or push the masks before merging",
        ):
            run()
    assert not (tmp_path / "masks").exists()


def test_save_pretrained_into_a_file_is_refused_by_name(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("a user's file\n")
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5))
    with pytest.raises(ValueError, match=r"notes\.txt is a file: masks are saved into a folder .*give a folder path"):
        srnet.save_pretrained(notes)
    assert notes.read_text() == "a user's file\n"
