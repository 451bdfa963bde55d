"""Physical removal of FFN units: the smaller model computes the FFN without the units' terms, widths are recorded
in the config, and a uniform width saves as a stock transformers checkpoint."""

import json

import pytest
import torch
from conftest import tiny_model
from transformers import AutoModelForSequenceClassification

from compact.helpers import lively, logits, num_params, padded_inputs
from hf_srnets import load_pretrained_model
from hf_srnets.compact import (
    INTERMEDIATE_SIZES_ATTR,
    PRUNED_HEADS_ATTR,
    ffn_sites,
    ffn_widths,
    heads_per_layer,
    prune_ffn_units,
    prune_heads,
    set_ffn_widths,
)
from hf_srnets.errors import InputError

KINDS = ["bert", "roberta", "electra", "distilbert"]
HIDDEN, WIDTH = 32, 64  # conftest TINY


def _inputs(seed=0):
    return padded_inputs(seed, (3, 7), {0: 4, 2: 6})


def _zero_units(model, units):
    """The reference: the same model with column j of W_out zeroed for each removed unit (its term is then 0)."""
    with torch.no_grad():
        for layer, js in units.items():
            ffn_sites(model)[layer].w_out.weight[:, js] = 0.0
    return model


@pytest.mark.parametrize("kind", KINDS)
def test_removed_units_equal_zeroed_units_and_are_smaller(kind):
    model, batch = lively(tiny_model(kind)), _inputs()
    units = {0: [1, 5, 6, 40], 1: [0, 63]}
    reference = _zero_units(lively(tiny_model(kind)), units)
    assert (logits(model, batch) - logits(reference, batch)).abs().max() > 1e-2  # the units matter
    before = num_params(model)
    prune_ffn_units(model, units)
    torch.testing.assert_close(logits(model, batch), logits(reference, batch), atol=1e-5, rtol=0)
    assert ffn_widths(model) == [60, 62]
    assert before - num_params(model) == 6 * (2 * HIDDEN + 1)  # per unit: a row of W_in, b_in[j], a column of W_out
    # the kept units are the others, in order
    site = ffn_sites(model)[0]
    full = ffn_sites(reference)[0]
    keep = [j for j in range(WIDTH) if j not in units[0]]
    assert torch.equal(site.w_in.weight, full.w_in.weight[keep]) and torch.equal(site.w_in.bias, full.w_in.bias[keep])
    assert torch.equal(site.w_out.weight, full.w_out.weight[:, keep])


@pytest.mark.parametrize("kind", ["bert", "distilbert"])
def test_uniform_width_is_a_stock_checkpoint(kind, tmp_path):
    model, batch = lively(tiny_model(kind)), _inputs(1)
    prune_ffn_units(model, {0: range(0, 64, 2), 1: range(1, 64, 2)})
    attr = "hidden_dim" if kind == "distilbert" else "intermediate_size"
    assert getattr(model.config, attr) == 32 and not hasattr(model.config, INTERMEDIATE_SIZES_ATTR)
    model.save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved[attr] == 32 and INTERMEDIATE_SIZES_ATTR not in saved and "srnet_pruned_heads" not in saved
    stock = AutoModelForSequenceClassification.from_pretrained(tmp_path).eval()
    assert torch.equal(logits(stock, batch), logits(model, batch))
    assert ffn_widths(load_pretrained_model(str(tmp_path))) == [32, 32]


def test_per_layer_widths_and_heads_round_trip_through_the_loader(tmp_path):
    model, batch = lively(tiny_model("bert")), _inputs(2)
    prune_heads(model, {1: [0]})
    prune_ffn_units(model, {0: [3, 4], 1: list(range(50))})
    assert model.config.intermediate_size == 62 and getattr(model.config, INTERMEDIATE_SIZES_ATTR) == [62, 14]
    model.save_pretrained(tmp_path)
    with pytest.raises((RuntimeError, ValueError), match="size"):  # why the loader exists
        AutoModelForSequenceClassification.from_pretrained(tmp_path)
    loaded, info = load_pretrained_model(str(tmp_path), output_loading_info=True)
    assert info["missing_keys"] == [] and not loaded.training
    assert ffn_widths(loaded) == [62, 14] and heads_per_layer(loaded) == [2, 1]
    assert torch.equal(logits(loaded, batch), logits(model, batch))
    for (name, a), b in zip(loaded.state_dict().items(), model.state_dict().values()):
        assert torch.equal(a, b), name


def test_widths_only_round_trip_without_heads(tmp_path):
    model = lively(tiny_model("distilbert"))
    prune_ffn_units(model, {1: [0, 1, 2]})
    model.save_pretrained(tmp_path)
    loaded = load_pretrained_model(str(tmp_path))
    assert ffn_widths(loaded) == [64, 61] and loaded.config.hidden_dim == 64
    assert torch.equal(logits(loaded, _inputs()), logits(model, _inputs()))


def test_a_layer_may_lose_every_unit():
    model, batch = lively(tiny_model("bert")), _inputs()
    reference = _zero_units(lively(tiny_model("bert")), {1: list(range(WIDTH))})
    prune_ffn_units(model, {1: range(WIDTH)})
    assert ffn_widths(model) == [64, 0]
    torch.testing.assert_close(logits(model, batch), logits(reference, batch), atol=1e-5, rtol=0)


def test_loader_refuses_widths_that_do_not_fit(tmp_path):
    model = prune_ffn_units(tiny_model("bert"), {0: [0, 1]})
    model.save_pretrained(tmp_path)
    config = tmp_path / "config.json"
    data = json.loads(config.read_text())
    assert data[INTERMEDIATE_SIZES_ATTR] == [62, 64]
    data[INTERMEDIATE_SIZES_ATTR] = [64, 62]
    config.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="do not fit"):
        load_pretrained_model(str(tmp_path))
    data[INTERMEDIATE_SIZES_ATTR] = [62]
    config.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="has 1 widths but the model has 2 layers"):
        load_pretrained_model(str(tmp_path))
    # issue 70: a malformed record (a width "wide", a head list that is no list) was a raw ValueError in the rebuild
    for key, value, error in (
        (INTERMEDIATE_SIZES_ATTR, ["wide", 64], r"srnet_intermediate_sizes must be a list of non-negative integer"),
        (PRUNED_HEADS_ATTR, {"0": "all"}, r"srnet_pruned_heads must map layer indices to lists of head indices"),
    ):
        config.write_text(json.dumps({**data, INTERMEDIATE_SIZES_ATTR: [62, 64], key: value}))
        with pytest.raises(InputError, match=error + r".*save the model again with hf_srnets"):
            load_pretrained_model(str(tmp_path))


def test_bad_units_are_refused_by_name():
    with pytest.raises(ValueError, match=r"FFN unit indices must be in \[0, 64\)"):
        prune_ffn_units(tiny_model("bert"), {0: [64]})
    with pytest.raises(ValueError, match="Layer 2 does not exist"):
        prune_ffn_units(tiny_model("bert"), {2: [0]})
    with pytest.raises(ValueError, match=r"width 65 is not in \[0, 64\]"):
        set_ffn_widths(tiny_model("bert"), [65, 64])
