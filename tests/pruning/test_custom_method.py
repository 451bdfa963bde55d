"""A pruning method added from this file alone runs through `run_glue_sparse.py`: the registry is the only seam.

`toy_random` keeps a random ⌊(1−s)·n⌋ of each matrix, drawn from a seed in its config, and trains the weights
under these fixed masks (pruned weights held at 0). Nothing outside this file knows it. Its layer is a `MaskedLayer`
(`MaskedLinear`) and its hook sees the model as a `MaskedModel`; a layer of another class is refused at registration.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import pytest
import torch
from conftest import mnli_run_args
from torch import nn
from transformers import AutoModelForSequenceClassification, BertModel

from hf_srnets.commands.glue_sparse import main
from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import (
    PRUNING_METHODS,
    MaskedLayer,
    MaskedLinear,
    MaskedModel,
    PruningConfig,
    PruningMethod,
    register_pruning_method,
    unregister_pruning_method,
)


@dataclass
class RandomConfig(PruningConfig):
    toy_mask_seed: int = field(default=0, metadata={"help": "Seed of the random masks."})


def random_masks(shapes: dict[str, list[int]], sparsity: float, seed: int) -> dict[str, torch.Tensor]:
    """Per matrix, exactly ⌊s·n⌋ zeros at positions drawn by `torch.randperm` (matrices in name order)."""
    generator = torch.Generator().manual_seed(seed)
    masks = {}
    for name in sorted(shapes):
        n = math.prod(shapes[name])
        mask = torch.ones(n, dtype=torch.bool)
        mask[torch.randperm(n, generator=generator)[: math.floor(sparsity * n)]] = False
        masks[name] = mask.reshape(shapes[name])
    return masks


class RandomPruning(PruningMethod):
    """Random fixed masks; the weights train under them."""

    name = "toy_random"
    config_class = RandomConfig
    layer_class = MaskedLinear

    def initialize(self, srnet: MaskedModel) -> None:
        cfg = self.config
        srnet.set_masks(random_masks(cfg.module_shapes, cfg.sparsity, cfg.toy_mask_seed))
        srnet.train_weights_with_fixed_masks()


@pytest.fixture
def random_method():
    assert "toy_random" not in PRUNING_METHODS
    assert issubclass(RandomPruning.layer_class, MaskedLayer)
    register_pruning_method(RandomPruning)
    yield RandomPruning
    unregister_pruning_method("toy_random")
    assert "toy_random" not in PRUNING_METHODS


def test_a_method_registered_in_a_test_runs_through_the_script(random_method, pretrained, data_dir, tmp_path):
    out = tmp_path / "random"
    args = mnli_run_args(pretrained, data_dir, out, train=64, eval=32, ood=60, batch=16)
    main([*args, "--pruning", "toy_random", "--sparsity", "0.3", "--toy_mask_seed", "7", "--num_train_epochs", "1"])

    results = json.loads((out / "all_results.json").read_text())
    config = json.loads((out / "srnet_config.json").read_text())
    assert config["pruning_method"] == "toy_random" and config["toy_mask_seed"] == 7
    n = sum(math.prod(shape) for shape in config["module_shapes"].values())
    pruned = sum(math.floor(0.3 * math.prod(shape)) for shape in config["module_shapes"].values())
    assert results["sparsity"] == pytest.approx(pruned / n) and results["sparsity"] == pytest.approx(0.3, abs=1e-3)
    card = (out / "README.md").read_text()  # the card's settings come from the method's config alone
    assert "| pruning | toy_random |" in card and "| sparsity | 0.3 |" in card and "| toy_mask_seed | 7 |" in card
    assert "the weights trained under them" in card

    base = AutoModelForSequenceClassification.from_pretrained(pretrained, num_labels=3)
    srnet = SRNetModel.from_pretrained(base, out)
    assert isinstance(srnet.method, RandomPruning)
    expected = random_masks(config["module_shapes"], 0.3, 7)
    masks = srnet.binary_masks()
    assert masks.keys() == expected.keys()
    for name, mask in expected.items():
        assert torch.equal(masks[name], mask), name
    original = BertModel.from_pretrained(pretrained)
    for name, layer in srnet.masked_layers().items():  # the run's weights, saved with the masks
        trained = layer.base_layer.weight
        assert torch.all(trained[~masks[name]] == 0), f"{name}: a pruned weight moved in training"
        if name.startswith("bert."):
            start = original.get_submodule(name[len("bert.") :]).weight
            assert not torch.equal(trained[masks[name]], start[masks[name]]), f"{name}: the kept weights trained"
    merged = srnet.merge_and_unload()
    for name, mask in expected.items():
        weight = merged.get_submodule(name).weight
        assert torch.all(weight[~mask] == 0) and torch.all(weight[mask] != 0), name


class PlainLinear(nn.Linear):
    """A layer that masks nothing and does not subclass `MaskedLayer`."""


def test_a_method_whose_layer_is_not_a_masked_layer_is_refused_at_registration():
    class Unmasked(RandomPruning):
        name = "toy_unmasked"
        layer_class = PlainLinear

    with pytest.raises(TypeError) as refusal:
        register_pruning_method(Unmasked)
    message = str(refusal.value)
    assert "Unmasked.layer_class is 'PlainLinear', not a MaskedLayer" in message
    assert "subclass hf_srnets.pruning.MaskedLayer" in message and "\n" not in message  # one line, with the fix
    assert "toy_unmasked" not in PRUNING_METHODS


@pytest.mark.parametrize("family", ["bert", "modernbert", "llama"])
def test_a_method_registered_in_a_test_keeps_the_contract_of_every_method(random_method, family, tmp_path):
    """The contract test of the built-in methods (`test_method_contract.check_method_contract`: save, reload, re-save
    to the same bytes, merged == masked, resume), on the method this file registers."""
    from pruning.test_method_contract import check_method_contract

    check_method_contract("toy_random", "element", family, tmp_path)


def test_a_method_makes_its_layers_at_a_unit_granularity_too():
    """At a unit granularity SRNetModel built UnitMaskedLinear itself, bypassing the method (issue 51): each matrix
    of a unit group now comes from the method's `make_unit_layer`."""
    from hf_srnets.pruning import ThresholdConfig, ThresholdPruning

    made: list[bool] = []

    @dataclass
    class UnitsConfig(ThresholdConfig):
        pass

    class Units(ThresholdPruning):
        name, config_class, aliases = "toy_units", UnitsConfig, {}

        def make_unit_layer(self, base_layer, units, member, owner):
            made.append(owner)
            return super().make_unit_layer(base_layer, units, member, owner)

    register_pruning_method(Units)
    try:
        from conftest import tiny_model

        srnet = SRNetModel(tiny_model("bert"), UnitsConfig(sparsity=0.5, mask_granularity="ffn"))
    finally:
        unregister_pruning_method("toy_units")
    # 2 layers, each FFN unit group spans W_in and W_out; the first of each group owns the scores
    assert made == [True, False, True, False] and len(srnet.masked_layers()) == 4


class ShortPruning(RandomPruning):
    """Planted: prunes 60% of what it is asked for (30% when asked 50%)."""

    name = "toy_short"

    def initialize(self, srnet: MaskedModel) -> None:
        cfg = self.config
        srnet.set_masks(random_masks(cfg.module_shapes, 0.6 * cfg.sparsity, cfg.toy_mask_seed))
        srnet.train_weights_with_fixed_masks()


def test_the_contract_fails_on_a_method_that_prunes_another_amount(tmp_path):
    """Issue 73: the contract checked that something was pruned, not the amount promised."""
    from pruning.test_method_contract import check_method_contract

    register_pruning_method(ShortPruning)
    try:
        with pytest.raises(AssertionError, match=r"asked for 0\.5, pruned 0\.(29|30)\d\d of the masked weights"):
            check_method_contract("toy_short", "element", "bert", tmp_path)
    finally:
        unregister_pruning_method("toy_short")


def test_the_contract_fails_on_a_method_that_masks_half_a_head(tmp_path):
    """Issue 73: a method at `head` granularity whose saved masks keep half of a head's rows."""
    from hf_srnets.pruning import ThresholdConfig, ThresholdPruning
    from pruning.test_method_contract import check_method_contract

    @dataclass
    class HalfHeadConfig(ThresholdConfig):
        pass

    class HalfHead(ThresholdPruning):
        name, config_class, aliases = "toy_half_head", HalfHeadConfig, {}

        def saved_masks(self, srnet):
            masks = dict(super().saved_masks(srnet))
            name = next(n for n in masks if n.endswith("attention.self.query"))
            half = masks[name].clone()
            half[: half.shape[0] // 4] = ~half[: half.shape[0] // 4]  # half of head 0's rows (2 heads of 16 rows)
            masks[name] = half
            return masks

    register_pruning_method(HalfHead)
    try:
        with pytest.raises(AssertionError, match=r"attention\.self\.query: a mask not constant over its units"):
            check_method_contract(
                "toy_half_head", "head", "bert", tmp_path,
                config=lambda: HalfHeadConfig(sparsity=0.5, mask_granularity="head", threshold_update_interval=1),
            )  # fmt: skip
    finally:
        unregister_pruning_method("toy_half_head")
