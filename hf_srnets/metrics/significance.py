"""Seed-level tests and the multiple-comparison policy that sit beside the example-level bootstrap intervals.

The paired bootstrap (`hf_srnets.metrics.bootstrap`) holds the seeds fixed: it says how much a difference depends on
which evaluation examples were drawn. Whether it holds from seed to seed is a test over the per-seed differences
d_s = metric(method, seed s) − metric(baseline, seed s), s = 1..S:

    paired t-test   t = mean(d) / (sd(d) / √S), sd with ddof = 1, two-sided p from Student's t with S − 1 degrees
                    of freedom (Abramowitz & Stegun 26.7.3–4, closed forms for integer degrees of freedom)

Undefined (None) with fewer than two seeds, or when every d_s is equal (sd = 0). With S = 3 seeds the test has 2
degrees of freedom: t must exceed 4.303 for p < 0.05.

Many rows of one table are many comparisons. The policy: the bootstrap intervals are per comparison (unadjusted
95%), and the seed-level p-values are given raw and Holm-adjusted over the rows of a table's column (Holm, "A Simple
Sequentially Rejective Multiple Test Procedure", Scand. J. Statist. 1979): with the m p-values sorted,
p_(1) ≤ ... ≤ p_(m), the adjusted p_(i) is max_{j ≤ i} min(1, (m − j + 1)·p_(j)).

The verdict rule (issue 72) every paired table applies to a cell: a difference is **decided** (`*`) only when the
pooled example-level interval excludes 0 *and* the seeds agree: every per-seed difference d_s has the interval's sign
(a seed with d_s = 0 does not agree), or the seed-level test rejects at Holm-adjusted p < `ALPHA`. An interval that
excludes 0 while the seeds disagree is **not decided** (`°`): the difference is outside the noise of the example
sample for these seeds, but another seed could reverse it. With one seed the seeds agree by definition; the table's
"paired seeds" column says how many there were.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def student_t_two_sided(t: float, df: int) -> float:
    """P(|T| ≥ |t|) for Student's t with `df` (a positive integer) degrees of freedom (module docstring)."""
    if df < 1:
        raise ValueError(f"Student's t needs at least one degree of freedom, got {df}")
    theta = math.atan(abs(t) / math.sqrt(df))
    c2, s = math.cos(theta) ** 2, math.sin(theta)
    if df % 2:  # A&S 26.7.3: A = (2/π)[θ + sinθ cosθ (1 + 2/3 cos²θ + ... + (2·4···(ν−3))/(1·3···(ν−2)) cos^(ν−3)θ)]
        term, total = 1.0, 1.0 if df > 1 else 0.0
        for k in range(1, (df - 1) // 2):
            term *= (2 * k) / (2 * k + 1) * c2
            total += term
        a = 2 / math.pi * (theta + s * math.cos(theta) * total)
    else:  # A&S 26.7.4: A = sinθ [1 + 1/2 cos²θ + (1·3)/(2·4) cos⁴θ + ... + (1·3···(ν−3))/(2·4···(ν−2)) cos^(ν−2)θ]
        term, total = 1.0, 1.0
        for k in range(1, df // 2):
            term *= (2 * k - 1) / (2 * k) * c2
            total += term
        a = s * total
    return min(1.0, max(0.0, 1.0 - a))


def paired_t_test(differences: Sequence[float]) -> float | None:
    """The two-sided p-value of the paired t-test over per-seed differences (module docstring); None when undefined."""
    d = [float(x) for x in differences]
    n = len(d)
    if n < 2:
        return None
    mean = sum(d) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    if sd <= 1e-15 * max(1.0, abs(mean)):
        return None
    return student_t_two_sided(mean / (sd / math.sqrt(n)), n - 1)


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted p-values in the input order (module docstring); None entries are left out of the family."""
    present = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(present)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for j, (p, i) in enumerate(present):
        running = max(running, min(1.0, (m - j) * p))
        adjusted[i] = running
    return adjusted


ALPHA = 0.05
DECIDED, NOT_DECIDED = "*", "°"
VERDICT_POLICY = (
    "* decided: the interval excludes 0 and every seed's difference has its sign (the signs, in seed order, lead the "
    f"seed cell), or the seed-level Holm p < {ALPHA:g}; ° not decided: the interval excludes 0 but the seeds do not "
    "agree, so another seed could reverse it."
)


def seed_signs(differences: Sequence[float]) -> str:
    """The per-seed differences' signs in seed order, e.g. `++−` (`0` for no difference)."""
    return "".join("+" if d > 0 else "−" if d < 0 else "0" for d in differences)


def is_decided(low: float, high: float, signs: str, holm_p: float | None) -> bool:
    """The verdict rule (module docstring): the interval [low, high] excludes 0 and the seeds' `signs` (`seed_signs`)
    all have its sign, or the seed-level Holm-adjusted p is below `ALPHA`."""
    if not (low > 0 or high < 0):
        return False
    agree = bool(signs) and set(signs) == {"+" if low > 0 else "−"}
    return agree or (holm_p is not None and holm_p < ALPHA)


def verdict_marker(low: float, high: float, signs: str, holm_p: float | None) -> str:
    """`*` decided, `°` an interval that excludes 0 with the seeds not agreeing (not decided), "" otherwise."""
    if not (low > 0 or high < 0):
        return ""
    return DECIDED if is_decided(low, high, signs, holm_p) else NOT_DECIDED
