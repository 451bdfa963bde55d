"""The Robust Tickets recipes (`recipes/robust_tickets/`) parse through the project's parser and hold Table 5 and 6."""

from __future__ import annotations

from pathlib import Path

import pytest

from hf_srnets.arguments.glue_sparse_arguments import parse_args
from hf_srnets.data import TASKS

RECIPES = Path(__file__).resolve().parents[1] / "recipes" / "robust_tickets"

# Table 6 of Zheng et al. 2022 (appendix B.3), transcribed from the paper: η, γ, λ, ε₀, s, wd.
TABLE_6 = {
    "sst2": (0.03, 0.1, 0.5, 0.05, 5, 1e-6),
    "ag_news": (0.03, 0.05, 0.5, 0.05, 5, 1e-6),
    "imdb": (0.03, 0.1, 0.5, 0.05, 5, 1e-6),
    "qqp": (0.04, 0.05, 0.1, 0.05, 3, 1e-6),
    "qnli": (0.04, 0.05, 0.1, 0.05, 3, 1e-6),
    "mnli": (0.2, 0.1, 0.1, 0.05, 2, 1e-6),
}
# The authors' scripts: 256 tokens for the long-text tasks, 128 for GLUE.
MAX_SEQ_LENGTH = {"sst2": 128, "ag_news": 256, "imdb": 256, "qqp": 128, "qnli": 128, "mnli": 128}


def parse(name: str, tmp_path: Path):
    return parse_args([str(RECIPES / name), "--model_name_or_path", "x", "--output_dir", str(tmp_path / "out")])


def test_every_task_has_both_recipes_and_nothing_else():
    names = {p.name for p in RECIPES.glob("*.yaml")}
    assert names == {f"{t}.yaml" for t in TABLE_6} | {f"{t}_finetune.yaml" for t in TABLE_6}
    assert set(TABLE_6) <= set(TASKS), "every recipe's task is a registered task"


@pytest.mark.parametrize("task", sorted(TABLE_6))
def test_search_recipe_is_table_6(task, tmp_path):
    eta, gamma, lam, eps0, steps, wd = TABLE_6[task]
    run = parse(f"{task}.yaml", tmp_path)
    assert run.data.task == task
    assert run.model.pruning == "l0" and run.pruning is not None and run.pruning.pruning_method == "l0"
    assert run.pruning.l0_lambda == pytest.approx(lam)
    args = run.training
    assert args.mask_learning_rate == pytest.approx(gamma)
    assert args.mask_weight_decay == pytest.approx(wd)
    assert args.step_objective == "freelb"
    freelb = run.objective
    assert freelb.adv_lr == pytest.approx(eta) and args.step_objective_options["adv_lr"] == pytest.approx(eta)
    assert freelb.adv_init_mag == pytest.approx(eps0)
    assert freelb.adv_steps == steps
    assert freelb.adv_max_norm == 0.0  # "we do not constrain the bound of perturbations"
    assert args.num_train_epochs == 20  # §4.1
    assert args.per_device_train_batch_size == 32
    assert run.data.max_seq_length == MAX_SEQ_LENGTH[task]


@pytest.mark.parametrize("task", sorted(TABLE_6))
def test_finetune_recipe_is_table_5(task, tmp_path):
    run = parse(f"{task}_finetune.yaml", tmp_path)
    args = run.training
    assert run.data.task == task and run.model.pruning == "none" and args.step_objective == "none"
    assert args.learning_rate == pytest.approx(2e-5)
    assert args.weight_decay == pytest.approx(0.01)
    assert args.per_device_train_batch_size == 32
    assert args.num_train_epochs == 3
    assert args.warmup_steps == pytest.approx(0.1)  # a ratio: transformers 5 has no warmup_ratio
    assert args.max_grad_norm == 1.0
    assert run.data.max_seq_length == MAX_SEQ_LENGTH[task]


def test_flags_after_a_recipe_override_it(tmp_path):
    run = parse_args(
        [str(RECIPES / "sst2.yaml"), "--model_name_or_path", "x", "--output_dir", str(tmp_path), "--adv_steps", "1"]
    )
    assert run.objective.adv_steps == 1 and run.objective.adv_lr == pytest.approx(0.03)
    assert run.training.step_objective_settings()[1]["adv_steps"] == 1


def test_readme_table_matches_table_6():
    text = (RECIPES / "README.md").read_text()
    for task, (eta, gamma, lam, eps0, steps, _) in TABLE_6.items():
        row = f"| {task} | {eta:g} | {gamma:g} | {lam:g} | {eps0:g} | {steps} | 1e-6 | {MAX_SEQ_LENGTH[task]} |"
        assert row in text
