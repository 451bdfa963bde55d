"""RMC's loss variance (§5.1), difficulty degree (Eq. 1), α per task (§6.1), the easy/hard split (§4.1) and the IMP
schedule of the stage-1 models, on hand-computed numbers."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from hf_srnets.arguments import parse_args, validate_args
from hf_srnets.difficulty import DEFAULT_SPARSITIES, alpha_for, difficulty_degree, hard_split, loss_variance
from hf_srnets.experiments.sample_difficulty import imp_run_argv, imp_schedule
from hf_srnets.pruning.magnitude.rounds import imp_rounds


def test_loss_variance_is_the_population_variance_of_each_example():
    # rows: mean 2, deviations ±1 -> 1; constant -> 0; mean 2, ±2 -> 4; (1, 2, 6): mean 3, (4 + 1 + 9)/3
    losses = [[1.0, 3.0, 1.0, 3.0], [2.0, 2.0, 2.0, 2.0], [0.0, 4.0, 0.0, 4.0]]
    assert loss_variance(losses) == pytest.approx([1.0, 0.0, 4.0])
    assert loss_variance([[1.0, 2.0, 6.0]]) == pytest.approx([14.0 / 3.0])  # divided by n = 3, not n − 1


def test_loss_variance_refuses_one_model_and_nan():
    with pytest.raises(ValueError, match="at least 2 models"):
        loss_variance([[1.0], [2.0]])
    with pytest.raises(ValueError, match="NaN"):
        loss_variance([[1.0, float("nan")]])


def test_eq1_on_hand_computed_values():
    # v = (1, 0, 4, 3), V_min 0, V_max 4: d = α + (1 − α)·v/4 with α = 0.5 -> 0.625, 0.5, 1, 0.875
    assert difficulty_degree([1.0, 0.0, 4.0, 3.0], 0.5) == pytest.approx([0.625, 0.5, 1.0, 0.875])
    # α = 0.2, v = (2, 6, 10): (v − 2)/8 = 0, 0.5, 1 -> 0.2, 0.6, 1
    assert difficulty_degree([2.0, 6.0, 10.0], 0.2) == pytest.approx([0.2, 0.6, 1.0])


@pytest.mark.parametrize("alpha", [0.2, 0.3, 0.5, 1.0])
def test_the_range_is_alpha_to_one(alpha):
    v = np.random.default_rng(0).exponential(size=50)
    d = difficulty_degree(v, alpha)
    assert d[v.argmax()] == pytest.approx(1.0) and d[v.argmin()] == pytest.approx(alpha)
    assert d.min() >= alpha - 1e-12 and d.max() <= 1.0 + 1e-12
    assert np.all(np.diff(d[np.argsort(v)]) >= -1e-12)  # monotone in v


def test_equal_variances_give_difficulty_one_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING):
        assert difficulty_degree([0.3, 0.3, 0.3], 0.5).tolist() == [1.0, 1.0, 1.0]
    assert "Eq. 1 is undefined" in caplog.text


@pytest.mark.parametrize("alpha", [0.0, -0.1, 1.5])
def test_alpha_outside_zero_one_is_refused(alpha):
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\]"):
        difficulty_degree([0.0, 1.0], alpha)


def test_alpha_for_the_papers_tasks_and_an_unknown_task():
    assert (alpha_for("mnli"), alpha_for("fever"), alpha_for("qqp")) == (0.5, 0.3, 0.2)
    assert alpha_for("mnli", 0.7) == 0.7 and alpha_for("sst2", 0.4) == 0.4
    with pytest.raises(ValueError, match="--alpha"):
        alpha_for("sst2")


def test_hard_split_takes_the_highest_variances_with_ties_by_position():
    v = [0.1, 0.5, 0.5, 0.2, 0.9]
    assert hard_split(v, 0.5).tolist() == [False, True, True, False, True]  # ⌈2.5⌉ = 3
    assert hard_split(v, 0.4).tolist() == [False, True, False, False, True]  # 2: of the tied 0.5s the first
    assert hard_split(v, 0.0).sum() == 0 and hard_split(v, 1.0).all()
    assert hard_split([0.0] * 4, 0.5).tolist() == [True, True, False, False]
    assert hard_split(np.arange(10.0), 0.1 * 3).sum() == 3  # (0.1·3)·10 is 3.0000000000000004 in floats, not 4
    with pytest.raises(ValueError, match="--hard_fraction"):
        hard_split(v, 1.5)


EXPECTED_ROUNDS = {0.2: 2, 0.4: 4, 0.6: 6, 0.7: 7, 0.85: 9}


@pytest.mark.parametrize("sparsity", DEFAULT_SPARSITIES)
def test_imp_schedule_of_every_default_sparsity_passes_imp_rounds(sparsity):
    k, ratio, interval = imp_schedule(sparsity)
    assert k == EXPECTED_ROUNDS[sparsity] and ratio <= 0.1 + 1e-12
    assert ratio == pytest.approx(sparsity / k) and interval == pytest.approx(1 / k)
    assert imp_rounds(sparsity, ratio, interval) == k
    # as the run parses them from the command line
    argv = imp_run_argv(["--model_name_or_path", "m", "--task", "mnli"], sparsity, "out")
    run = parse_args(argv)
    validate_args(run)
    assert (run.model.pruning, run.pruning.sparsity, run.pruning.rewind) == ("magnitude", sparsity, False)
    assert run.training.output_dir == f"out/imp_s{sparsity:g}"
    assert imp_rounds(sparsity, run.pruning.imp_prune_ratio, run.pruning.imp_interval) == k


def test_imp_run_argv_keeps_the_users_ratio_and_interval():
    argv = imp_run_argv(["--model_name_or_path", "m", "--imp_prune_ratio", "0.2", "--imp_interval=0.25"], 0.4, "o")
    assert argv.count("--imp_prune_ratio") == 1 and "--imp_interval" not in argv
    run = parse_args(argv)
    assert (run.pruning.imp_prune_ratio, run.pruning.imp_interval) == (0.2, 0.25)


def test_imp_run_argv_is_the_users_then_the_magnitude_methods_flags():
    # s = 0.25: k = ⌈0.25/0.1⌉ = 3 rounds of Δs = 0.25/3 every Δt = 1/3 of the run
    argv = imp_run_argv(["--model_name_or_path", "m", "--task", "mnli"], 0.25, "out")
    assert argv == [
        "--model_name_or_path", "m", "--task", "mnli", "--pruning", "magnitude", "--sparsity", "0.25",
        "--imp_prune_ratio", repr(0.25 / 3), "--imp_interval", repr(1 / 3), "--output_dir", "out/imp_s0.25",
    ]  # fmt: skip
    given = imp_run_argv(["--imp_interval", "0.5"], 0.2, "o")
    assert given == [
        "--imp_interval", "0.5", "--pruning", "magnitude", "--sparsity", "0.2", "--imp_prune_ratio", "0.1",
        "--output_dir", "o/imp_s0.2",
    ]  # fmt: skip
