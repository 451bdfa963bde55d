"""`--l0_constraint lagrangian` (`hf_srnets.pruning.l0.constraint`): L_c = λ_1·(ŝ − t) + λ_2·(ŝ − t)² (CoFi, Xia et
al. 2022) with ŝ the gates' expected sparsity and t the target ramped over `l0_target_warmup_fraction` of the run,
minimised over log α and maximised over λ_1, λ_2; the multipliers resume from a checkpoint with the search."""

from __future__ import annotations

import math

import pytest
import torch
from conftest import tiny_model
from training.helpers import cpu_args, synthetic_nli, tiny_tokenizer

from hf_srnets.arguments import parse_args, validate_args
from hf_srnets.errors import InputError
from hf_srnets.masking import SRNetModel
from hf_srnets.pruning.l0 import L0Config, l0_penalty
from hf_srnets.pruning.l0.constraint import target_sparsity_at
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer

BETA, GAMMA, ZETA = 2 / 3, -0.1, 1.1


def lagrangian_model(granularity: str = "hybrid", **options) -> SRNetModel:
    config = L0Config(mask_granularity=granularity, l0_constraint="lagrangian", sparsity=0.5, **options)
    return SRNetModel(tiny_model("bert"), config)


def set_expected_density(srnet: SRNetModel, density: float) -> None:
    """Every gate at P(m ≠ 0) = density (Eq. 4 inverted), so R(m) = density and ŝ = 1 − density."""
    with torch.no_grad():
        for parameter in srnet.masked_layers_scores():
            parameter.fill_(math.log(density / (1 - density)) + BETA * math.log(-GAMMA / ZETA))


def test_the_target_rises_linearly_to_the_sparsity_over_the_warmup():
    assert [target_sparsity_at(k, 100, 0.5, 0.1) for k in (0, 5, 10, 50)] == pytest.approx([0, 0.25, 0.5, 0.5])
    assert target_sparsity_at(0, 100, 0.5, 0.0) == 0.5


def test_the_term_is_computed_as_the_formula_by_hand():
    """λ_1 = 0.3, λ_2 = 0.5, ŝ = 1 − 0.6 = 0.4; step 5 of 100 with f = 0.1: t = 0.5·5/10 = 0.25; gap 0.15:
    L_c = 0.3·0.15 + 0.5·0.15² = 0.05625."""
    srnet = lagrangian_model()
    set_expected_density(srnet, 0.6)
    multipliers = srnet.method.multipliers(srnet)
    with torch.no_grad():
        multipliers.lambda_1.fill_(0.3)
        multipliers.lambda_2.fill_(0.5)
    term = srnet.method.regularization(srnet, step=5, max_steps=100)
    assert term.item() == pytest.approx(0.05625, rel=1e-5)
    assert srnet.method.log_metrics(srnet)["l0_target_sparsity"] == pytest.approx(0.25)


def test_the_multipliers_ascend_while_the_gates_descend():
    """∂L_c/∂λ_1 = ŝ − t and ∂L_c/∂λ_2 = (ŝ − t)²: the multipliers' gradients are their negatives (a descent step
    is an ascent step); with ŝ below t and λ_1 = -1, λ_2 = 0, ∂L_c/∂ŝ = -1 < 0, so every log α's gradient is
    positive (lowering log α raises ŝ)."""
    srnet = lagrangian_model()
    set_expected_density(srnet, 0.9)  # ŝ = 0.1, t = 0.5 after the warm-up: gap -0.4
    multipliers = srnet.method.multipliers(srnet)
    with torch.no_grad():
        multipliers.lambda_1.fill_(-1.0)
    srnet.method.regularization(srnet, step=50, max_steps=100).backward()
    assert multipliers.lambda_1.grad.item() == pytest.approx(0.4, rel=1e-5)
    assert multipliers.lambda_2.grad.item() == pytest.approx(-0.16, rel=1e-5)
    assert all(bool((scores.grad > 0).all()) for scores in srnet.masked_layers_scores())


def test_a_short_search_moves_the_expected_sparsity_towards_the_target(tmp_path):
    """From ŝ = 0.04 (every gate at 0.9), 60 steps with t rising to 0.5 over the first 20%: the multipliers turn
    λ_1 < 0 < λ_2 and ŝ passes 0.3; the penalty λ·R(m) at λ = 0 leaves ŝ where it was."""
    results = {}
    for constraint in ("lagrangian", "penalty"):
        options = {"l0_target_warmup_fraction": 0.2} if constraint == "lagrangian" else {"l0_lambda": 0.0}
        srnet = SRNetModel(
            tiny_model("bert"), L0Config(mask_granularity="hybrid", l0_constraint=constraint, sparsity=0.5, **options)
        )
        tokenizer = tiny_tokenizer(tmp_path)
        args = cpu_args(tmp_path / constraint, max_steps=60, mask_learning_rate=0.1, per_device_train_batch_size=8)
        SRNetTrainer(
            model=srnet, args=args, train_dataset=synthetic_nli(tokenizer, n=64),
            data_collator=SRNetDataCollator(tokenizer),
        ).train()  # fmt: skip
        results[constraint] = 1 - l0_penalty(list(srnet.masked_layers().values()), BETA).item()
        if constraint == "lagrangian":
            multipliers = srnet.method.multipliers(srnet)
            assert multipliers.lambda_1.item() < 0 < multipliers.lambda_2.item()
    assert results["lagrangian"] > 0.3 and results["penalty"] < 0.1, results


def test_a_lagrangian_search_keeps_the_method_contract_its_multipliers_resumed(tmp_path):
    """Save, reload, merge, compact and resume from a checkpoint (the multipliers and their optimiser state with
    it: a resumed run that restarted them at 0 would end with other gates)."""
    from pruning.test_method_contract import check_method_contract

    check_method_contract(
        "l0", "hybrid", "bert", tmp_path,
        config=lambda: L0Config(mask_granularity="hybrid", l0_constraint="lagrangian", sparsity=0.5),
    )  # fmt: skip


def test_the_command_line_refuses_the_penaltys_options_with_the_lagrangian():
    base = ["--model_name_or_path", "m", "--output_dir", "o", "--pruning", "l0", "--l0_constraint", "lagrangian"]
    validate_args(parse_args([*base, "--l0_target_warmup_fraction", "0.2"]))
    with pytest.raises(InputError, match=r"--l0_lambda would do nothing with --pruning l0: .* lagrangian learns"):
        validate_args(parse_args([*base, "--l0_lambda", "0.1"]))


def test_the_multipliers_own_learning_rate_gives_them_their_own_group(tmp_path):
    """`--l0_lagrangian_learning_rate 0.5`: λ_1, λ_2 in a group of their own at 0.5 (no weight decay), log α at the
    mask rate. Adam's first step moves each parameter by its rate times the sign of its gradient (m̂/√v̂ = ±1):
    with t = 0.5 from step 0 and ŝ ≈ 0.04 the ascent lowers λ_1 by exactly 0.5; no log α moves more than 0.01."""
    srnet = lagrangian_model(l0_lagrangian_learning_rate=0.5, l0_target_warmup_fraction=0.0)
    tokenizer = tiny_tokenizer(tmp_path)
    args = cpu_args(
        tmp_path / "run", max_steps=1, mask_learning_rate=0.01, per_device_train_batch_size=8, weight_decay=0.1,
        lr_scheduler_type="constant",
    )  # fmt: skip
    trainer = SRNetTrainer(
        model=srnet, args=args, train_dataset=synthetic_nli(tokenizer, n=8), data_collator=SRNetDataCollator(tokenizer)
    )
    groups = trainer.create_optimizer().param_groups
    multipliers = srnet.method.multipliers(srnet)
    own = [group for group in groups if any(p is multipliers.lambda_1 for p in group["params"])]
    assert len(own) == 1 and own[0]["lr"] == 0.5 and own[0]["weight_decay"] == 0.0
    assert {id(p) for p in own[0]["params"]} == {id(multipliers.lambda_1), id(multipliers.lambda_2)}
    assert groups[0]["lr"] == 0.01 and not any(p is multipliers.lambda_1 for p in groups[0]["params"])
    before = [scores.detach().clone() for scores in srnet.masked_layers_scores()]
    trainer.train()
    assert multipliers.lambda_1.item() == pytest.approx(-0.5, rel=1e-3)
    moved = max((after - old).abs().max().item() for after, old in zip(srnet.masked_layers_scores(), before))
    assert 0 < moved <= 0.01 + 1e-6


def test_the_multipliers_rate_is_checked_and_belongs_to_the_lagrangian():
    base = ["--model_name_or_path", "m", "--output_dir", "o", "--pruning", "l0"]
    validate_args(parse_args([*base, "--l0_constraint", "lagrangian", "--l0_lagrangian_learning_rate", "0.5"]))
    with pytest.raises(InputError, match=r"l0_lagrangian_learning_rate must be > 0, got 0.0: e.g. .* 0.5"):
        L0Config(l0_constraint="lagrangian", l0_lagrangian_learning_rate=0.0)
    with pytest.raises(InputError, match=r"--l0_lagrangian_learning_rate would do nothing .* lagrangian"):
        validate_args(parse_args([*base, "--l0_lagrangian_learning_rate", "0.5"]))
