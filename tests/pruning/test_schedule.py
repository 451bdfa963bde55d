"""The shared schedule block (`hf_srnets.pruning.schedule`) against values worked out by hand, and the three methods'
schedules (mask training's cubic ramp, l0's λ warm-up, IMP's rounds) reading it."""

import pytest

from hf_srnets.pruning import ThresholdConfig, cubic_sparsity, schedule_end_step, sparsity_at
from hf_srnets.pruning.l0 import L0Config, lambda_at
from hf_srnets.pruning.schedule import (
    cubic_ramp,
    interval_in_steps,
    is_round_step,
    linear_warmup,
    ramp_steps,
    staircase_rounds,
    staircase_value,
)


def test_ramp_steps_round_the_fractions_and_last_at_least_one_step():
    assert ramp_steps(0.0, 0.8, 100) == (0, 80)
    assert ramp_steps(0.1, 0.5, 30) == (3, 15)
    assert ramp_steps(0.1, 0.8, 25) == (2, 20)  # 0.1·25 = 2.5 rounds half to even: 2
    assert ramp_steps(0.3, 0.7, 25) == (8, 18)  # 7.5 -> 8 (even), 17.5 -> 18
    assert ramp_steps(0.0, 0.01, 10) == (0, 1)  # round(0.1) = 0: one step long all the same
    assert ramp_steps(0.5, 0.52, 10) == (5, 6)  # 5 and round(5.2) = 5 -> t_0 + 1


def test_cubic_ramp_by_hand():
    # v_t = v_f + (v_i - v_f)(1 - (t - t_0)/(t_1 - t_0))^3 with t_0 = 10, t_1 = 50, v_i = 0.5, v_f = 0.9
    assert cubic_ramp(0, 10, 50, 0.5, 0.9) == 0.5  # before t_0: v_i exactly
    assert cubic_ramp(10, 10, 50, 0.5, 0.9) == 0.5
    assert cubic_ramp(20, 10, 50, 0.5, 0.9) == pytest.approx(0.9 - 0.4 * 0.75**3)  # 0.73125
    assert cubic_ramp(30, 10, 50, 0.5, 0.9) == pytest.approx(0.85)  # half-way: 0.9 - 0.4/8
    assert cubic_ramp(40, 10, 50, 0.5, 0.9) == pytest.approx(0.89375)  # 0.9 - 0.4/64
    assert cubic_ramp(50, 10, 50, 0.5, 0.9) == 0.9  # from t_1 on: v_f exactly
    assert cubic_ramp(99, 10, 50, 0.5, 0.9) == 0.9
    assert cubic_sparsity is cubic_ramp  # mask training's name for it


def test_linear_warmup_by_hand():
    # v_t = v·clip((t - t_0)/w, 0, 1) with t_0 = 10, w = 30, v = 0.5
    assert [linear_warmup(t, 10.0, 30.0, 0.5) for t in (0, 10, 25, 40, 100)] == pytest.approx([0, 0, 0.25, 0.5, 0.5])
    assert linear_warmup(13, 2.5, 7.0, 1.0) == pytest.approx(1.0)  # points between steps: 10.5/7 clipped to 1
    assert linear_warmup(6, 2.5, 7.0, 1.0) == pytest.approx(0.5)  # 3.5/7
    assert [linear_warmup(t, 10.0, 0.0, 0.5) for t in (9, 10, 11)] == [0.0, 0.5, 0.5]  # w = 0: on at t_0


def test_the_staircase_of_rounds_by_hand():
    assert interval_in_steps(0.25, 10) == 2  # ⌊2.5⌋
    assert interval_in_steps(0.1, 100) == 10
    assert interval_in_steps(0.01, 10) == 1  # ⌊0.1⌋ = 0: at least one step
    # k = 4 rounds every Δt = 2 steps, at steps 0, 2, 4, 6: rounds done after step t
    assert [staircase_rounds(t, 2, 4) for t in range(9)] == [1, 1, 2, 2, 3, 3, 4, 4, 4]
    assert [t for t in range(9) if is_round_step(t, 2)] == [0, 2, 4, 6, 8]
    assert staircase_value(3, 0.25) == 0.75  # s = r·Δs
    assert staircase_value(0, 0.1) == 0.0


def test_the_methods_read_the_shared_block():
    cubic = ThresholdConfig(sparsity=0.9, initial_sparsity=0.5, sparsity_schedule="cubic", schedule_start=0.1,
                            schedule_end=0.5)  # fmt: skip
    # T = 100: the ramp runs from step 10 to 50, as in test_cubic_ramp_by_hand
    assert sparsity_at(30, 100, cubic) == pytest.approx(0.85) and sparsity_at(5, 100, cubic) == 0.5
    assert schedule_end_step(100, cubic) == 50 and schedule_end_step(100, ThresholdConfig(sparsity=0.9)) == 0
    warm = L0Config(l0_lambda=0.5, l0_lambda_start_fraction=0.1, l0_lambda_warmup_fraction=0.3)
    assert [lambda_at(t, 100, warm) for t in (0, 10, 25, 40, 100)] == pytest.approx([0, 0, 0.25, 0.5, 0.5])
