"""`--pruning l0` at a unit granularity (`hf_srnets.pruning.l0.units`): one hard-concrete gate a head or FFN unit,
drawn once a forward pass for every matrix the unit spans, R(m) as the expected fraction of weights kept, and the
ticket ranked by log α per kind of unit. The tiny BERT (conftest.TINY): hidden 32, 2 layers of 2 heads (head size
16) and 64 FFN units, so a layer's heads cover 4·32·32 = 4,096 weights (2,048 a head) and its FFN units
2·32·64 = 4,096 (64 a unit)."""

from __future__ import annotations

import math

import pytest
import torch
from conftest import tiny_model

from hf_srnets.errors import InputError
from hf_srnets.masking import SRNetModel
from hf_srnets.pruning.l0 import L0Config, l0_penalty, read_search_dir
from hf_srnets.pruning.units import unit_layer_groups

BETA, GAMMA, ZETA = 2 / 3, -0.1, 1.1
ATTENTION = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense")


def structured(granularity: str = "hybrid", **options) -> SRNetModel:
    return SRNetModel(tiny_model("bert"), L0Config(mask_granularity=granularity, **options))


def units_of(srnet: SRNetModel, kind: str) -> list:
    return [units for units, _ in unit_layer_groups(srnet.masked_layers().items()) if units.kind == kind]


def log_alpha_for(p_nonzero: float) -> float:
    """Eq. 4 inverted: P(m ≠ 0) = σ(log α − β·log(−γ/ζ)) = p."""
    return math.log(p_nonzero / (1 - p_nonzero)) + BETA * math.log(-GAMMA / ZETA)


def test_a_training_forward_draws_each_units_gate_once_for_all_its_matrices():
    srnet = structured("head", l0_init_keep=0.5)
    srnet.train()
    seen: list[tuple[str, torch.Tensor]] = []
    layers = srnet.masked_layers()
    for name in ("bert.encoder.layer.0." + part for part in ATTENTION):
        layers[name].register_forward_hook(lambda layer, *_, n=name: seen.append((n, layer.units._draw)))
    batch = {"input_ids": torch.tensor([[2, 7, 9, 11, 3]]), "attention_mask": torch.ones(1, 5, dtype=torch.long)}
    draws = []
    for _ in range(3):
        seen.clear()
        srnet(**batch)
        assert len(seen) == 4 and all(draw is seen[0][1] for _, draw in seen), "one draw for Q, K, V and W_AO"
        draws.append(seen[0][1].detach().clone())
    assert not all(torch.equal(draws[0], d) for d in draws[1:]), "a new draw each forward pass"


def test_a_unit_gated_off_leaves_every_matrix_it_spans_in_training_and_in_evaluation():
    srnet = structured("hybrid")
    heads, ffn = units_of(srnet, "head")[0], units_of(srnet, "ffn")[0]  # layer 0
    with torch.no_grad():
        heads.log_alpha.copy_(torch.tensor([50.0, -50.0]))  # head 1 off, head 0 on
        ffn.log_alpha.fill_(50.0)
        ffn.log_alpha[5] = -50.0  # FFN unit 5 off
    layers = srnet.masked_layers()
    prefix = "bert.encoder.layer.0."
    for training in (True, False):
        for part in ATTENTION[:3]:
            gate = layers[prefix + part].element_gate(training)
            assert gate[16:].eq(0).all() and gate[:16].eq(1).all(), part  # head 1 = rows 16..31
        gate = layers[prefix + ATTENTION[3]].element_gate(training)
        assert gate[:, 16:].eq(0).all() and gate[:, :16].eq(1).all()  # its columns of W_AO
        w_in = layers[prefix + "intermediate.dense"].element_gate(training)
        w_out = layers[prefix + "output.dense"].element_gate(training)
        assert w_in[5].eq(0).all() and w_out[:, 5].eq(0).all() and w_in.sum() == 63 * 32 and w_out.sum() == 63 * 32
    merged = layers[prefix + "attention.self.query"].merged_weight()
    assert merged[16:].eq(0).all() and torch.equal(merged[:16], layers[prefix + "attention.self.query"].weight[:16])


def test_the_penalty_is_the_expected_fraction_of_weights_kept():
    """Heads at P(m ≠ 0) = 0.2, FFN units at 0.9: each layer's heads and FFN units cover 4,096 weights each, so
    R(m) = (0.2·4096 + 0.9·4096) / 8192 = 0.55 (a mean over units would give (0.2·4 + 0.9·128) / 132 = 0.879)."""
    srnet = structured("hybrid")
    with torch.no_grad():
        for units in units_of(srnet, "head"):
            units.log_alpha.fill_(log_alpha_for(0.2))
        for units in units_of(srnet, "ffn"):
            units.log_alpha.fill_(log_alpha_for(0.9))
    layers = list(srnet.masked_layers().values())
    assert l0_penalty(layers, BETA).item() == pytest.approx(0.55, rel=1e-5)
    assert srnet.method.log_metrics(srnet)["l0_expected_sparsity"] == pytest.approx(0.45, rel=1e-5)


def test_the_ticket_prunes_the_units_with_the_smallest_log_alpha_per_kind():
    """--sparsity 0.5, global: 2 of the 4 heads (log α 3, -1 | 0.5, 2: layer 0's head 1 and layer 1's head 0) and 64
    of the 128 FFN units (all of layer 0's, at -1 against layer 1's +1)."""
    srnet = structured("hybrid", sparsity=0.5)
    heads, ffn = units_of(srnet, "head"), units_of(srnet, "ffn")
    with torch.no_grad():
        heads[0].log_alpha.copy_(torch.tensor([3.0, -1.0]))
        heads[1].log_alpha.copy_(torch.tensor([0.5, 2.0]))
        ffn[0].log_alpha.fill_(-1.0)
        ffn[1].log_alpha.fill_(1.0)
    ticket = srnet.method.saved_masks(srnet)
    for layer, off in ((0, slice(16, 32)), (1, slice(0, 16))):
        prefix = f"bert.encoder.layer.{layer}."
        for part in ATTENTION[:3]:
            mask = ticket[prefix + part]
            assert not mask[off].any() and int(mask.sum()) == 16 * 32, part
        assert not ticket[prefix + ATTENTION[3]][:, off].any()
    assert not ticket["bert.encoder.layer.0.intermediate.dense"].any()
    assert not ticket["bert.encoder.layer.0.output.dense"].any()
    assert ticket["bert.encoder.layer.1.intermediate.dense"].all() and ticket["bert.encoder.layer.1.output.dense"].all()


def test_a_structured_search_is_no_source_of_element_tickets(tmp_path):
    srnet = structured("head")
    srnet.save_pretrained(tmp_path / "search")
    with pytest.raises(InputError, match=r"l0 search at --mask_granularity head: its ticket .* element searches only"):
        read_search_dir(tmp_path / "search")


def test_gates_and_weights_train_together_and_keep_the_method_contract(tmp_path):
    """--train_weights (CoFi's joint training) with the Lagrangian at a unit granularity: every weight trains, and
    the contract holds (its reloaded model gives the trained model's logits only if the saved masks carry the
    trained weights)."""
    from pruning.test_method_contract import check_method_contract

    def config() -> L0Config:
        options = {"l0_constraint": "lagrangian", "train_weights": True, "weight_learning_rate": 1e-3}
        return L0Config(mask_granularity="hybrid", sparsity=0.5, **options)

    check_method_contract("l0", "hybrid", "bert", tmp_path, config=config)
    srnet = SRNetModel(tiny_model("bert"), config())
    weights = [p for n, p in srnet.base_model.named_parameters() if n.endswith("base_layer.weight")]
    assert weights and all(p.requires_grad for p in weights)
    assert srnet.srnet_config.trains_weights and srnet.srnet_config.weights_learning_rate == 1e-3
    assert "trained with them (CoFi)" in srnet.method.search_description(srnet.srnet_config, None)
