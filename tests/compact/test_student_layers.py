"""Students with fewer layers: `keep_layers` keeps layers ⌊i·L/n⌋ and saves as a stock checkpoint; students with
narrower FFNs: `narrow_ffn` keeps the units of largest mean |W|."""

import copy

import pytest
import torch
from conftest import tiny_config
from transformers import AutoModelForSequenceClassification

from hf_srnets.compact import evenly_spaced, keep_layers, load_pretrained_model, prune_heads


def test_the_documented_layers():
    assert evenly_spaced(12, 6) == [0, 2, 4, 6, 8, 10]  # half: every other layer (DistilBERT-style)
    assert evenly_spaced(12, 4) == [0, 3, 6, 9]
    assert evenly_spaced(12, 3) == [0, 4, 8]
    assert evenly_spaced(6, 4) == [0, 1, 3, 4]  # ⌊0⌋, ⌊1.5⌋, ⌊3⌋, ⌊4.5⌋
    assert evenly_spaced(4, 4) == [0, 1, 2, 3]


def _model(kind, layers):
    config = tiny_config(kind)
    config.num_hidden_layers = layers
    torch.manual_seed(0)
    return AutoModelForSequenceClassification.from_config(config).eval()


@pytest.mark.parametrize(("kind", "prefix"), [("bert", "bert.encoder"), ("distilbert", "distilbert.transformer")])
def test_student_keeps_those_layers_and_reloads_with_from_pretrained(tmp_path, kind, prefix):
    model = _model(kind, 6)
    original = {k: v.clone() for k, v in model.state_dict().items()}
    assert keep_layers(model, 3) == [0, 2, 4]
    state = model.state_dict()
    for new, old in enumerate([0, 2, 4]):
        for key, value in state.items():
            if key.startswith(f"{prefix}.layer.{new}."):
                old_key = key.replace(f".layer.{new}.", f".layer.{old}.")
                assert torch.equal(value, original[old_key]), key
    assert not any(k.startswith(f"{prefix}.layer.3.") for k in state)
    assert model.config.num_hidden_layers == 3
    model.save_pretrained(tmp_path)
    reloaded = AutoModelForSequenceClassification.from_pretrained(tmp_path).eval()
    ids = torch.randint(5, 90, (2, 6))
    with torch.no_grad():
        assert torch.equal(reloaded(input_ids=ids).logits, model(input_ids=ids).logits)


def test_student_of_a_head_pruned_model_keeps_the_record(tmp_path):
    model = prune_heads(_model("bert", 4), {0: [1], 2: [0], 3: [1]})
    keep_layers(model, 2)  # layers 0 and 2
    assert model.config.srnet_pruned_heads == {"0": [1], "1": [0]}
    model.save_pretrained(tmp_path)
    ids = torch.randint(5, 90, (2, 6))
    with torch.no_grad():
        assert torch.equal(load_pretrained_model(str(tmp_path))(input_ids=ids).logits, model(input_ids=ids).logits)


def test_layer_counts_out_of_range_are_refused():
    for n in (0, 3):
        with pytest.raises(ValueError, match="the model has 2 layers"):
            keep_layers(_model("bert", 2), n)
    with pytest.raises(ValueError, match="no encoder layer list"):
        keep_layers(torch.nn.Linear(2, 2), 1)


def test_per_layer_ffn_widths_follow_the_kept_layers(tmp_path):
    from hf_srnets.compact import ffn_widths
    from hf_srnets.compact.neurons import prune_ffn_units

    model = _model("bert", 4)
    prune_ffn_units(model, {0: range(10), 1: range(20), 2: range(30), 3: range(40)})  # widths 54, 44, 34, 24
    assert model.config.srnet_intermediate_sizes == [54, 44, 34, 24]
    keep_layers(model, 2)  # layers 0 and 2
    assert ffn_widths(model) == [54, 34] and model.config.srnet_intermediate_sizes == [54, 34]
    inputs = {"input_ids": torch.randint(5, 100, (2, 7))}
    with torch.no_grad():
        expected = model(**inputs).logits
    model.save_pretrained(tmp_path)
    with torch.no_grad():
        torch.testing.assert_close(load_pretrained_model(str(tmp_path))(**inputs).logits, expected, atol=1e-5, rtol=0)


@pytest.mark.parametrize(
    ("kind", "w_in", "w_out"), [("bert", "intermediate.dense", "output.dense"), ("distilbert", "ffn.lin1", "ffn.lin2")]
)
def test_a_narrower_student_keeps_the_units_of_largest_mean_magnitude_and_reloads_plainly(tmp_path, kind, w_in, w_out):
    """Tiny models with 64 FFN units a layer (hidden 32): units 5 and 9 get every weight at 10 in layer 0 (their
    rows of W_in and columns of W_out), units 1 and 7 at 5 in layer 1, all other weights at most 0.02 in size, so
    the mean |W| ranks them first. --student_ffn_size 2 keeps exactly those, in order, and the student's logits are
    the original's with every other unit's W_out column zeroed (a unit's term removed is a unit's term zeroed)."""
    from hf_srnets.compact import ffn_sites, narrow_ffn

    model = _model(kind, 2)
    chosen = {0: [5, 9], 1: [1, 7]}
    with torch.no_grad():
        for index, site in enumerate(ffn_sites(model)):
            site.w_in.weight.clamp_(-0.02, 0.02)
            site.w_out.weight.clamp_(-0.02, 0.02)
            for unit in chosen[index]:
                site.w_in.weight[unit].fill_(10.0 if index == 0 else 5.0)
                site.w_out.weight[:, unit].fill_(10.0 if index == 0 else 5.0)
    reference = copy.deepcopy(model)
    with torch.no_grad():
        for index, site in enumerate(ffn_sites(reference)):
            dropped = [j for j in range(site.width) if j not in chosen[index]]
            site.w_out.weight[:, dropped] = 0.0
    inputs = {"input_ids": torch.tensor([[2, 7, 9, 11, 3]]), "attention_mask": torch.ones(1, 5, dtype=torch.long)}
    assert narrow_ffn(model, 2) == [64, 64]
    for index, site in enumerate(ffn_sites(model)):
        assert site.width == 2 and site.w_in.weight[:, 0].tolist() == [10.0 if index == 0 else 5.0] * 2
    with torch.no_grad():
        torch.testing.assert_close(model(**inputs).logits, reference(**inputs).logits, rtol=0, atol=1e-6)
    model.save_pretrained(tmp_path)
    reloaded = AutoModelForSequenceClassification.from_pretrained(tmp_path).eval()  # a stock checkpoint
    with torch.no_grad():
        torch.testing.assert_close(reloaded(**inputs).logits, reference(**inputs).logits, rtol=0, atol=1e-6)
    assert (
        reloaded.get_submodule(
            f"{'bert.encoder' if kind == 'bert' else 'distilbert.transformer'}.layer.1.{w_in}"
        ).out_features
        == 2
    )
    assert (
        reloaded.get_submodule(
            f"{'bert.encoder' if kind == 'bert' else 'distilbert.transformer'}.layer.1.{w_out}"
        ).in_features
        == 2
    )


def test_a_student_ffn_size_out_of_range_is_refused():
    from hf_srnets.compact import narrow_ffn

    for width in (0, 65):
        with pytest.raises(ValueError, match=r"--student_ffn_size .*: the model's FFNs have 64 units .* from 1 to 63"):
            narrow_ffn(_model("bert", 2), width)
