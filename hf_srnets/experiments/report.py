"""Every table, interval and plot of an experiment, regenerated from its committed per-example outputs.

From `results/<experiment>/per_example/` (`hf_srnets.experiments.per_example`) it writes, beside that folder:

    report.md    the metrics recomputed from the files (mean ± sample std over seeds), each method against the
                 reference (% of its ID metric, differences of means), F_bias against the reference when there is
                 one, and the paired table against the baseline: 10,000 seeded paired bootstrap resamples of the
                 examples, the seeds' signs and the seed-level paired t-test beside each interval, raw and
                 Holm-adjusted over the table's rows, each interval marked decided (`*`) or not decided (`°`) by
                 the verdict rule (`hf_srnets.metrics.significance`; the file states both policies)
                 and, where the runs kept it (`per_example.run_cost`), the compute they took: the sweep's budget
                 line and the hours per method
    report.csv   the same rows, one per (method, sparsity)
    report.png   the metrics against sparsity; report_paired.png: each paired difference with its interval

The tables come from the code that writes a sweep's summary.md (`hf_srnets.experiments.sweep_summary`), so a sweep
and its committed outputs give the same table. Each run's metric is recomputed from its file and must equal the value
the run reported (`run.json`): a file that does not is refused.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

from ..arguments.report_arguments import ReportArguments
from ..errors import InputError
from ..evaluation.eval_predictions import align, read_eval_predictions
from ..metrics import METRICS
from ..metrics.significance import VERDICT_POLICY
from ..run_files import replaced_file
from .paired_table import Column, column_spec, comparison_markdown, comparison_rows, parse_column
from .per_example import MANIFEST, PER_EXAMPLE_DIR, collect_per_example, load_records, read_manifest
from .summary_pipeline import plot_summary, summarize_runs, summary_markdown
from .sweep_summary import (
    RESAMPLES,
    budget_line,
    interval_metric,
    is_eval_runtime,
    runtime_seconds,
    write_csv,
)

REPORT_MARKDOWN = "report.md"
REPORT_TABLE = "report.csv"
REPORT_PLOT = "report.png"
REPORT_PAIRED_PLOT = "report_paired.png"


def label_metric(metric: str, files: dict[str, str]) -> tuple[str, str] | None:
    """(set, gold label) of a per-label accuracy `eval_<set>_<label>_accuracy` (HANS's entailment /
    non-entailment cells) of one of the sets, else None."""
    for name in sorted(files, key=len, reverse=True):
        prefix = f"eval_{name}_"
        if metric.startswith(prefix) and metric.endswith("_accuracy") and len(metric) > len(prefix) + len("_accuracy"):
            return name, metric[len(prefix) : -len("_accuracy")]
    return None


def metric_from_file(metric: str, files: dict[str, str]) -> tuple[float, int, str] | None:
    """(value, examples, set) of `metric` computed from a run's per-example files: a set's accuracy or F1, or the
    accuracy on the examples of one gold label; None for a metric the files do not give (F_bias, confidences)."""
    parsed = interval_metric(metric, list(files))
    if parsed is not None:
        name, kind = parsed
        labels, predicted, _ = align([read_eval_predictions(files[name])])
        return float(METRICS[kind](predicted[0], labels)), len(labels), name
    by_label = label_metric(metric, files)
    if by_label is None:
        return None
    name, label = by_label
    rows = read_eval_predictions(files[name])
    picked = [p == y for p, y in zip(rows.predictions, rows.labels) if y == label]
    return (sum(picked) / len(picked), len(rows.labels), name) if picked else None


def recompute_metrics(records: Sequence[dict[str, Any]], metrics: Sequence[str]) -> None:
    """Set each record's metrics that its per-example files give (`metric_from_file`) and `eval_<set>_examples`,
    refusing a file that does not give the value the run reported."""
    for record in records:
        files = record["predictions_files"]
        for metric in metrics:
            found = metric_from_file(metric, files)
            if found is None:
                continue
            value, n, name = found
            reported = record.get(metric)
            if reported is not None and not math.isclose(value, float(reported), abs_tol=1e-6):
                raise InputError(
                    f"{files[name]} gives {metric} = {value:.6f}, its run reported {float(reported):.6f}: "
                    "the file is not that run's; collect the per-example outputs again"
                )
            record[metric] = value
            record[f"eval_{name}_examples"] = n


def check_manifest_methods(experiment_dir: str, manifest: dict[str, Any], records: Sequence[dict[str, Any]]) -> None:
    """`InputError` for a manifest `baseline`, `reference` or `column_baselines` entry that names a method without
    runs under per_example/ (every row would be paired with nothing), listing the methods found."""
    found = sorted({r["method"] for r in records})
    named = [("baseline", manifest.get("baseline")), ("reference", manifest.get("reference"))]
    named += [("column_baselines", method) for method in manifest.get("column_baselines") or []]
    for key, method in named:
        if method and method not in found:
            raise InputError(
                f"{os.path.join(experiment_dir, PER_EXAMPLE_DIR, MANIFEST)}: {key} {method!r} has no run under "
                f"{PER_EXAMPLE_DIR}/, whose methods are {', '.join(found)}: name one of them"
            )


def report_text(experiment_dir: str) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    """The report's Markdown, its rows and the manifest (module docstring)."""
    manifest = read_manifest(experiment_dir)
    metrics, baseline, reference = manifest["metrics"], manifest.get("baseline"), manifest.get("reference")
    records = load_records(experiment_dir)
    check_manifest_methods(experiment_dir, manifest, records)
    recompute_metrics(records, metrics)
    summary = summarize_runs(records, metrics, reference, baseline)
    seeds = sorted({r["seed"] for r in records})
    head = (
        f"# {os.path.basename(os.path.normpath(experiment_dir))}: regenerated from per_example/\n\n"
        f"{len(records)} runs, seeds {', '.join(map(str, seeds))}; every metric recomputed from the runs' "
        "per-example files (`python -m hf_srnets.commands.report <this folder>`).\n\n"
    )
    text = head + summary_markdown(summary, metrics, reference, baseline) + cost_section(records)
    if baseline and manifest.get("columns"):
        columns = [parse_column(spec) for spec in manifest["columns"]]
        for against in manifest.get("column_baselines") or [baseline]:
            text += column_section(records, columns, against, reference)
    return text, summary.rows, {**manifest, "f_bias": summary.f_bias}


def cost_section(records: Sequence[dict[str, Any]]) -> str:
    """What the runs took, from their committed cost (`per_example.run_cost`): the budget line of a sweep's summary
    and the hours per method; nothing when no run kept its cost (collected before it was kept)."""
    costed = [r for r in records if "train_runtime" in r or any(is_eval_runtime(k) for k in r)]
    if not costed:
        return ""
    methods: dict[str, list[dict[str, Any]]] = {}
    for record in costed:
        methods.setdefault(record["method"], []).append(record)
    lines = ["| method | runs | training h | evaluation h | minutes a run |", "|---|---:|---:|---:|---:|"]
    for method, runs in methods.items():
        train, evaluation = runtime_seconds(runs)
        per_run = (train + evaluation) / len(runs) / 60
        lines.append(f"| {method} | {len(runs)} | {train / 3600:.2f} | {evaluation / 3600:.2f} | {per_run:.1f} |")
    missing = len(records) - len(costed)
    note = f" {missing} runs kept no cost (collected before it was kept) and are not counted.\n" if missing else ""
    return "\n## Compute\n\n" + budget_line(costed) + note + "\n" + "\n".join(lines) + "\n"


def column_section(
    records: Sequence[dict[str, Any]], columns: Sequence[Column], baseline: str, reference: str | None
) -> str:
    """The manifest's `columns` against the baseline (`hf_srnets.experiments.paired_table`): accuracy on a gold
    label's examples and F_bias get paired intervals here, F_bias against the reference's run of each run's seed,
    else of its lowest seed."""
    teachers = sorted((r for r in records if r["method"] == reference), key=lambda r: r["seed"])
    if any(c.is_f_bias for c in columns) and not teachers:
        raise InputError(f"the manifest's F_bias column needs the reference method's runs; none of {reference!r}")
    rows = comparison_rows(records, columns, baseline, teachers)
    where = ""
    if len(teachers) == 1:
        where = f", F_bias against {reference} (seed {teachers[0]['seed']})"
    elif teachers:
        where = f", F_bias against the {reference} run of the same seed (else of seed {teachers[0]['seed']})"
    return (
        f"\n## Paired by column against {baseline}\n\nMean ± sample std over the seeds, then each method minus "
        f"{baseline} on the same examples over the seeds both ran{where}: the 95% interval of {RESAMPLES:,} paired "
        "bootstrap resamples of the examples (F_bias: both sets resampled, the reference's Δ recomputed on each), "
        "seeds held fixed; beside it the per-seed differences' signs and the seed-level paired t-test, raw (Holm "
        f"over the rows of the column). {VERDICT_POLICY} Accuracy in points, F_bias as a ratio "
        "(`hf_srnets.experiments.paired_table`).\n\n" + comparison_markdown(rows, columns, baseline)
    )


def regenerate(experiment_dir: str, plots: bool = True) -> str:
    """Write report.md, report.csv and the plots of `experiment_dir`; return the Markdown."""
    text, rows, manifest = report_text(experiment_dir)
    with replaced_file(os.path.join(experiment_dir, REPORT_MARKDOWN)) as f:
        f.write(text)
    write_csv(rows, os.path.join(experiment_dir, REPORT_TABLE))
    if plots:
        paths = (os.path.join(experiment_dir, REPORT_PLOT), os.path.join(experiment_dir, REPORT_PAIRED_PLOT))
        plot_summary(rows, manifest["metrics"], manifest["f_bias"], manifest.get("baseline"), *paths)
    return text


def compare_with_committed(experiment_dir: str) -> tuple[bool, str]:
    """Whether the regenerated report.md equals the committed one, and what to say: that it does, or the first
    differing line of each."""
    path = os.path.join(experiment_dir, REPORT_MARKDOWN)
    if not os.path.isfile(path):
        raise InputError(f"{path} not found: run without --check to write it")
    text, _, _ = report_text(experiment_dir)
    with open(path, encoding="utf-8") as f:
        committed = f.read()
    if committed == text:
        return True, f"{path}: identical to the regenerated report"
    new, old = text.splitlines(), committed.splitlines()
    line = next((i for i, (a, b) in enumerate(zip(new, old)) if a != b), min(len(new), len(old)))
    return False, (
        f"{path} differs from the regenerated report at line {line + 1}:\n"
        f"  committed:   {old[line] if line < len(old) else '(end of file)'}\n"
        f"  regenerated: {new[line] if line < len(new) else '(end of file)'}"
    )


def run_report(args: ReportArguments) -> tuple[int, str]:
    """What `python -m hf_srnets.commands.report` does (its docstring): collect a sweep's per-example outputs when
    asked, then check or regenerate the report; return the exit status and the text to show."""
    if args.collect_from:
        columns = [column_spec(parse_column(c)) for c in args.columns.split(",")] if args.columns else []
        against = args.column_baselines.split(",") if args.column_baselines else []
        metrics = args.metrics.split(",") if args.metrics else []
        collect_per_example(
            args.collect_from, args.experiment_dir, metrics, args.baseline, args.reference, args.extra_runs(),
            columns, against,
        )  # fmt: skip
    if args.check:
        same, message = compare_with_committed(args.experiment_dir)
        return (0 if same else 1), message
    return 0, regenerate(args.experiment_dir, plots=not args.no_plots)
