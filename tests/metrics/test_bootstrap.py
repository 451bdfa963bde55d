"""Paired bootstrap intervals: expected values from enumerating every resample of tiny sets, from the normal
approximation for a large one, and from scikit-learn's weighted F1."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from sklearn.metrics import f1_score

from hf_srnets.metrics import bootstrap
from hf_srnets.metrics.bootstrap import (
    PairedInterval,
    bootstrap_count_interval,
    bootstrap_interval,
    bootstrap_replicates,
    count_sums,
    paired_bootstrap,
    paired_bootstrap_predictions,
    paired_bootstrap_ratio,
    ratio_statistic,
    weighted_f1_statistic,
)


def test_identical_method_and_baseline_give_the_interval_zero_zero() -> None:
    scores = np.array([[1, 0, 1, 1, 0, 1], [0, 0, 1, 1, 1, 1]])
    interval = paired_bootstrap(scores, scores.copy())
    assert (interval.difference, interval.low, interval.high) == (0.0, 0.0, 0.0)
    assert not interval.excludes_zero
    assert (interval.n_seeds, interval.n_examples, interval.n_resamples) == (2, 6, 1000)


def test_a_method_better_on_every_example_excludes_zero() -> None:
    rng = np.random.default_rng(3)
    baseline = rng.random((3, 50))
    method = baseline + 0.01 + rng.random((3, 50))  # higher on every example, every seed: every replicate > 0
    interval = paired_bootstrap(method, baseline)
    assert interval.low > 0.01 and interval.excludes_zero
    assert interval.difference == pytest.approx(float((method - baseline).mean()))


def test_seeds_are_paired_by_row_and_their_differences_averaged() -> None:
    # seed 1: method 3/4 right, baseline 1/4 (difference 0.5); seed 2: both 2/4 right (difference 0)
    method = [[1, 1, 1, 0], [1, 1, 0, 0]]
    baseline = [[1, 0, 0, 0], [0, 0, 1, 1]]
    assert paired_bootstrap(method, baseline).difference == pytest.approx(0.25)


def test_replicates_follow_the_enumerated_resampling_distribution() -> None:
    # per-example differences d = (0, 0, 3): the 27 ordered draws of 3 indices give the replicate mean
    # 0, 1, 2, 3 with probabilities 8/27, 12/27, 6/27, 1/27
    d = np.array([0.0, 0.0, 3.0])
    exact = Counter(sum(d[list(draw)]) / 3 for draw in itertools.product(range(3), repeat=3))
    assert exact == {0.0: 8, 1.0: 12, 2.0: 6, 3.0: 1}
    b = 20000
    values = bootstrap_replicates(lambda w: w[0] @ d / 3, [3], n_resamples=b, seed=7)
    for value, count in exact.items():
        p = count / 27
        assert abs(np.mean(np.isclose(values, value)) - p) < 4.5 * math.sqrt(p * (1 - p) / b)
    # exact 2.5% and 97.5% quantiles: 0 (P(0) = 0.30) and 3 (P(≤ 2) = 26/27 = 0.963 < 0.975)
    interval = paired_bootstrap([1.0, 1.0, 4.0], [1.0, 1.0, 1.0], n_resamples=b, seed=7)
    assert (interval.difference, interval.low, interval.high) == (1.0, 0.0, 3.0)
    assert not interval.excludes_zero


def test_percentile_interval_matches_the_normal_approximation_for_large_n() -> None:
    # accuracy difference on n = 4000 paired 0/1 scores: the percentile interval should be close to
    # d̄ ± 1.96·s_d/√n. Tolerance 0.25·s_d/√n: the Monte-Carlo error of a 2.5% percentile from B = 2000
    # replicates is about sqrt(0.025·0.975/B)/φ(1.96) ≈ 0.06·s_d/√n, and the skewness of a mean of 4000
    # bounded terms moves a 2.5% quantile by far less than that.
    rng = np.random.default_rng(11)
    n = 4000
    baseline = (rng.random(n) < 0.70).astype(float)
    method = np.where(rng.random(n) < 0.9, baseline, (rng.random(n) < 0.78).astype(float))
    d = method - baseline
    se = d.std(ddof=1) / math.sqrt(n)
    interval = paired_bootstrap(method, baseline, n_resamples=2000, seed=1)
    assert interval.difference == pytest.approx(d.mean())
    assert interval.low == pytest.approx(d.mean() - 1.959964 * se, abs=0.25 * se)
    assert interval.high == pytest.approx(d.mean() + 1.959964 * se, abs=0.25 * se)


def test_ratio_statistic_on_given_draw_counts() -> None:
    numerator, denominator = np.array([[1.0, 0.0, 0.0]]), np.array([[1.0, 1.0, 0.0]])
    weights = np.array([[2, 1, 0], [0, 3, 0], [3, 0, 0]], dtype=float)  # draws (0,0,1), (1,1,1), (0,0,0)
    assert ratio_statistic(numerator, denominator)(weights)[:, 0] == pytest.approx([2 / 3, 0.0, 1.0])
    assert np.isnan(ratio_statistic(numerator, denominator)(np.array([[0.0, 0.0, 3.0]])))[0, 0]


def test_ratio_difference_drops_undefined_replicates() -> None:
    # method: Suc = successes / attacked with u = (1, 0, 0), v = (1, 1, 0): 1/2 on the set; a draw of example 2
    # alone (1 of the 27 ordered draws) has no attacked example. The baseline never succeeds (0).
    b = 20000
    interval = paired_bootstrap_ratio([1, 0, 0], [1, 1, 0], [0, 0, 0], [1, 1, 1], n_resamples=b, seed=5)
    assert interval.difference == 0.5
    # the defined draws give 0 with probability 7/26 and 1 with 7/26: the 2.5% and 97.5% quantiles are 0 and 1
    assert (interval.low, interval.high) == (0.0, 1.0)
    dropped = 1 - interval.n_resamples / b
    assert abs(dropped - 1 / 27) < 4.5 * math.sqrt((1 / 27) * (26 / 27) / b)


def test_ratio_with_a_zero_denominator_on_the_set_is_refused() -> None:
    with pytest.raises(ValueError, match="undefined"):
        paired_bootstrap_ratio([0, 0], [0, 0], [0, 1], [1, 1])


def test_weighted_f1_statistic_matches_scikit_learn_on_resampled_sets() -> None:
    labels = np.array([0, 0, 1, 2, 2, 1, 0, 2])
    predictions = np.array([[0, 1, 1, 2, 0, 1, 0, 3], [2, 2, 2, 2, 2, 2, 2, 2]])  # 3: never gold; seed 2: one class
    weights = np.array([[1, 1, 1, 1, 1, 1, 1, 1], [3, 0, 0, 2, 0, 1, 0, 2], [0, 0, 0, 0, 4, 0, 0, 4]], dtype=float)
    got = weighted_f1_statistic(predictions, labels)(weights)
    for r, w in enumerate(weights.astype(int)):
        for s in range(2):
            expected = f1_score(
                np.repeat(labels, w), np.repeat(predictions[s], w), average="weighted", zero_division=0.0
            )
            assert got[r, s] == pytest.approx(expected)


def test_f1_and_accuracy_differences_of_predictions() -> None:
    labels = np.array([0, 1, 1, 0, 2, 2, 1, 0])
    method = np.array([[0, 1, 1, 0, 2, 1, 1, 0], [0, 1, 0, 0, 2, 2, 1, 1]])
    baseline = np.array([[0, 0, 1, 0, 1, 1, 1, 0], [1, 1, 0, 0, 2, 1, 1, 1]])
    f1 = paired_bootstrap_predictions(method, baseline, labels, "f1", n_resamples=200)
    expected = np.mean([f1_score(labels, m, average="weighted") - f1_score(labels, b, average="weighted")
                        for m, b in zip(method, baseline)])  # fmt: skip
    assert f1.difference == pytest.approx(expected)
    accuracy = paired_bootstrap_predictions(method, baseline, labels, n_resamples=200)
    assert accuracy.difference == pytest.approx(((7 - 5) / 8 + (6 - 4) / 8) / 2)


def test_the_same_seed_gives_the_same_interval_whatever_the_chunking(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    method, baseline = rng.integers(0, 2, (2, 40)), rng.integers(0, 2, (2, 40))
    whole = paired_bootstrap(method, baseline, seed=3)
    monkeypatch.setattr(bootstrap, "_CHUNK_VALUES", 7 * 40)  # 7 replicates per chunk
    assert paired_bootstrap(method, baseline, seed=3) == whole
    assert paired_bootstrap(method, baseline, seed=4) != whole


def test_count_sums_are_the_draw_counts_times_the_rows_on_the_same_draws() -> None:
    """Σ_i w_i·x_ri computed from the draw counts that `bootstrap_replicates` hands a statistic (float64), for two
    sets drawn together (as F_bias's ID and OOD sets), and asked again for rows already summed."""
    rng = np.random.default_rng(5)
    dev, ood = rng.integers(0, 2, (3, 50)), rng.integers(0, 2, (2, 70))
    want_dev = bootstrap_replicates(lambda w: w[0] @ dev.T, [50, 70], n_resamples=300, seed=9)
    want_ood = bootstrap_replicates(lambda w: w[1] @ ood.T, [50, 70], n_resamples=300, seed=9)
    got_dev, got_ood = count_sums([dev, ood], n_resamples=300, seed=9)
    assert got_dev.dtype == np.float64 and got_dev.shape == (300, 3) and got_ood.shape == (300, 2)
    assert np.array_equal(got_dev, want_dev) and np.array_equal(got_ood, want_ood)
    again = count_sums([dev[[2, 0]], ood], n_resamples=300, seed=9)[0]  # rows seen before, in another order
    assert np.array_equal(again, got_dev[:, [2, 0]])
    alone = count_sums([dev], n_resamples=300, seed=9)[0]  # drawn without the OOD set: other draws
    assert not np.array_equal(alone, got_dev)


def test_the_count_interval_is_the_draw_count_interval_to_the_bit() -> None:
    rng = np.random.default_rng(6)
    hits = rng.integers(0, 2, (4, 300)).astype(float)  # two seeds of a method, two of its baseline

    def from_counts(weights):
        acc = (weights[0] @ hits.T) / weights[0].sum(axis=1, keepdims=True)
        return (acc[:, :2] - acc[:, 2:]).mean(axis=1)

    def from_sums(sums):
        acc = sums[0] / 300
        return (acc[:, :2] - acc[:, 2:]).mean(axis=1)

    want = bootstrap_interval(from_counts, [300], n_seeds=2, n_resamples=1000, seed=2)
    assert bootstrap_count_interval(from_sums, [hits], n_seeds=2, n_resamples=1000, seed=2) == want
    with pytest.raises(ValueError, match="0/1 rows"):
        count_sums([hits * 0.5])


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="one shape"):
        paired_bootstrap([[1, 0, 1]], [[1, 0]])
    with pytest.raises(ValueError, match="at least one example"):
        paired_bootstrap([], [])
    with pytest.raises(ValueError, match="gold labels"):
        paired_bootstrap_predictions([0, 1], [1, 1], [0, 1, 1])
    with pytest.raises(ValueError, match="not 'recall'"):
        paired_bootstrap_predictions([0, 1], [1, 1], [0, 1], "recall")
    with pytest.raises(ValueError, match="confidence"):
        paired_bootstrap([0, 1], [1, 1], confidence=95)


def test_format_marks_intervals_that_exclude_zero() -> None:
    outside = PairedInterval(0.0123, 0.004, 0.0285, 0.95, 100, 1, 1000)
    inside = PairedInterval(0.0123, -0.004, 0.0285, 0.95, 100, 1, 1000)
    assert outside.format() == "+1.23 [+0.40, +2.85]*"
    assert inside.format(digits=1) == "+1.2 [-0.4, +2.9]"
