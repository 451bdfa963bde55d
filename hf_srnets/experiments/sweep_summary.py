"""A sweep's summary: collect each run's `all_results.json`, aggregate over seeds, table and plot (Win-win Fig. 2).

Layout of a sweep directory: `<root>/<method>/s<sparsity>/seed<seed>/all_results.json` plus `sweep_run.json`
(the method, sparsity, seed and settings of the run, `sweep_runs`). Full models (no pruning) have sparsity 0.

With a reference method, each other run's F_bias (Du et al. 2023, §3.4; `hf_srnets.evaluation.f_bias`) is computed
against the reference run of the same seed, else the mean of the reference's runs (`add_f_bias`), and aggregated,
tabled and plotted like the other metrics (as ratios, not percentages).

With a baseline method (the recipe's `baseline`, else its `reference`) and runs that hold per-example predictions
(`eval_predictions/<set>.jsonl`, `hf_srnets.evaluation.eval_predictions`), each other method's accuracy and F1
metrics also get the mean difference from the baseline over the seeds both ran (paired by seed value), on the same
examples, with a paired bootstrap 95% interval over the evaluation examples (10,000 resamples, seeded;
`hf_srnets.metrics.bootstrap`) and whether 0 lies outside it, beside the seed-level paired t-test, raw and
Holm-adjusted over the table's rows (`hf_srnets.metrics.significance`; `add_paired_intervals`, `paired_table`).
Committed per-example outputs (`hf_srnets.experiments.per_example`) give the same tables through `report`.
"""

from __future__ import annotations

import csv
import math
import os
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..data.splits import ood_eval_sets
from ..data.tasks import TaskSpec, display_name, id_set_name, known_set_names
from ..data.transforms import DataTransform
from ..errors import InputError
from ..evaluation import primary_metric
from ..evaluation.eval_predictions import (
    COMMITTED_SUFFIX,
    PREDICTIONS_DIR,
    align,
    predictions_path,
    read_eval_predictions,
)
from ..evaluation.f_bias import f_bias_results
from ..metrics import METRICS
from ..metrics.bootstrap import PairedInterval, format_interval, paired_bootstrap_predictions
from ..metrics.significance import (
    VERDICT_POLICY,
    holm,
    is_decided,
    paired_t_test,
    seed_signs,
    verdict_marker,
)
from ..run_files import RESULTS_NAME, read_json_object, replaced_file
from .pairing import baseline_runs, paired_runs, reference_of
from .sweep_runs import META_KEYS, RUN_META, read_meta

# the paired bootstrap of every table: 10,000 resamples drawn from numpy.random.default_rng(0)
RESAMPLES = 10_000
BOOTSTRAP_SEED = 0


def default_metrics(
    task: TaskSpec,
    ood_files: Sequence[str] = (),
    no_default_ood: bool = False,
    ood_labels: Sequence[str] = (),
    transform: DataTransform | None = None,
) -> list[str]:
    """The all_results.json keys a sweep of `task` reports by default: the ID metric, then each OOD set's primary
    metric (accuracy on HANS-style sets), for the sets the run evaluates (`hf_srnets.data.splits.ood_eval_sets`:
    the task's, then every `--ood_file NAME=PATH`, a NAME of a default set replacing it, then the sets of the
    `--data_transform`)."""
    ood_sets = ood_eval_sets(task, ood_files, no_default_ood, ood_labels)
    ood_sets = [*ood_sets, *(transform.eval_sets(task) if transform is not None else ())]
    keys = [f"eval_{id_set_name(task)}_{task.metric}"]
    return keys + [f"eval_{s.name}_{primary_metric(task, s)}" for s in ood_sets]


def collect(root: str) -> list[dict[str, Any]]:
    """One record per finished run: its meta (method, sparsity, seed) merged with its results. A damaged record
    (`sweep_run.json` or results empty, cut or not a JSON object) is an `InputError` naming it and the fix."""
    records = []
    for dirpath, _, filenames in os.walk(root):
        if RUN_META in filenames and RESULTS_NAME in filenames:
            meta = {key: value for key, value in (read_meta(dirpath) or {}).items() if key in META_KEYS}
            results = read_json_object(os.path.join(dirpath, RESULTS_NAME))
            if results is None:
                raise InputError(
                    f"{os.path.join(dirpath, RESULTS_NAME)} is empty, cut or not a JSON object, so that run did not "
                    f"finish: run the sweep again without --aggregate_only to run it again, or delete {dirpath}"
                )
            if "sparsity" in results:  # the measured one; the meta's sparsity is the planned grid point
                results["sparsity_measured"] = results.pop("sparsity")
            records.append({**results, **meta, "run_dir": dirpath})
    return sorted(records, key=lambda r: (r["method"], r["sparsity"], r["seed"]))


def aggregate(records: Sequence[dict[str, Any]], metrics: Sequence[str]) -> list[dict[str, Any]]:
    """Mean and sample standard deviation (ddof = 1; 0 for a single seed) per (method, sparsity) and metric."""
    groups: dict[tuple[str, float], list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        groups[(record["method"], float(record["sparsity"]))].append(record)
    rows = []
    for (method, sparsity), group in sorted(groups.items()):
        row: dict[str, Any] = {"method": method, "sparsity": sparsity, "n_seeds": len(group)}
        for metric in metrics:
            values = [float(r[metric]) for r in group if metric in r]
            if not values:
                continue
            mean = sum(values) / len(values)
            var = sum((v - mean) ** 2 for v in values) / (len(values) - 1) if len(values) > 1 else 0.0
            row[f"{metric}_mean"] = mean
            row[f"{metric}_std"] = math.sqrt(var)
        rows.append(row)
    return rows


def compare_to_reference(
    rows: Sequence[dict[str, Any]], metrics: Sequence[str], reference: str
) -> list[dict[str, Any]]:
    """Each row against the reference method (a full model): every metric's difference of means
    (`<metric>_delta`) and the first metric, the ID one, as a fraction of the reference's (`<metric>_retained`).

    These are the Win-win criteria (§4.2.2): a subnetwork "preserves 95% of the full model's ID performance"
    and improves OOD over it. Rows come back unchanged while the reference has no finished run.
    """
    references = [r for r in rows if r["method"] == reference]
    if len(references) > 1:
        raise InputError(f"the reference {reference!r} must be one full model (sparsity 0), found {len(references)}")
    if not references:
        return [dict(r) for r in rows]
    ref = references[0]
    compared = []
    for row in rows:
        row = dict(row)
        for i, metric in enumerate(metrics):
            key = f"{metric}_mean"
            if key in row and key in ref:
                row[f"{metric}_delta"] = row[key] - ref[key]
                if i == 0 and ref[key]:
                    row[f"{metric}_retained"] = row[key] / ref[key]
        compared.append(row)
    return compared


def is_ratio(metric: str) -> bool:
    """F_bias keys are ratios (1 = as biased as the reference), not fractions shown as percentages."""
    return metric.startswith("f_bias")


def evaluated_sets(record: dict[str, Any], id_metric: str) -> tuple[str | None, list[str]]:
    """The ID set (the one `id_metric`, the recipe's first metric, is of) and the OOD sets of a run's results:
    the sets with an example count `eval_<set>_examples` and an accuracy; the ID set's easy/hard parts are not sets."""
    names = [k[len("eval_") : -len("_examples")] for k in record if k.startswith("eval_") and k.endswith("_examples")]
    names = [n for n in names if f"eval_{n}_accuracy" in record]
    matching = [n for n in names if id_metric.startswith(f"eval_{n}_")]
    if not matching:
        return None, []
    id_name = max(matching, key=len)
    parts = {f"{id_name}_easy", f"{id_name}_hard"}
    return id_name, [n for n in names if n != id_name and n not in parts]


def add_f_bias(records: list[dict[str, Any]], reference: str, id_metric: str) -> list[str]:
    """Add F_bias keys to every run that is not of the `reference` method: against the reference run of the same
    seed, else that of the lowest seed (`pairing.reference_of`). Returns the F_bias keys added (`f_bias` first)."""
    refs = [r for r in records if r["method"] == reference]
    if not refs:
        return []
    found: list[str] = []
    for record in records:
        if record["method"] == reference:
            continue
        id_name, ood = evaluated_sets(record, id_metric)
        if id_name is None or not ood:
            continue
        ref = reference_of(record, refs)
        values = f_bias_results(record, ref, id_name, ood, f"the {reference} run of seed {ref['seed']}")
        record.update(values)
        found += [k for k, v in values.items() if is_ratio(k) and isinstance(v, float) and k not in found]
    return sorted(found, key=lambda k: (k != "f_bias", k == "f_bias_mean", k))


def sweep_f_bias_table(rows: Sequence[dict[str, Any]], metrics: Sequence[str], reference: str) -> str:
    """The aggregated F_bias keys as a Markdown table, `mean ± std` with 3 decimals; "" without any."""
    if not metrics:
        return ""
    lines = [
        "| method | sparsity | seeds | " + " | ".join(metrics) + " |",
        "|---|---|---|" + "---|" * len(metrics),
    ]
    for row in rows:
        if row["method"] == reference:
            continue
        cells = [f"{row[f'{m}_mean']:.3f} ± {row[f'{m}_std']:.3f}" if f"{m}_mean" in row else "" for m in metrics]
        lines.append(f"| {row['method']} | {100 * row['sparsity']:g}% | {row['n_seeds']} | " + " | ".join(cells) + " |")
    return (
        f"\nF_bias = Δ_run / Δ_{reference}, Δ = (F_dev − F_OOD) / F_dev on accuracy (Du et al. 2023, §3.4), each "
        f"run against the {reference} run of its seed (else of the lowest seed); > 1: more biased than {reference}.\n\n"
        + "\n".join(lines)
        + "\n"
    )


def interval_metric(metric: str, set_names: Sequence[str]) -> tuple[str, str] | None:
    """(set, "accuracy" or "f1") of a results key `eval_<set>_<accuracy|f1>` of one of `set_names`, else None
    (cells such as `eval_hans_entailment_accuracy` and F_bias get no interval here)."""
    for name in sorted(set_names, key=len, reverse=True):
        for kind in ("accuracy", "f1"):
            if metric == f"eval_{name}_{kind}":
                return name, kind
    return None


def predictions_file(record: dict[str, Any], set_name: str) -> str:
    """A run's per-example predictions of `set_name`: the file its record names (`predictions_files`, as committed
    per-example outputs give, `hf_srnets.experiments.per_example`), else `<run_dir>/eval_predictions/<set>.jsonl`. A
    committed run without the set's file gets the path where it belongs, `<run_dir>/<set>.jsonl.gz`, so that reading
    it names the missing file (not one under an `eval_predictions/` a results folder never holds)."""
    files = record.get("predictions_files")
    if files is None:
        return predictions_path(record["run_dir"], set_name)
    return files.get(set_name) or os.path.join(record["run_dir"], set_name + COMMITTED_SUFFIX)


def predicted_sets(record: dict[str, Any]) -> list[str]:
    """The sets a run holds per-example predictions of."""
    if "predictions_files" in record:
        return sorted(record["predictions_files"])
    folder = os.path.join(record["run_dir"], PREDICTIONS_DIR)
    return sorted(n.removesuffix(".jsonl") for n in os.listdir(folder)) if os.path.isdir(folder) else []


def paired_predictions(
    method_runs: Sequence[dict[str, Any]], base_runs: Sequence[dict[str, Any]], metric: str, set_name: str, kind: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gold label ids [n] and the predicted ids [seeds, n] of the method's and of the baseline's runs (paired by
    row), from their prediction files; raises ValueError when a file is missing, the runs evaluated different
    examples, or a file does not give its run's reported value (it is not that run's)."""
    runs = [*method_runs, *base_runs]
    paths = [predictions_file(r, set_name) for r in runs]
    missing = [p for p in paths if not os.path.isfile(p)]
    if missing:
        raise ValueError(f"no per-example predictions {missing[0]}")
    labels, predicted, _ = align([read_eval_predictions(p) for p in paths])
    for path, run, row in zip(paths, runs, predicted):
        if metric in run and not math.isclose(METRICS[kind](row, labels), float(run[metric]), abs_tol=1e-6):
            raise ValueError(f"{path} does not give the run's {metric}")
    k = len(method_runs)
    return labels, predicted[:k], predicted[k:]


def paired_interval(
    method_runs: Sequence[dict[str, Any]],
    base_runs: Sequence[dict[str, Any]],
    metric: str,
    set_name: str,
    kind: str,
    n_resamples: int = RESAMPLES,
) -> PairedInterval:
    """The paired bootstrap interval of `metric` between runs paired by seed, from their prediction files
    (`paired_predictions`, which says when it raises ValueError)."""
    labels, method, base = paired_predictions(method_runs, base_runs, metric, set_name, kind)
    return paired_bootstrap_predictions(method, base, labels, kind, n_resamples=n_resamples, seed=BOOTSTRAP_SEED)


def seed_differences(
    method_runs: Sequence[dict[str, Any]], base_runs: Sequence[dict[str, Any]], metric: str, set_name: str, kind: str
) -> list[float]:
    """The per-seed differences of `metric`, method − baseline, each seed's metric recomputed from its prediction
    file: what the seed-level t-test (`hf_srnets.metrics.significance`) and the verdict rule read."""
    labels, method, base = paired_predictions(method_runs, base_runs, metric, set_name, kind)
    return [METRICS[kind](m, labels) - METRICS[kind](b, labels) for m, b in zip(method, base)]


def add_paired_intervals(
    rows: Sequence[dict[str, Any]],
    records: Sequence[dict[str, Any]],
    metrics: Sequence[str],
    baseline: str,
    n_resamples: int = RESAMPLES,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Each row (method, sparsity) but the baseline's, with `<metric>_paired_diff`, `_paired_low`, `_paired_high`,
    `_paired_seeds`, `_paired_outside_noise`, the seed-level `_seed_p` and its Holm adjustment over the rows
    `_seed_p_holm`, the per-seed signs `_seed_signs` and the verdict `_decided` (`significance.is_decided`) for every
    accuracy/F1 metric whose runs hold prediction files (module docstring); and notes
    saying what could not be paired and why."""
    out, notes = [], []
    for row in rows:
        row = dict(row)
        out.append(row)
        if row["method"] == baseline:
            continue
        runs, paired = paired_runs(records, row["method"], row["sparsity"], baseline)
        where = f"{row['method']} at {100 * row['sparsity']:g}%"
        if not baseline_runs(records, baseline, row["sparsity"]):
            notes.append(f"{where}: no finished run of {baseline} to pair with")
            continue
        if not runs:
            notes.append(f"{where}: no seed in common with {baseline}")
            continue
        sets = predicted_sets(runs[0])
        if not sets:
            notes.append(f"{where}: its runs hold no per-example predictions ({PREDICTIONS_DIR}/)")
            continue
        for metric in metrics:
            parsed = interval_metric(metric, sets)
            if parsed is None:
                continue
            try:
                interval = paired_interval(runs, paired, metric, *parsed, n_resamples=n_resamples)
            except ValueError as err:
                notes.append(f"{where}, {metric}: {err}")
                continue
            row["paired_baseline"] = baseline
            row[f"{metric}_paired_diff"], row[f"{metric}_paired_seeds"] = interval.difference, interval.n_seeds
            row[f"{metric}_paired_low"], row[f"{metric}_paired_high"] = interval.low, interval.high
            row[f"{metric}_paired_outside_noise"] = interval.excludes_zero
            differences = seed_differences(runs, paired, metric, *parsed)
            row[f"{metric}_seed_p"], row[f"{metric}_seed_signs"] = paired_t_test(differences), seed_signs(differences)
    for metric in metrics:  # Holm over the table's rows, one family per metric column
        holding = [r for r in out if f"{metric}_paired_diff" in r]
        for r, adjusted in zip(holding, holm([r[f"{metric}_seed_p"] for r in holding])):
            r[f"{metric}_seed_p_holm"] = adjusted
            low, high, signs = r[f"{metric}_paired_low"], r[f"{metric}_paired_high"], r[f"{metric}_seed_signs"]
            r[f"{metric}_decided"] = is_decided(low, high, signs, adjusted)
    return out, notes


def format_p(p: float | None) -> str:
    """A p-value with 2 significant digits (`0.074`, `0.0031`), `–` when undefined."""
    return "–" if p is None else f"{p:.2g}" if p >= 1e-4 else "< 0.0001"


def paired_cells(row: dict[str, Any], metric: str) -> list[str]:
    """The interval cell, marked by the verdict rule, and the seed-level cell `signs p (Holm p)` of one metric of a
    row, empty when not paired."""
    if f"{metric}_paired_diff" not in row:
        return ["", ""]
    low, high, signs = row[f"{metric}_paired_low"], row[f"{metric}_paired_high"], row[f"{metric}_seed_signs"]
    p, adjusted = row.get(f"{metric}_seed_p"), row.get(f"{metric}_seed_p_holm")
    marker = verdict_marker(low, high, signs, adjusted)
    interval = format_interval(row[f"{metric}_paired_diff"], low, high, marker=marker)
    return [interval, seed_cell(signs, p, adjusted)]


def seed_cell(signs: str, p: float | None, adjusted: float | None) -> str:
    """The seed-level evidence of one cell: the per-seed signs and the t-test's p (Holm-adjusted in brackets)."""
    return f"{signs} " + (f"{format_p(p)} ({format_p(adjusted)})" if p is not None else "–")


def paired_policy(baseline: str, n_resamples: int = RESAMPLES) -> str:
    """What the paired table's columns are, its resamples and seed, and the policy for its many comparisons."""
    return (
        f"Paired differences from {baseline}, in points: the mean over the seeds both ran (paired by seed value) "
        f"of method − {baseline} on the same evaluation examples; [low, high] the 95% percentile interval of "
        f"{n_resamples:,} paired bootstrap resamples of the examples (numpy default_rng({BOOTSTRAP_SEED}); Efron & "
        "Tibshirani 1993; Koehn 2004), seeds held fixed. Seed cell: the per-seed differences' signs, then the "
        "two-sided paired t-test over them (seed level, S − 1 degrees of freedom), raw and, in brackets, "
        "Holm-adjusted over this table's rows (one family per column). "
        f"{VERDICT_POLICY} The intervals are unadjusted: each is a 95% interval for its own comparison.\n\n"
    )


def paired_table(
    rows: Sequence[dict[str, Any]],
    metrics: Sequence[str],
    baseline: str,
    notes: Sequence[str] = (),
    n_resamples: int = RESAMPLES,
) -> str:
    """The rows' paired differences from `baseline` as a Markdown table, `Δ [low, high]` in points marked by the
    verdict rule (`*` decided, `°` not decided), beside the seeds' signs and p-value (raw and Holm-adjusted); "" when
    no row has one (and no note says why)."""
    shown = [m for m in metrics if any(f"{m}_paired_diff" in r for r in rows)]
    lines = []
    if shown:
        heads = [h for m in shown for h in (f"Δ {m} [95% CI]", f"{m} seed signs, p (Holm)")]
        lines = [
            "| method | sparsity | paired seeds | " + " | ".join(heads) + " |",
            "|---|---|---|" + "---|" * len(heads),
        ]
    for row in rows:
        if not any(f"{m}_paired_diff" in row for m in shown):
            continue
        cells = [c for m in shown for c in paired_cells(row, m)]
        seeds = max(row[f"{m}_paired_seeds"] for m in shown if f"{m}_paired_seeds" in row)
        lines.append(f"| {row['method']} | {100 * row['sparsity']:g}% | {seeds} | " + " | ".join(cells) + " |")
    if not lines and not notes:
        return ""
    text = "\n" + paired_policy(baseline, n_resamples) + "\n".join(lines) + ("\n" if lines else "")
    return text + "".join(f"\n- no interval: {note}" for note in notes) + ("\n" if notes else "")


def write_csv(rows: Sequence[dict[str, Any]], path: str) -> None:
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    with replaced_file(path, newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def markdown_table(rows: Sequence[dict[str, Any]], metrics: Sequence[str], reference: str | None = None) -> str:
    """The aggregated rows as a Markdown table of percentages, `mean ± std` per metric; with a `reference`
    (rows from `compare_to_reference`), a second table of each method against it."""
    lines = [
        "| method | sparsity | seeds | " + " | ".join(metrics) + " |",
        "|---|---|---|" + "---|" * len(metrics),
    ]
    for row in rows:
        cells = []
        for metric in metrics:
            if f"{metric}_mean" not in row:
                cells.append("")
                continue
            cells.append(f"{100 * row[f'{metric}_mean']:.2f} ± {100 * row[f'{metric}_std']:.2f}")
        head = f"| {row['method']} | {100 * row['sparsity']:g}% | {row['n_seeds']} | "
        lines.append(head + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n\nIn %: mean ± sample standard deviation over seeds.\n"
    if reference is None or not metrics:
        return text
    if not any(f"{metrics[0]}_retained" in row for row in rows):
        return text + f"\nNo finished run of the reference {reference!r} to compare with.\n"
    columns = [f"{metrics[0]}: % of {reference}"] + [f"Δ {m}" for m in metrics]
    lines = [
        f"\n| method | sparsity | seeds | {' | '.join(columns)} |",
        "|---|---|---|" + "---|" * len(columns),
    ]
    for row in rows:
        if row["method"] == reference:
            continue
        retained = row.get(f"{metrics[0]}_retained")
        cells = [f"{100 * retained:.1f}%" if retained is not None else ""]
        cells += [f"{100 * row[f'{m}_delta']:+.2f}" if f"{m}_delta" in row else "" for m in metrics]
        lines.append(f"| {row['method']} | {100 * row['sparsity']:g}% | {row['n_seeds']} | " + " | ".join(cells) + " |")
    return (
        text
        + "\n".join(lines)
        + f"\n\nAgainst {reference}: the first metric as a percentage of its mean, and every metric's difference"
        " of means in points.\n"
    )


def metric_title(metric: str) -> str:
    """Plot title of an all_results.json key, with the set's name as the papers write it (`tasks.display_name`):
    `eval_hans_non-entailment_accuracy` -> `HANS non-entailment accuracy`, `eval_paws_qqp_f1` -> `PAWS-QQP f1`."""
    if is_ratio(metric):  # f_bias, f_bias_<set>, f_bias_mean
        rest = metric.removeprefix("f_bias").removeprefix("_")
        return "F_bias" + {"": "", "mean": " (mean of sets)"}.get(rest, f" {display_name(rest)}")
    name = metric.removeprefix("eval_")
    known = next((n for n in known_set_names() if name.startswith(f"{n}_")), None)
    dataset, _, rest = (known, "_", name[len(known) + 1 :]) if known else name.partition("_")
    if not rest:
        return name.replace("_", " ")
    return f"{display_name(dataset)} {rest.replace('_', ' ')}"


def plot(
    rows: Sequence[dict[str, Any]], metrics: Sequence[str], path: str, titles: Sequence[str] | None = None
) -> None:
    """One panel per metric: a line per pruning method against sparsity, its ± std shaded; full models (sparsity 0)
    as horizontal dashed references with their ± std band, as in the paper's Fig. 2. F_bias panels are ratios
    with a dotted line at 1 (as biased as the reference)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ncols = 2 if len(metrics) == 4 else min(len(metrics), 3)
    nrows = math.ceil(len(metrics) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5 * ncols, 4 * nrows), squeeze=False)
    panels = list(axes.flat)
    for ax in panels[len(metrics) :]:
        ax.set_visible(False)
    methods = sorted({r["method"] for r in rows})
    for ax, metric, title in zip(panels, metrics, titles or [metric_title(m) for m in metrics]):
        scale = 1.0 if is_ratio(metric) else 100.0
        if is_ratio(metric):
            ax.axhline(1.0, linestyle=":", color="black", linewidth=1)
        for i, method in enumerate(methods):
            points = [r for r in rows if r["method"] == method and f"{metric}_mean" in r]
            color = f"C{i}"
            if points and all(r["sparsity"] == 0 for r in points):
                mean, std = scale * points[0][f"{metric}_mean"], scale * points[0][f"{metric}_std"]
                ax.axhline(mean, linestyle="--", color=color, label=method)
                ax.axhspan(mean - std, mean + std, color=color, alpha=0.12, linewidth=0)
                continue
            points = sorted(points, key=lambda r: r["sparsity"])
            xs = [100 * r["sparsity"] for r in points]
            ys = [scale * r[f"{metric}_mean"] for r in points]
            errs = [scale * r[f"{metric}_std"] for r in points]
            if len(points) == 1:  # a band needs two sparsities: an error bar instead
                ax.errorbar(xs, ys, yerr=errs, marker="o", capsize=4, color=color, label=method)
                continue
            ax.plot(xs, ys, marker="o", color=color, label=method)
            ax.fill_between(
                xs, [y - e for y, e in zip(ys, errs)], [y + e for y, e in zip(ys, errs)], color=color, alpha=0.2
            )
        ax.set_xlabel("sparsity (%)")
        ax.set_ylabel(title if is_ratio(metric) else f"{title} (%)")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def paired_plot_rows(rows: Sequence[dict[str, Any]], metric: str) -> list[tuple[str, float, float, float]]:
    """(label, Δ, low, high) in points for each row with a paired interval of `metric`, in the rows' order; the
    label names the method and, for a pruned one, its sparsity (`mask_poe 30%`)."""
    out = []
    for row in rows:
        if f"{metric}_paired_diff" not in row:
            continue
        label = row["method"] + (f" {100 * row['sparsity']:g}%" if row["sparsity"] else "")
        values = (row[f"{metric}_paired_diff"], row[f"{metric}_paired_low"], row[f"{metric}_paired_high"])
        out.append((label, *(100.0 * v for v in values)))
    return out


def plot_paired(rows: Sequence[dict[str, Any]], metrics: Sequence[str], baseline: str, path: str) -> bool:
    """One panel per metric: each method's paired difference from `baseline` (points) with its 95% interval as a
    horizontal bar, a method per line, the line at 0 dashed; filled markers for intervals that exclude 0. Written
    only when some row has an interval; returns whether it was."""
    panels = [(m, paired_plot_rows(rows, m)) for m in metrics]
    panels = [(m, points) for m, points in panels if points]
    if not panels:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    height = 1.2 + 0.35 * max(len(points) for _, points in panels)
    fig, axes = plt.subplots(1, len(panels), figsize=(4.5 * len(panels), height), squeeze=False, sharey=True)
    for ax, (metric, points) in zip(axes[0], panels):
        ys = list(range(len(points)))[::-1]
        for y, (_, diff, low, high) in zip(ys, points):
            outside = low > 0 or high < 0
            ax.errorbar(
                diff, y, xerr=[[diff - low], [high - diff]], fmt="o", capsize=3, color="C0",
                markerfacecolor="C0" if outside else "white",
            )  # fmt: skip
        ax.axvline(0.0, linestyle="--", color="black", linewidth=1)
        ax.set_yticks(ys, [label for label, *_ in points])
        ax.set_xlabel(f"Δ {metric_title(metric)} vs {baseline} (points)")
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(f"Paired differences from {baseline}, 95% bootstrap intervals (filled: excludes 0)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def is_eval_runtime(key: str) -> bool:
    """An `eval_<set>_runtime` key of a run's results: the seconds one evaluated set took."""
    return key.startswith("eval_") and key.endswith("_runtime")


def runtime_seconds(records: Sequence[dict[str, Any]]) -> tuple[float, float]:
    """The seconds of training (`train_runtime`) and of evaluation (every `eval_*_runtime`) summed over the runs."""
    train = sum(float(r.get("train_runtime", 0.0)) for r in records)
    evaluation = sum(float(v) for r in records for k, v in r.items() if is_eval_runtime(k))
    return train, evaluation


def cpus_part(records: Sequence[dict[str, Any]]) -> str:
    """The CPUs the runs computed on (`cpu` of their results) with how many runs each, and how many runs did not
    record theirs; empty when none did (GPU runs and runs made before `cpu` was recorded)."""
    counts = Counter(str(r["cpu"]) for r in records if "cpu" in r)
    if not counts:
        return ""
    missing = sum("cpu" not in r for r in records)
    parts = [f"{cpu}: {n} runs" for cpu, n in sorted(counts.items())]
    return "CPU " + "; ".join(parts + ([f"not recorded: {missing} runs"] if missing else []))


def budget_line(records: Sequence[dict[str, Any]]) -> str:
    """What the finished runs cost, from their results: the number of runs, the hours of training (`train_runtime`)
    and of evaluation (every `eval_*_runtime`, one per evaluated set) summed over the runs, the torch threads and
    precisions they ran with, and the CPUs they recorded (`cpus_part`). A resumed run's `train_runtime` includes the
    time before its resume (`hf_srnets.training.resumed_loss`) unless its checkpoint lacked the record, which the line
    then says."""
    train, evaluation = runtime_seconds(records)
    threads = sorted({int(r["torch_num_threads"]) for r in records if "torch_num_threads" in r})
    precisions = sorted({str(r["precision"]) for r in records if "precision" in r})
    where = ", ".join(
        part
        for part in (
            f"torch threads {'/'.join(map(str, threads))}" if threads else "",
            "/".join(precisions),
            cpus_part(records),
        )
        if part
    )
    partial = sum("train_runtime_from_step" in r for r in records)
    undercount = (
        f" {partial} of the runs resumed from a checkpoint that did not record the time before it: only their time "
        "after the resume is counted."
        if partial
        else ""
    )
    return (
        f"Budget: {len(records)} runs, {train / 3600:.2f} h of training and {evaluation / 3600:.2f} h of evaluation "
        f"(summed runtimes{'; ' + where if where else ''}).{undercount}\n"
    )
