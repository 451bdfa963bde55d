"""The seed-level t-test and Holm's adjustment against printed tables and hand computations."""

from __future__ import annotations

import math

import pytest

from hf_srnets.metrics.significance import (
    holm,
    is_decided,
    paired_t_test,
    seed_signs,
    student_t_two_sided,
    verdict_marker,
)

# two-sided 5% critical values of Student's t (any printed t-table, e.g. Abramowitz & Stegun Table 26.10)
CRITICAL_5 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 10: 2.228, 30: 2.042}
# two-sided 1% critical values
CRITICAL_1 = {1: 63.657, 2: 9.925, 3: 5.841, 6: 3.707, 29: 2.756}


@pytest.mark.parametrize("df", sorted(CRITICAL_5))
def test_the_t_tail_gives_five_percent_at_the_tabled_critical_values(df: int) -> None:
    assert student_t_two_sided(CRITICAL_5[df], df) == pytest.approx(0.05, abs=2e-4)
    assert student_t_two_sided(-CRITICAL_5[df], df) == pytest.approx(0.05, abs=2e-4)


@pytest.mark.parametrize("df", sorted(CRITICAL_1))
def test_the_t_tail_gives_one_percent_at_the_tabled_critical_values(df: int) -> None:
    assert student_t_two_sided(CRITICAL_1[df], df) == pytest.approx(0.01, abs=5e-5)


def test_closed_forms_of_one_and_two_degrees_of_freedom() -> None:
    # df = 1 is the Cauchy: P(|T| >= t) = 1 - 2 atan(t) / π; df = 2: 1 - t / sqrt(2 + t²)
    for t in (0.0, 0.5, 1.0, 3.0):
        assert student_t_two_sided(t, 1) == pytest.approx(1 - 2 * math.atan(t) / math.pi)
        assert student_t_two_sided(t, 2) == pytest.approx(1 - t / math.sqrt(2 + t * t))
    with pytest.raises(ValueError, match="degree of freedom"):
        student_t_two_sided(1.0, 0)


def test_paired_t_test_over_three_seeds_by_hand() -> None:
    # d = (1, 2, 3): mean 2, sd 1, t = 2 / (1 / √3) = 3.4641 on 2 df: p = 1 - t / sqrt(2 + t²) = 0.0742
    assert paired_t_test([1.0, 2.0, 3.0]) == pytest.approx(1 - 3.4641016 / math.sqrt(2 + 12), abs=1e-6)
    assert paired_t_test([0.01, 0.02, 0.03]) == pytest.approx(0.07418, abs=1e-5)  # scale-free
    assert paired_t_test([0.5]) is None  # one seed: no test
    assert paired_t_test([0.2, 0.2, 0.2]) is None  # sd = 0: undefined


def test_holm_by_hand_keeps_the_input_order_and_skips_missing_values() -> None:
    # sorted 0.005, 0.01, 0.03, 0.04 (m = 4): 4·0.005 = 0.02, 3·0.01 = 0.03, 2·0.03 = 0.06, max(1·0.04, 0.06) = 0.06
    assert holm([0.01, 0.04, 0.03, None, 0.005]) == pytest.approx([0.03, 0.06, 0.06, None, 0.02])
    assert holm([0.6, 0.9]) == [1.0, 1.0]  # capped at 1
    assert holm([]) == []


# the verdict rule (issue 72): decided only when the interval excludes 0 and the seeds agree in sign, or Holm p < 0.05
@pytest.mark.parametrize(
    ("low", "high", "signs", "holm_p", "marker"),
    [
        (0.01, 0.05, "+++", 0.4, "*"),  # seeds agree: decided whatever the t-test says with 2 df
        (0.01, 0.05, "++−", 0.3, "°"),  # one seed reverses it: not decided
        (0.01, 0.05, "++−", 0.01, "*"),  # ... unless the seed-level test rejects after Holm
        (0.01, 0.05, "++−", 0.05, "°"),  # p must be below 0.05, not at it
        (0.01, 0.05, "++−", None, "°"),  # no seed-level test (equal differences): the signs decide
        (0.01, 0.05, "+0", 0.5, "°"),  # a seed with no difference does not agree
        (-0.05, -0.01, "−−−", 0.2, "*"),  # a negative difference: every seed negative
        (-0.05, -0.01, "+++", 0.2, "°"),
        (-0.01, 0.05, "+++", 0.001, ""),  # the interval holds 0: no verdict, whatever the seeds
        (0.01, 0.05, "+", None, "*"),  # one seed: the interval alone
    ],
)
def test_the_verdict_rule_by_hand(low, high, signs, holm_p, marker) -> None:
    assert verdict_marker(low, high, signs, holm_p) == marker
    assert is_decided(low, high, signs, holm_p) == (marker == "*")


def test_seed_signs_read_in_seed_order() -> None:
    assert seed_signs([0.25, -0.5, 0.0]) == "+−0"
    assert seed_signs([]) == ""
