"""A sweep's methods against one baseline, paired by seed and by example: accuracy, accuracy on the examples of
one gold label (HANS non-entailment), and F_bias (Du et al. 2023, "Robustness Challenges", §3.4).

Runs are records as `sweep_summary.collect` (a sweep's output_dir) or `per_example.load_records` (committed
per-example outputs) give them. A method's runs at sparsity s are paired with the baseline's runs at s, else at the
baseline's only sparsity (a dense baseline), seed by seed; a baseline of one run outside the method's seeds is
paired with each seed. For each cell:

    Δ   = (1/S) Σ_s [ metric(method, s) − metric(baseline, s) ]      over the S seeds both ran
    acc = (1/n) Σ_i 1[pred_i = gold_i]                                over the set's n examples (or those of a label)
    F_bias = Δ_run / Δ_teacher,  Δ = (acc_ID − acc_OOD) / acc_ID       (§3.4, `hf_srnets.metrics.relative_bias`)

F_bias divides by the teacher's Δ: the reference run of the run's own seed (each seed's dense model, the one its
pruned models came from), else of the reference's lowest seed (one dense model every seed starts from).

The interval is the 95% percentile interval of `RESAMPLES` paired bootstrap resamples of the examples
(`hf_srnets.metrics.bootstrap`; F_bias resamples the ID and the OOD set each on its own and recomputes the teacher's Δ
on each replicate). Beside it, the seed-level paired t-test over the S per-seed differences
(`hf_srnets.metrics.significance.paired_t_test`), raw and Holm-adjusted over the table's rows, column by column.
The interval says how much Δ depends on which examples were drawn, the t-test how much it moves from seed to seed.
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from ..evaluation.eval_predictions import align, read_eval_predictions
from ..metrics.bootstrap import PairedInterval, UndefinedStatisticError, bootstrap_count_interval
from ..metrics.significance import holm, paired_t_test, seed_signs, verdict_marker
from .pairing import paired_runs, reference_of
from .sweep_summary import BOOTSTRAP_SEED, RESAMPLES, predictions_file

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Column:
    """A table column: `title`, the ID `set_name` (and `ood_set` for F_bias), and an optional gold `label` whose
    examples alone are scored."""

    title: str
    set_name: str
    label: str | None = None
    ood_set: str | None = None

    @property
    def is_f_bias(self) -> bool:
        return self.ood_set is not None


@dataclass(frozen=True)
class Comparison:
    """One cell: the paired interval and the per-seed differences behind the seed-level test."""

    interval: PairedInterval
    seed_differences: tuple[float, ...]

    @property
    def seed_p(self) -> float | None:
        return paired_t_test(self.seed_differences)


def correct(runs: Sequence[dict[str, Any]], set_name: str, label: str | None = None) -> np.ndarray:
    """[runs, n] 1.0 where a run predicted the gold label, on the same examples (those of gold `label` only, when
    given); ValueError when the runs evaluated different examples or `label` names no example."""
    found = [read_eval_predictions(predictions_file(run, set_name)) for run in runs]
    labels, predicted, names = align(found)
    right = (predicted == labels).astype(float)
    if label is None:
        return right
    if label not in names or not (labels == names.index(label)).any():
        raise ValueError(f"no example of {set_name} has the gold label {label!r} (labels: {sorted(set(names))})")
    return right[:, labels == names.index(label)]


def accuracy_comparison(
    method: Sequence[dict[str, Any]], base: Sequence[dict[str, Any]], column: Column, n_resamples: int = RESAMPLES
) -> Comparison:
    """Δ accuracy of `method` minus `base` (runs paired by position) on `column`'s examples."""
    k = len(method)
    hits = correct([*method, *base], column.set_name, column.label)
    n = hits.shape[1]

    def statistic(sums: Sequence[np.ndarray]) -> np.ndarray:
        acc = sums[0] / n  # Σ_i w_i = n on every replicate
        return (acc[:, :k] - acc[:, k:]).mean(axis=1)

    interval = bootstrap_count_interval(statistic, [hits], n_seeds=k, n_resamples=n_resamples, seed=BOOTSTRAP_SEED)
    per_run = hits.mean(axis=1)
    return Comparison(interval, tuple(float(d) for d in per_run[:k] - per_run[k:]))


def f_bias_values(dev: np.ndarray, ood: np.ndarray, teacher_dev: np.ndarray, teacher_ood: np.ndarray) -> np.ndarray:
    """F_bias of each run ([B, S] accuracies) against the teacher's ([B]: one for every run; [B, S]: each run's
    own), NaN where it is undefined (the teacher's Δ ≤ 0 or an accuracy of 0), as a run's own F_bias is not
    reported then."""
    teacher_dev, teacher_ood = (t[:, None] if t.ndim == 1 else t for t in (teacher_dev, teacher_ood))
    with np.errstate(divide="ignore", invalid="ignore"):
        teacher_gap = (teacher_dev - teacher_ood) / teacher_dev
        values = ((dev - ood) / dev) / teacher_gap
    defined = (teacher_dev > 0) & (teacher_gap > 0) & (dev > 0)
    return np.where(defined, values, np.nan)


def f_bias_comparison(
    method: Sequence[dict[str, Any]],
    base: Sequence[dict[str, Any]],
    teacher: dict[str, Any] | Sequence[dict[str, Any]],
    column: Column,
    n_resamples: int = RESAMPLES,
) -> Comparison:
    """Δ F_bias of `method` minus `base` (runs paired by position) on `column`'s two sets, against `teacher`: one
    run for every pair, or one per pair (each pair's seed's dense model)."""
    assert column.ood_set is not None
    k = len(method)
    teachers = [teacher] * k if isinstance(teacher, dict) else list(teacher)
    if len(teachers) != k:
        raise ValueError(f"{len(teachers)} teachers for {k} pairs of runs: give one, or one per pair")
    distinct = list({id(t): t for t in teachers}.values())
    which = [next(i for i, d in enumerate(distinct) if d is t) for t in teachers] * 2  # a pair shares its teacher
    runs = [*method, *base, *distinct]
    hits = [correct(runs, column.set_name), correct(runs, column.ood_set)]

    def f_bias_difference(dev: np.ndarray, ood: np.ndarray) -> np.ndarray:
        teacher_dev, teacher_ood = (x[:, 2 * k :][:, which] for x in (dev, ood))
        values = f_bias_values(dev[:, : 2 * k], ood[:, : 2 * k], teacher_dev, teacher_ood)
        return values[:, :k] - values[:, k:]

    def statistic(sums: Sequence[np.ndarray]) -> np.ndarray:
        dev, ood = (s / c.shape[1] for s, c in zip(sums, hits))  # Σ_i w_i = n on every replicate of each set
        return f_bias_difference(dev, ood).mean(axis=1)

    interval = bootstrap_count_interval(statistic, hits, n_seeds=k, n_resamples=n_resamples, seed=BOOTSTRAP_SEED)
    observed = f_bias_difference(*(c.mean(axis=1)[None, :] for c in hits))[0]
    return Comparison(interval, tuple(float(d) for d in observed))


def run_value(run: dict[str, Any], column: Column, teacher: dict[str, Any] | None) -> float:
    """The column's metric of one run, recomputed from its per-example predictions (F_bias against `teacher`)."""
    if column.is_f_bias:
        assert teacher is not None and column.ood_set is not None
        dev, ood = (correct([run, teacher], name).mean(axis=1) for name in (column.set_name, column.ood_set))
        return float(f_bias_values(dev[None, :1], ood[None, :1], dev[1:], ood[1:])[0, 0])
    return float(correct([run], column.set_name, column.label).mean())


def comparison_rows(
    records: Sequence[dict[str, Any]],
    columns: Sequence[Column],
    baseline: str,
    teacher: dict[str, Any] | Sequence[dict[str, Any]] | None = None,
    n_resamples: int = RESAMPLES,
) -> list[dict[str, Any]]:
    """A row per (method, sparsity) in the records' order: seeds, each column's mean and sample std over the seeds,
    and (for every method but the baseline, with paired seeds) each column's `Comparison` and Holm-adjusted p.
    F_bias columns need `teacher`: the reference's run, or its runs (each run against its seed's, `reference_of`)."""
    teachers = [teacher] if isinstance(teacher, dict) else list(teacher or [])
    groups = list(dict.fromkeys((r["method"], float(r["sparsity"])) for r in records))
    rows = []
    for method, sparsity in groups:
        runs = [r for r in records if r["method"] == method and float(r["sparsity"]) == sparsity]
        row: dict[str, Any] = {"method": method, "sparsity": sparsity, "seeds": [r["seed"] for r in runs]}
        for column in columns:
            if column.is_f_bias and (not teachers or method == teachers[0].get("method")):
                continue
            values = [run_value(r, column, reference_of(r, teachers) if column.is_f_bias else None) for r in runs]
            row[column.title] = (statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else None)
        mine, base = paired_runs(records, method, sparsity, baseline)
        if method != baseline and mine:
            for column in columns:
                if column.is_f_bias and teachers:
                    pair_teachers = [reference_of(r, teachers) for r in mine]
                    try:
                        row[f"Δ {column.title}"] = f_bias_comparison(mine, base, pair_teachers, column, n_resamples)
                    except UndefinedStatisticError:  # the reference's Δ ≤ 0: F_bias has no value, nor its difference
                        logger.warning(
                            f"Δ {column.title} of {method} at {sparsity} is undefined: F_bias is (the reference's "
                            "accuracy does not drop out of distribution); its cell is left empty"
                        )
                elif not column.is_f_bias:
                    row[f"Δ {column.title}"] = accuracy_comparison(mine, base, column, n_resamples)
        rows.append(row)
    for column in columns:
        key = f"Δ {column.title}"
        paired = [row for row in rows if key in row]
        for row, adjusted in zip(paired, holm([row[key].seed_p for row in paired])):
            row[f"{key} Holm"] = adjusted
    return rows


def _mean_cell(value: tuple[float, float | None] | None, scale: float, digits: int) -> str:
    if value is None:
        return "–"
    mean, std = value
    return f"{scale * mean:.{digits}f}" + (f" ± {scale * std:.{digits}f}" if std is not None else "")


def _seed_cell(found: Comparison, adjusted: float | None) -> str:
    signs, p = seed_signs(found.seed_differences), found.seed_p
    if p is None:
        return f"{signs} –"
    return f"{signs} {p:.2g} ({adjusted:.2g})" if adjusted is not None else f"{signs} {p:.2g}"


def _interval_cell(found: Comparison, adjusted: float | None, scale: float, digits: int) -> str:
    interval = found.interval
    marker = verdict_marker(interval.low, interval.high, seed_signs(found.seed_differences), adjusted)
    return interval.format(scale, digits, marker=marker)


def comparison_markdown(rows: Sequence[dict[str, Any]], columns: Sequence[Column], baseline: str) -> str:
    """The rows as two Markdown tables: the means ± std over the seeds, then the paired differences from
    `baseline` with their intervals marked by the verdict rule (`*` decided, `°` not decided) and the seeds' signs
    and p-values (accuracy in points, F_bias as a ratio)."""
    scale = {c.title: (1.0, 3) if c.is_f_bias else (100.0, 1) for c in columns}
    head = ["method", "sparsity", "seeds", *(c.title for c in columns)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [_mean_cell(row.get(c.title), *scale[c.title]) for c in columns]
        lines.append(f"| {row['method']} | {row['sparsity']:.0%} | {len(row['seeds'])} | " + " | ".join(cells) + " |")
    paired = [row for row in rows if any(f"Δ {c.title}" in row for c in columns)]
    if not paired:
        return "\n".join(lines) + "\n"
    head = ["method", "sparsity", "paired seeds"]
    for c in columns:
        head += [f"Δ {c.title} vs {baseline}", "seed signs, p (Holm)"]
    lines += ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in paired:
        cells = []
        for c in columns:
            found: Comparison | None = row.get(f"Δ {c.title}")
            if found is None:
                cells += ["–", "–"]
                continue
            adjusted = row.get(f"Δ {c.title} Holm")
            cells += [_interval_cell(found, adjusted, *scale[c.title]), _seed_cell(found, adjusted)]
        seeds = next(row[f"Δ {c.title}"].interval.n_seeds for c in columns if f"Δ {c.title}" in row)
        lines.append(f"| {row['method']} | {row['sparsity']:.0%} | {seeds} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def parse_column(spec: str) -> Column:
    """`TITLE=SET` (accuracy), `TITLE=SET:LABEL` (accuracy on the examples of gold LABEL) or `TITLE=ID>OOD`
    (F_bias of the ID set against the OOD set); `InputError` naming the forms otherwise."""
    title, sep, target = spec.partition("=")
    forms = "TITLE=SET, TITLE=SET:LABEL or TITLE=ID_SET>OOD_SET (F_bias), e.g. 'HANS non-ent=hans:non-entailment'"
    if not sep or not title.strip() or not target.strip():
        raise InputError(f"column {spec!r}: expected {forms}")
    if ">" in target:
        dev, _, ood = target.partition(">")
        if not dev or not ood:
            raise InputError(f"column {spec!r}: expected {forms}")
        return Column(title.strip(), dev.strip(), ood_set=ood.strip())
    name, _, label = target.partition(":")
    return Column(title.strip(), name.strip(), label.strip() or None)


def column_spec(column: Column) -> str:
    """The inverse of `parse_column`."""
    if column.is_f_bias:
        return f"{column.title}={column.set_name}>{column.ood_set}"
    return f"{column.title}={column.set_name}" + (f":{column.label}" if column.label else "")
