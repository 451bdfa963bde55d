"""--mask_granularity block|neuron|head: exact unit counts, unit-constant masks, init, STE, IMP, files, refusals."""

from __future__ import annotations

import json
import math
import re

import pytest
import torch
from conftest import tiny_model
from torch.func import functional_call
from transformers import AutoModelForSequenceClassification, BertConfig, DistilBertConfig

from hf_srnets import load_pretrained_model
from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import L0Config, MagnitudeConfig, RandomConfig, ThresholdConfig, unmasked
from hf_srnets.pruning.magnitude import magnitude_prune
from hf_srnets.pruning.threshold import update_thresholds
from hf_srnets.pruning.units import UnitMaskedLinear, aggregated_magnitude, expand_units, unit_layer_groups

HEADS, HEAD_SIZE, FFN, HIDDEN, LAYERS = 4, 8, 64, 32, 2
GRANULARITIES = ("block", "neuron", "head")


def bert4(seed: int = 0, kind: str = "bert") -> torch.nn.Module:
    """A tiny random model with 4 heads of size 8 and 64 FFN units per layer."""
    torch.manual_seed(seed)
    if kind == "distilbert":
        config = DistilBertConfig(vocab_size=100, dim=HIDDEN, n_layers=LAYERS, n_heads=HEADS, hidden_dim=FFN)
    else:
        config = BertConfig(
            hidden_size=HIDDEN,
            num_hidden_layers=LAYERS,
            num_attention_heads=HEADS,
            intermediate_size=FFN,
            vocab_size=100,
        )
    config.num_labels = 3
    return AutoModelForSequenceClassification.from_config(config).eval()


def srnet(granularity: str, kind: str = "bert", **kwargs) -> SRNetModel:
    config = ThresholdConfig(mask_granularity=granularity, block_size=8, **{"sparsity": 0.5, **kwargs})
    return SRNetModel(bert4(kind=kind), config)


def inputs(seed: int = 1) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return {"input_ids": torch.randint(5, 100, (3, 9), generator=generator)}


def pruned_units(model: SRNetModel) -> list[tuple[str, int, int]]:
    """(kind, pruned units, units) of every unit group."""
    groups = unit_layer_groups(model.masked_layers().items())
    return [(units.kind, int((~units.unit_mask()).sum()), units.mask_scores.numel()) for units, _ in groups]


def test_units_per_granularity():
    assert sorted((k, n) for k, _, n in pruned_units(srnet("neuron"))) == sorted(
        [("ffn", FFN)] * LAYERS + [("head", HEADS)] * LAYERS
    )
    assert [(k, n) for k, _, n in pruned_units(srnet("head"))] == [("head", HEADS)] * LAYERS
    # block 8: Q, K, V, AO are 32×32 (16 tiles), W_in 64×32 and W_out 32×64 (32 tiles)
    assert sorted(n for _, _, n in pruned_units(srnet("block"))) == sorted([16] * 4 * LAYERS + [32] * 2 * LAYERS)
    head = srnet("head")
    assert len(head.masked_layers()) == 4 * LAYERS  # Q, K, V, W_AO; the FFN stays dense
    assert not any(re.search(r"layer\.\d+\.(intermediate|output)\.dense$", name) for name in head.masked_layers())
    assert "classifier" not in srnet("neuron").masked_layers()


def test_ffn_masks_ffn_units_only_and_hybrid_is_neuron_by_another_name():
    ffn = srnet("ffn", mask_init="soft")
    assert [(k, n) for k, _, n in pruned_units(ffn)] == [("ffn", FFN)] * LAYERS
    assert sorted(ffn.masked_layers()) == sorted(
        f"bert.encoder.layer.{i}.{part}.dense" for i in range(LAYERS) for part in ("intermediate", "output")
    )  # Q, K, V and W_AO stay dense
    hybrid, neuron = srnet("hybrid", mask_init="soft"), srnet("neuron", mask_init="soft")
    assert sorted(hybrid.masked_layers()) == sorted(neuron.masked_layers())
    assert all(torch.equal(hybrid.binary_masks()[n], m) for n, m in neuron.binary_masks().items())
    for name, mask in ffn.binary_masks().items():  # the same FFN units as the hybrid's (same scores, per layer)
        assert torch.equal(mask, hybrid.binary_masks()[name])


@pytest.mark.parametrize("granularity", GRANULARITIES)
@pytest.mark.parametrize("sparsity", [0.3, 0.5, 0.75])
@pytest.mark.parametrize("init", ["hard", "soft"])
def test_exact_unit_counts_local(granularity, sparsity, init):
    model = srnet(granularity, sparsity=sparsity, mask_init=init)
    for _, pruned, n in pruned_units(model):
        assert pruned == math.floor(sparsity * n)
    update_thresholds(model, sparsity)
    for _, pruned, n in pruned_units(model):
        assert pruned == math.floor(sparsity * n)


@pytest.mark.parametrize("granularity", GRANULARITIES)
def test_exact_unit_counts_global_per_kind_with_ties(granularity):
    model = srnet(granularity, sparsity_scope="global")
    groups = unit_layer_groups(model.masked_layers().items())
    with torch.no_grad():
        for units, _ in groups:
            units.mask_scores.fill_(0.7)  # all tied: the first ⌊s·N⌋ by position, in model order, are pruned
    update_thresholds(model, 0.3)
    for kind in {units.kind for units, _ in groups}:
        flat = torch.cat([units.unit_mask().reshape(-1) for units, _ in groups if units.kind == kind])
        zeros = math.floor(0.3 * flat.numel())
        assert int((~flat).sum()) == zeros
        assert not flat[:zeros].any() and flat[zeros:].all()  # ties pruned first by position


@pytest.mark.parametrize("granularity", GRANULARITIES)
def test_element_masks_are_the_unit_masks_expanded(granularity):
    model = srnet(granularity, mask_init="soft")
    masks = model.binary_masks()
    for units, members in unit_layer_groups(model.masked_layers().items()):
        unit = units.unit_mask()
        for name, layer in members:
            assert torch.equal(masks[name], expand_units(unit.reshape(layer.grid), layer.tile))
    if granularity == "neuron":
        prefix = "bert.encoder.layer.0."
        rows = masks[prefix + "intermediate.dense"].all(dim=1)
        assert torch.equal(rows, masks[prefix + "output.dense"].all(dim=0))  # row j of W_in ~ column j of W_out
        assert torch.equal(masks[prefix + "intermediate.dense"], rows[:, None].expand(FFN, HIDDEN))
        heads = masks[prefix + "attention.self.query"].reshape(HEADS, HEAD_SIZE, HIDDEN)
        assert torch.equal(heads.all(dim=(1, 2)), heads.any(dim=(1, 2)))  # each head all kept or all pruned
        out_cols = masks[prefix + "attention.output.dense"].reshape(HIDDEN, HEADS, HEAD_SIZE).all(dim=(0, 2))
        assert torch.equal(out_cols, heads.all(dim=(1, 2)))


def mean_abs_per_unit(model: torch.nn.Module, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean |W| of each FFN unit and each head of `layer`, by explicit indexing of the plain model."""
    block = model.bert.encoder.layer[layer]
    w_in, w_out = block.intermediate.dense.weight.abs(), block.output.dense.weight.abs()
    ffn = torch.stack([(w_in[j].sum() + w_out[:, j].sum()) / (2 * HIDDEN) for j in range(FFN)])
    att = block.attention
    heads = []
    for h in range(HEADS):
        rows = slice(h * HEAD_SIZE, (h + 1) * HEAD_SIZE)
        total = sum(lin.weight.abs()[rows].sum() for lin in (att.self.query, att.self.key, att.self.value))
        total = total + att.output.dense.weight.abs()[:, rows].sum()
        heads.append(total / (4 * HEAD_SIZE * HIDDEN))
    return ffn, torch.stack(heads)


def test_soft_and_hard_init_follow_the_rule_with_mean_magnitude():
    plain = bert4()
    soft = srnet("neuron", mask_init="soft", sparsity=0.25)
    hard = srnet("neuron", mask_init="hard", sparsity=0.25, alpha=2.0, init_threshold=0.01)
    for layer in range(LAYERS):
        ffn, heads = mean_abs_per_unit(plain, layer)
        prefix = f"bert.encoder.layer.{layer}."
        for expected, owner in ((ffn, "intermediate.dense"), (heads, "attention.self.query")):
            units = soft.masked_layers()[prefix + owner].units
            torch.testing.assert_close(units.mask_scores, expected)  # Eq. 2: m̂_u = a_u
            zeros = math.floor(0.25 * expected.numel())
            assert torch.equal(units.unit_mask(), expected >= expected.sort().values[zeros])  # φ exact (no ties)
            hard_scores = hard.masked_layers()[prefix + owner].units.mask_scores
            smallest = expected.argsort()[:zeros]
            want = torch.full_like(expected, 2.0 * 0.01)
            want[smallest] = 0.0
            assert torch.equal(hard_scores, want)  # Eq. 1: 0 for the ⌊s·n⌋ smallest a_u, α·φ elsewhere


def test_aggregated_magnitude_of_blocks_is_the_tile_mean():
    model = srnet("block")
    name = "bert.encoder.layer.1.intermediate.dense"
    layer = model.masked_layers()[name]
    weight = layer.base_layer.weight.abs()
    expected = torch.tensor([[weight[i : i + 8, j : j + 8].mean() for j in range(0, 32, 8)] for i in range(0, 64, 8)])
    torch.testing.assert_close(aggregated_magnitude(layer.units, [(name, layer)]), expected)


@pytest.mark.parametrize("granularity", GRANULARITIES)
def test_ste_gradient_equals_autograd_through_an_explicit_unit_mask(granularity):
    plain = bert4()
    model = srnet(granularity, mask_init="soft")
    model(**inputs()).logits.square().sum().backward()
    weights = dict(plain.named_parameters())
    groups = unit_layer_groups(model.masked_layers().items())
    unit_vars = [units.unit_mask().float().requires_grad_(True) for units, _ in groups]
    params = dict(weights)
    for (_, members), m_u in zip(groups, unit_vars):
        for name, layer in members:
            element = expand_units(m_u.reshape(layer.grid), layer.tile)
            params[name + ".weight"] = weights[name + ".weight"] * element  # W_eff = m(m_u) ⊙ W
    functional_call(plain, params, kwargs=inputs()).logits.square().sum().backward()
    for (units, _), m_u in zip(groups, unit_vars):
        torch.testing.assert_close(units.mask_scores.grad, m_u.grad, rtol=1e-4, atol=1e-6)
        assert m_u.grad.abs().sum() > 0


@pytest.mark.parametrize("granularity", GRANULARITIES)
def test_imp_rounds_hit_exact_unit_counts_and_keep_pruned_units(granularity):
    config = MagnitudeConfig(sparsity=0.75, imp_prune_ratio=0.25, mask_granularity=granularity, block_size=8)
    model = SRNetModel(bert4(), config)
    before = None
    for round_ in (1, 2, 3):
        with torch.no_grad():  # training between rounds changes the magnitudes
            for layer in model.masked_layers().values():
                layer.base_layer.weight.mul_(torch.rand_like(layer.base_layer.weight) + 0.5)
        magnitude_prune(model, 0.25 * round_)
        for _, pruned, n in pruned_units(model):
            assert pruned == math.floor(0.25 * round_ * n)
        masks = model.binary_masks()
        for name, mask in masks.items():
            weight = model.masked_layers()[name].base_layer.weight
            assert torch.equal(weight[~mask], torch.zeros_like(weight[~mask]))
            if before is not None:
                assert not (mask & ~before[name]).any(), name  # pruned stays pruned
        before = masks


@pytest.mark.parametrize("granularity", GRANULARITIES)
@pytest.mark.parametrize("kind", ["bert", "distilbert"])
def test_save_load_round_trip_and_merge(tmp_path, granularity, kind):
    model = srnet(granularity, kind=kind, mask_init="soft")
    with torch.no_grad():
        for score in model.masked_layers_scores():
            score.add_(torch.rand_like(score))
    update_thresholds(model, 0.5)
    model.record_fingerprint()
    model.save_pretrained(tmp_path)
    assert len(model.masked_layers_scores()) < len(model.masked_layers()) or granularity == "block"
    loaded = SRNetModel.from_pretrained(bert4(kind=kind), tmp_path)
    assert loaded.srnet_config.mask_granularity == granularity
    masks, loaded_masks = model.binary_masks(), loaded.binary_masks()
    assert masks.keys() == loaded_masks.keys()
    assert all(torch.equal(masks[n], loaded_masks[n]) for n in masks)
    with torch.no_grad():
        logits = model(**inputs()).logits
        assert torch.equal(loaded(**inputs()).logits, logits)
        merged = loaded.merge_and_unload()
        torch.testing.assert_close(merged(**inputs()).logits, logits, rtol=0, atol=1e-6)
    for name, mask in masks.items():
        assert not merged.get_submodule(name).weight[~mask].any()


def test_resume_state_has_each_score_once_and_restores_it():
    model = srnet("neuron", mask_init="soft")
    state = model.trainable_state_dict()
    scores = [key for key in state if key.endswith("mask_scores")]
    assert len(scores) == 2 * LAYERS and len({id(p) for p in model.masked_layers_scores()}) == 2 * LAYERS
    other = srnet("neuron", mask_init="hard")
    other.base_model.load_state_dict(state, strict=False)
    assert all(torch.equal(a, b) for a, b in zip(model.binary_masks().values(), other.binary_masks().values()))


def test_fixed_masks_train_weights_and_zero_pruned_ones():
    model = srnet("head", mask_init="soft")
    masks = model.binary_masks()
    model.train_weights_with_fixed_masks()
    assert not any(p.requires_grad for p in model.masked_layers_scores())
    with torch.no_grad():
        for layer in model.masked_layers().values():
            layer.base_layer.weight.add_(1.0)
    model.zero_pruned_weights()
    for name, layer in model.masked_layers().items():
        assert not layer.base_layer.weight[~masks[name]].any() and layer.base_layer.weight[masks[name]].all()


def test_set_masks_refuses_masks_not_constant_over_units():
    model = srnet("neuron")
    masks = model.binary_masks()
    name = "bert.encoder.layer.0.intermediate.dense"
    broken = dict(masks)
    broken[name] = masks[name].clone()
    broken[name][0, 0] = ~broken[name][0, 0]
    with pytest.raises(ValueError, match=f"{name}.*not constant over its 1×32 units"):
        model.set_masks(broken)
    disagree = dict(masks)
    disagree["bert.encoder.layer.0.output.dense"] = ~masks["bert.encoder.layer.0.output.dense"]
    with pytest.raises(ValueError, match=r"output\.dense prunes other units than the mask of .*intermediate\.dense"):
        model.set_masks(disagree)


def test_bad_block_size_names_the_module_shape_and_a_fitting_size():
    with pytest.raises(
        ValueError, match=r"--block_size 24 does not tile .*query, whose weight is 32×32.*--block_size 16 "
    ):
        SRNetModel(bert4(), ThresholdConfig(mask_granularity="block", block_size=24))
    with pytest.raises(ValueError, match="block_size must be a positive integer"):
        ThresholdConfig(mask_granularity="block", block_size=0)
    with pytest.raises(ValueError, match="mask_granularity must be one of"):
        ThresholdConfig(mask_granularity="row")


def test_random_refuses_structured_granularities_and_names_the_methods_that_take_them():
    with pytest.raises(
        ValueError,
        match=r"--mask_granularity neuron is not supported by --pruning random .*l0 or .*magnitude or .*threshold",
    ):
        RandomConfig(mask_granularity="neuron")
    assert RandomConfig().mask_granularity == L0Config().mask_granularity == "element"


@pytest.mark.parametrize("granularity", ["neuron", "head"])
def test_deberta_refuses_head_units_but_takes_blocks(granularity):
    with pytest.raises(ValueError, match=r"--mask_granularity neuron/head needs per-head attention.*element or block"):
        SRNetModel(tiny_model("deberta-v2"), ThresholdConfig(mask_granularity=granularity))
    blocks = SRNetModel(tiny_model("deberta-v2"), ThresholdConfig(mask_granularity="block", block_size=16))
    assert all(isinstance(layer, UnitMaskedLinear) for layer in blocks.masked_layers().values())


def test_partial_targets_of_a_unit_are_refused():
    with pytest.raises(ValueError, match=r"a unit spans .*is not among the target modules"):
        SRNetModel(bert4(), ThresholdConfig(mask_granularity="neuron", target_modules=["intermediate.dense"]))


def test_element_granularity_is_unchanged():
    default = SRNetModel(bert4(), ThresholdConfig(sparsity=0.5))
    explicit = SRNetModel(bert4(), ThresholdConfig(sparsity=0.5, mask_granularity="element"))
    assert "classifier" in default.masked_layers()
    assert all(torch.equal(a, b) for a, b in zip(default.binary_masks().values(), explicit.binary_masks().values()))
    assert not any(isinstance(m, UnitMaskedLinear) for m in default.masked_layers().values())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_unit_scores_stay_float32_and_masks_unchanged_under_a_cast(dtype):
    model = srnet("neuron", mask_init="soft")
    masks = model.binary_masks()
    model.to(dtype)
    assert all(p.dtype == torch.float32 for p in model.masked_layers_scores())
    assert all(layer.base_layer.weight.dtype == dtype for layer in model.masked_layers().values())
    cast = model.binary_masks()
    assert all(torch.equal(masks[n], cast[n]) for n in masks)
    model(**inputs()).logits.float().sum().backward()
    assert all(p.grad is not None and p.grad.dtype == torch.float32 for p in model.masked_layers_scores())


@pytest.mark.parametrize("kind", ["bert", "distilbert"])
def test_a_global_budget_may_take_whole_blocks_and_compact_export_keeps_the_logits(tmp_path, kind):
    # global scope: 8 heads and 128 FFN units in two pools. Layer 0's heads and layer 1's FFN units score lowest,
    # so s = 0.5 prunes exactly those 4 heads and 64 units: layer 0 loses its attention, layer 1 its FFN.
    dense = bert4(kind=kind)
    with torch.no_grad():
        for p in dense.parameters():
            p.mul_(15.0)  # std 0.3 instead of 0.02, so a head or unit visibly moves the logits
    config = ThresholdConfig(mask_granularity="hybrid", sparsity=0.5, sparsity_scope="global", mask_init="soft")
    model = SRNetModel(dense, config)
    with torch.no_grad():
        for units, members in unit_layer_groups(model.masked_layers().items()):
            layer = int(re.search(r"layer\.(\d+)\.", members[0][0]).group(1))
            low = (units.kind == "head") == (layer == 0)
            units.mask_scores.copy_(torch.rand_like(units.mask_scores) + (0.0 if low else 2.0))
    update_thresholds(model, 0.5)
    with torch.no_grad():
        masked = model(**inputs()).logits
        with unmasked(model):
            assert (model(**inputs()).logits - masked).abs().max() > 1e-2  # the pruned blocks mattered
        compact = model.merge_and_unload(compact=True)
        torch.testing.assert_close(compact(**inputs()).logits, masked, rtol=0, atol=1e-5)
    report = model.compact_report
    assert report["heads_per_layer"] == [0, HEADS] and report["ffn_units_per_layer"] == [FFN, 0]
    assert report["attention_removed"] == [0] and report["ffn_removed"] == [1]
    compact.save_pretrained(tmp_path)
    with torch.no_grad():
        reloaded = load_pretrained_model(str(tmp_path))(**inputs()).logits
    torch.testing.assert_close(reloaded, masked, rtol=0, atol=1e-5)


@pytest.mark.parametrize("kind", ["bert", "distilbert"])
def test_local_ffn_masks_export_a_stock_transformers_checkpoint(tmp_path, kind):
    # local scope prunes ⌊0.5·64⌋ = 32 units in every layer and no head: one FFN width, a stock config
    dense = bert4(kind=kind)
    with torch.no_grad():
        for p in dense.parameters():
            p.mul_(15.0)
    model = SRNetModel(dense, ThresholdConfig(mask_granularity="ffn", sparsity=0.5, mask_init="soft"))
    with torch.no_grad():
        masked = model(**inputs()).logits
        compact = model.merge_and_unload(compact=True)
    assert model.compact_report["stock_checkpoint"] and model.compact_report["ffn_units_per_layer"] == [32, 32]
    compact.save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert not [key for key in saved if key.startswith("srnet_")]
    assert saved["intermediate_size" if kind == "bert" else "hidden_dim"] == 32
    stock = AutoModelForSequenceClassification.from_pretrained(tmp_path).eval()  # transformers alone
    with torch.no_grad():
        torch.testing.assert_close(stock(**inputs()).logits, masked, rtol=0, atol=1e-5)
