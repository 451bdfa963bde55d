"""Paired bootstrap intervals over evaluation examples for a method against its baseline.

The percentile bootstrap (Efron & Tibshirani, *An Introduction to the Bootstrap*, 1993, ch. 13) over test examples,
paired as Koehn ("Statistical Significance Tests for Machine Translation Evaluation", EMNLP 2004) and
Berg-Kirkpatrick et al. ("An Empirical Investigation of Statistical Significance in NLP", EMNLP 2012) use it: both
systems are scored on the same n examples, and each replicate draws n example indices i_1..i_n uniformly with
replacement, one draw shared by both systems and all seeds (that is the pairing). Several seeds of each system
are paired by seed value: arrays [S, n], row s of the method and row s of the baseline come from runs of seed s.
The statistics, on a replicate:

    mean difference   θ* = (1/S) Σ_s [ (1/n) Σ_k m_{s,i_k} − (1/n) Σ_k b_{s,i_k} ]            (accuracy: 0/1)
    ratio difference  θ* = (1/S) Σ_s [ Σ_k u^m_{s,i_k} / Σ_k v^m_{s,i_k} − Σ_k u^b_{s,i_k} / Σ_k v^b_{s,i_k} ]
                      (Suc% = successful / attacked: u = 1 if the attack succeeded, v = 1 if the example was
                      attacked, i.e. classified correctly; a replicate with Σ v = 0 is undefined and dropped)
    weighted F1       θ* = (1/S) Σ_s [ F1_w(m_s) − F1_w(b_s) ],  F1_w = Σ_c (n_c / n)·2·TP_c / (n_c + p_c)
                      (n_c gold and p_c predicted examples of class c on the replicate; 0 when n_c + p_c = 0;
                      `hf_srnets.metrics.classification.f1_weighted`)

The interval is the (α/2, 1 − α/2) percentiles of B replicates (default B = 1000 and 95%: the 2.5th and 97.5th,
numpy's linear interpolation); the observed difference is θ on the examples as they are. A difference is outside
noise when 0 lies outside the interval. The seeds are held fixed: the interval measures how much the difference
depends on which evaluation examples were drawn, not how much it moves from seed to seed (the sample standard
deviation over seeds says that). Statistics over several evaluation sets (F_bias: the ID and the OOD set) resample
each set on its own, keeping its size (`bootstrap_replicates` with several `sizes`).

A replicate is held as its draw counts w_i (how often example i was drawn, Σ_i w_i = n), so every sum over the
replicate is w·x, a matrix product over a chunk of replicates. Statistics of correctness (x_i 0 or 1) need only the
replicates' count sums Σ_i w_i·x_i of each run (`count_sums`, `bootstrap_count_interval`): integers of at most n,
exact in float32 below 2^24, computed once per run and set however many comparisons use them.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

# a statistic of B replicates: one [B, n_k] array of draw counts per evaluation set -> B values
Statistic = Callable[[Sequence[np.ndarray]], np.ndarray]

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95
# replicates per chunk: bounds a chunk's [B, n] draw counts to about 2**22 values
_CHUNK_VALUES = 2**22


class UndefinedStatisticError(ValueError):
    """The statistic has no value on the examples, or on any replicate (e.g. F_bias against a reference whose
    accuracy does not drop out of distribution: Δ_reference ≤ 0)."""


@dataclass(frozen=True)
class PairedInterval:
    """A method's difference from its baseline and its percentile bootstrap interval (module docstring).

    `n_examples` is the number of examples resampled (summed over the sets), `n_seeds` the paired seeds and
    `n_resamples` the replicates the interval was computed from (fewer than asked when some were undefined).
    """

    difference: float
    low: float
    high: float
    confidence: float
    n_examples: int
    n_seeds: int
    n_resamples: int

    @property
    def excludes_zero(self) -> bool:
        """Whether 0 lies outside the interval: the difference is outside the noise of the example sample."""
        return self.low > 0 or self.high < 0

    def format(self, scale: float = 100.0, digits: int = 2, marker: str = "*") -> str:
        """`+1.23 [-0.40, +2.85]`, with `marker` appended when the interval excludes 0; values × `scale`."""
        return format_interval(self.difference, self.low, self.high, scale, digits, marker)


def format_interval(
    difference: float, low: float, high: float, scale: float = 100.0, digits: int = 2, marker: str = "*"
) -> str:
    """`+1.23 [-0.40, +2.85]` (values × `scale`), with `marker` appended when 0 lies outside [low, high]."""
    d, lo, hi = (f"{scale * v:+.{digits}f}" for v in (difference, low, high))
    return f"{d} [{lo}, {hi}]" + (marker if low > 0 or high < 0 else "")


def draw_counts(sizes: Sequence[int], n_resamples: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Per set, a [n_resamples, n_k] array of how often each example is drawn when n_k indices are drawn uniformly
    with replacement; replicate by replicate, set by set, so a replicate does not depend on the chunking."""
    draws = [[rng.integers(0, n, size=n) for n in sizes] for _ in range(n_resamples)]
    counts = []
    for k, n in enumerate(sizes):
        rows = np.stack([d[k] for d in draws]) if draws else np.empty((0, n), np.int64)
        offsets = (np.arange(len(rows)) * n)[:, None]
        counts.append(np.bincount((rows + offsets).ravel(), minlength=len(rows) * n).reshape(len(rows), n))
    return [c.astype(float) for c in counts]


def bootstrap_replicates(
    statistic: Statistic, sizes: Sequence[int], n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> np.ndarray:
    """`statistic` on `n_resamples` replicates drawn from `numpy.random.default_rng(seed)` (`draw_counts`)."""
    if not sizes or min(sizes) < 1:
        raise ValueError(f"a bootstrap needs at least one example per set, got set sizes {list(sizes)}")
    parts = [
        np.asarray(statistic([c.astype(float) for c in counts]), dtype=float)
        for counts in _replicate_counts(tuple(int(n) for n in sizes), n_resamples, seed)
    ]
    return np.concatenate(parts) if parts else np.empty(0)


@functools.lru_cache(maxsize=4)
def _replicate_counts(sizes: tuple[int, ...], n_resamples: int, seed: int) -> tuple[tuple[np.ndarray, ...], ...]:
    """The draw counts of every chunk of `bootstrap_replicates`, read-only, in the smallest integer type that holds
    them. They depend on the set sizes, the number of resamples and the seed only, and a report bootstraps many
    statistics over the same sets and seed: drawing them once per (sizes, resamples, seed) instead of once per
    statistic is most of a report's time saved (the draws themselves are the same, so are the intervals)."""
    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_VALUES // sum(sizes))
    chunks = []
    for start in range(0, n_resamples, chunk):
        counts = draw_counts(sizes, min(chunk, n_resamples - start), rng)
        compact = tuple(c.astype(np.min_scalar_type(int(c.max(initial=0)))) for c in counts)
        for c in compact:
            c.setflags(write=False)
        chunks.append(compact)
    return tuple(chunks)


def bootstrap_interval(
    statistic: Statistic,
    sizes: Sequence[int],
    *,
    n_seeds: int = 1,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> PairedInterval:
    """The observed `statistic` (every example drawn once) and the percentile interval of its replicates;
    undefined (non-finite) replicates are dropped. Raises when the observed value or every replicate is undefined."""
    on_examples = [np.ones((1, n)) for n in sizes]
    replicates = functools.partial(bootstrap_replicates, statistic, sizes, n_resamples, seed)
    return _percentile_interval(statistic, on_examples, replicates, confidence, int(sum(sizes)), n_seeds)


def _percentile_interval(
    statistic: Statistic,
    on_examples: list[np.ndarray],
    replicates: Callable[[], np.ndarray],
    confidence: float,
    n_examples: int,
    n_seeds: int,
) -> PairedInterval:
    """`statistic` on the examples as they are (`on_examples`, its input then) and the percentile interval of the
    values `replicates()` returns; refuses a confidence outside (0, 1) and an undefined observed value first."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    observed = float(np.asarray(statistic(on_examples), dtype=float)[0])
    if not np.isfinite(observed):
        raise UndefinedStatisticError(
            "the statistic is undefined on the evaluation examples (a ratio with a zero denominator)"
        )
    values = np.asarray(replicates(), dtype=float)
    values = values[np.isfinite(values)]
    if not values.size:
        raise UndefinedStatisticError("the statistic is undefined on every bootstrap replicate")
    alpha = 1.0 - confidence
    low, high = np.percentile(values, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return PairedInterval(observed, float(low), float(high), confidence, n_examples, n_seeds, int(values.size))


# (set sizes, resamples, seed, set index, a run's 0/1 row as bytes) -> its replicates' count sums [B]; about 256 MB
_SUMS: OrderedDict[tuple, np.ndarray] = OrderedDict()
_SUMS_VALUES = 2**25


def count_sums(hits: Sequence[np.ndarray], n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> list[np.ndarray]:
    """Per evaluation set k, the [n_resamples, rows] count sums Σ_i w_i·hits_k[r, i] of 0/1 rows `hits[k]`
    [rows, n_k] on the replicates of `bootstrap_replicates(..., sizes=[n_1, ..., n_K], n_resamples, seed)`, float64.
    Exact: integers of at most n_k < 2^24, summed in float32. A row summed before on the same draws is not summed
    again (a report pairs each run with several baselines, on several columns)."""
    hits = [np.asarray(h) for h in hits]
    if any(h.ndim != 2 or not np.isin(h, (0, 1)).all() for h in hits):
        raise ValueError("count sums need 0/1 rows [rows, examples] per set")
    sizes = tuple(h.shape[1] for h in hits)
    if not sizes or min(sizes) < 1 or max(sizes) >= 2**24:
        raise ValueError(f"count sums need between 1 and 2^24 examples per set, got set sizes {list(sizes)}")
    return [_set_count_sums(sizes, n_resamples, seed, k, h) for k, h in enumerate(hits)]


def _set_count_sums(sizes: tuple[int, ...], n_resamples: int, seed: int, k: int, hits: np.ndarray) -> np.ndarray:
    keys = [(sizes, n_resamples, seed, k, row.astype(np.uint8).tobytes()) for row in hits]
    missing = list(dict.fromkeys(key for key in keys if key not in _SUMS))
    if missing:
        rows = np.stack([np.frombuffer(key[-1], dtype=np.uint8) for key in missing]).astype(np.float32)
        chunks = _replicate_counts(sizes, n_resamples, seed)
        sums = np.concatenate([chunk[k].astype(np.float32) @ rows.T for chunk in chunks]).astype(np.float64)
        for j, key in enumerate(missing):
            _SUMS[key] = sums[:, j].copy()
    for key in keys:
        _SUMS.move_to_end(key)
    while len(_SUMS) > max(len(keys), _SUMS_VALUES // max(n_resamples, 1)):
        _SUMS.popitem(last=False)
    return np.stack([_SUMS[key] for key in keys], axis=1)


def bootstrap_count_interval(
    statistic: Statistic,
    hits: Sequence[np.ndarray],
    *,
    n_seeds: int = 1,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> PairedInterval:
    """`bootstrap_interval` for a statistic of count sums: `statistic` maps per set the [B, rows] sums Σ_i w_i·x_ri
    of the 0/1 rows `hits[k]` to B values; on the examples as they are, the sums are the rows' totals. Equal to the
    bit to `bootstrap_interval` of the statistic written with the draw counts (w @ hits[k].T), on the same draws."""
    on_examples = [np.asarray(h, dtype=float).sum(axis=1)[None, :] for h in hits]
    n_examples = int(sum(np.shape(h)[1] for h in hits))

    def replicates() -> np.ndarray:
        return statistic(count_sums(hits, n_resamples, seed))

    return _percentile_interval(statistic, on_examples, replicates, confidence, n_examples, n_seeds)


def paired_rows(*arrays: np.ndarray | Sequence) -> list[np.ndarray]:
    """Arrays of per-example values as float [seeds, examples] (one row for a 1-D array), checked to share a shape."""
    rows = [np.atleast_2d(np.asarray(a, dtype=float)) for a in arrays]
    shapes = {r.shape for r in rows}
    if len(shapes) != 1 or rows[0].ndim != 2:
        raise ValueError(
            f"paired scores need one shape [seeds, examples] for method and baseline, got {[r.shape for r in rows]}"
        )
    if rows[0].shape[1] == 0:
        raise ValueError("paired scores need at least one example")
    return rows


def paired_bootstrap(
    method: np.ndarray | Sequence,
    baseline: np.ndarray | Sequence,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> PairedInterval:
    """The mean difference method − baseline of per-example scores (e.g. 0/1 correctness), [examples] or
    [seeds, examples] paired by row, and its paired bootstrap interval (module docstring)."""
    m, b = paired_rows(method, baseline)
    per_example = (m - b).mean(axis=0)  # the mean over seeds is linear: take it first
    n = m.shape[1]

    def statistic(weights: Sequence[np.ndarray]) -> np.ndarray:
        return weights[0] @ per_example / n

    return bootstrap_interval(
        statistic, [n], n_seeds=m.shape[0], n_resamples=n_resamples, seed=seed, confidence=confidence
    )


def seedwise_difference(
    method: Callable[[np.ndarray], np.ndarray],
    baseline: Callable[[np.ndarray], np.ndarray],
    shape: tuple[int, int],
    **kwargs: float,
) -> PairedInterval:
    """The interval of mean over seeds of method − baseline, for per-seed statistics of one set's draw counts
    (w [B, n] -> [B, seeds]); `shape` is [seeds, examples], `kwargs` those of `bootstrap_interval`."""

    def statistic(weights: Sequence[np.ndarray]) -> np.ndarray:
        return (method(weights[0]) - baseline(weights[0])).mean(axis=1)

    return bootstrap_interval(statistic, [shape[1]], n_seeds=shape[0], **kwargs)


def ratio_statistic(numerator: np.ndarray, denominator: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Draw counts w [B, n] -> [B, seeds]: Σ_i w_i·numerator[s, i] / Σ_i w_i·denominator[s, i] (inf or NaN when
    the denominator is 0)."""

    def ratio(weights: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return (weights @ numerator.T) / (weights @ denominator.T)

    return ratio


def paired_bootstrap_ratio(
    method_numerator: np.ndarray | Sequence,
    method_denominator: np.ndarray | Sequence,
    baseline_numerator: np.ndarray | Sequence,
    baseline_denominator: np.ndarray | Sequence,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> PairedInterval:
    """The difference of ratios Σ u / Σ v (Suc% = successful / attacked) of method and baseline, each per seed and
    then averaged over seeds, and its paired bootstrap interval; replicates with a zero denominator are dropped."""
    mn, md, bn, bd = paired_rows(method_numerator, method_denominator, baseline_numerator, baseline_denominator)
    kwargs = {"n_resamples": n_resamples, "seed": seed, "confidence": confidence}
    return seedwise_difference(ratio_statistic(mn, md), ratio_statistic(bn, bd), mn.shape, **kwargs)


def weighted_f1_statistic(predictions: np.ndarray, labels: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Draw counts w [B, n] -> [B, seeds]: the class-weighted F1 of predicted label ids [seeds, n] against gold
    ids [n] on each replicate, F1_w = Σ_c (n_c / n)·2·TP_c / (n_c + p_c) (2·TP + FP + FN = n_c + p_c; a term is
    0 when n_c + p_c = 0, as `f1_score(average="weighted", zero_division=0)`)."""
    classes = np.union1d(np.unique(labels), np.unique(predictions))
    gold = [(labels == c).astype(float) for c in classes]
    predicted = [(predictions == c).astype(float) for c in classes]

    def f1(weights: np.ndarray) -> np.ndarray:
        total = np.zeros((weights.shape[0], predictions.shape[0]))
        n = weights.sum(axis=1, keepdims=True)
        for g, p in zip(gold, predicted):
            n_c, p_c, tp = weights @ g[:, None], weights @ p.T, weights @ (p * g).T
            with np.errstate(divide="ignore", invalid="ignore"):
                total += (n_c / n) * np.where(n_c + p_c > 0, 2 * tp / (n_c + p_c), 0.0)
        return total

    return f1


def paired_bootstrap_predictions(
    method_predictions: np.ndarray | Sequence,
    baseline_predictions: np.ndarray | Sequence,
    labels: np.ndarray | Sequence,
    metric: str = "accuracy",
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> PairedInterval:
    """The difference in `metric` ("accuracy" or "f1", class-weighted) of predicted label ids [seeds, n] (paired
    by row) on the same examples with gold label ids `labels` [n], and its paired bootstrap interval."""
    m, b = paired_rows(method_predictions, baseline_predictions)
    gold = np.asarray(labels, dtype=float)
    if gold.shape != (m.shape[1],):
        raise ValueError(f"{m.shape[1]} examples predicted, {gold.shape} gold labels")
    kwargs = {"n_resamples": n_resamples, "seed": seed, "confidence": confidence}
    if metric == "accuracy":
        return paired_bootstrap(m == gold, b == gold, **kwargs)
    if metric != "f1":
        raise ValueError(f"paired intervals are computed for accuracy and f1, not {metric!r}")
    return seedwise_difference(weighted_f1_statistic(m, gold), weighted_f1_statistic(b, gold), m.shape, **kwargs)
