"""The one rule that pairs runs, for every table of a sweep summary and of a report (issue 72).

- `baseline_runs`: the baseline's runs for a method's runs at a sparsity: those at the same sparsity, else all of
  them when the baseline ran at one sparsity only (a full model, or one pruned baseline beside full-size methods).
- `paired_runs`: a method's runs and the baseline's, paired by seed; a baseline of one run outside the method's
  seeds (a model evaluated once, such as the dense model every search starts from) is paired with each of them.
- `reference_of`: the reference run F_bias divides by for a run: the reference's run of the run's seed, else the
  one of the lowest seed. Always a run, never a mean of runs, so a run's own F_bias and the paired interval of a
  difference of F_bias use the same denominator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def baseline_runs(records: Sequence[dict[str, Any]], baseline: str, sparsity: float) -> list[dict[str, Any]]:
    """The baseline's runs to pair with a method's runs at `sparsity` (module docstring)."""
    runs = [r for r in records if r["method"] == baseline]
    same = [r for r in runs if float(r["sparsity"]) == sparsity]
    return same or (runs if len({float(r["sparsity"]) for r in runs}) == 1 else [])


def paired_runs(
    records: Sequence[dict[str, Any]], method: str, sparsity: float, baseline: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The method's runs at `sparsity` and, position by position, the baseline's run each is paired with (module
    docstring); runs of a seed the baseline lacks are left out."""
    found = baseline_runs(records, baseline, sparsity)
    runs = [r for r in records if r["method"] == method and float(r["sparsity"]) == sparsity]
    if len(found) == 1 and all(r["seed"] != found[0]["seed"] for r in runs):
        return runs, found * len(runs)
    base = {r["seed"]: r for r in found}
    mine = [r for r in runs if r["seed"] in base]
    return mine, [base[r["seed"]] for r in mine]


def reference_of(run: dict[str, Any], references: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The reference run `run`'s F_bias divides by: the one of its seed, else the one of the lowest seed."""
    same_seed = [r for r in references if r["seed"] == run["seed"]]
    return same_seed[0] if same_seed else min(references, key=lambda r: r["seed"])
