"""Sparsity schedules: the cubic ramp of Zhu & Gupta (2018) as used in Win-win §5.2."""

import pytest

from hf_srnets.pruning import ThresholdConfig, cubic_sparsity, schedule_end_step, sparsity_at


def test_cubic_values():
    # s_t = s_f + (s_i - s_f)(1 - t/T)^3 with s_i = 0.7, s_f = 0.9, T = 100
    assert cubic_sparsity(0, 0, 100, 0.7, 0.9) == pytest.approx(0.7)
    assert cubic_sparsity(50, 0, 100, 0.7, 0.9) == pytest.approx(0.9 - 0.2 * 0.125)
    assert cubic_sparsity(90, 0, 100, 0.7, 0.9) == pytest.approx(0.9 - 0.2 * 0.001)
    assert cubic_sparsity(100, 0, 100, 0.7, 0.9) == pytest.approx(0.9)
    assert cubic_sparsity(500, 0, 100, 0.7, 0.9) == pytest.approx(0.9)


def test_schedule_from_config():
    cfg = ThresholdConfig(sparsity=0.9, initial_sparsity=0.7, sparsity_schedule="cubic", schedule_end=0.5)
    assert sparsity_at(0, 1000, cfg) == pytest.approx(0.7)
    assert sparsity_at(250, 1000, cfg) == pytest.approx(0.9 - 0.2 * 0.125)
    assert sparsity_at(600, 1000, cfg) == pytest.approx(0.9)
    assert schedule_end_step(1000, cfg) == 500
    constant = ThresholdConfig(sparsity=0.3)
    assert sparsity_at(7, 100, constant) == 0.3
    assert schedule_end_step(100, constant) == 0


def test_schedule_is_monotone():
    values = [cubic_sparsity(t, 10, 90, 0.7, 0.9) for t in range(100)]
    assert all(a <= b for a, b in zip(values, values[1:]))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"sparsity": 1.0}, "sparsity must be in"),
        ({"sparsity": -0.1}, "sparsity must be in"),
        ({"sparsity_schedule": "cubic"}, "needs initial_sparsity"),
        ({"sparsity": 0.5, "initial_sparsity": 0.7}, "initial_sparsity must be"),
        ({"mask_init": "magic"}, "mask_init"),
        ({"alpha": 0.5}, "alpha"),
        ({"sparsity_scope": "row"}, "sparsity_scope"),
    ],
)
def test_bad_config_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ThresholdConfig(**kwargs)
