"""The summary a sweep (`run_sweep.py`: summary.md/csv/png) and `report` (report.md/csv/png) both make of their runs:
F_bias of each run against the reference run of its seed (Du et al. 2023, §3.4), mean ± std per method and
sparsity, the comparison with the reference, paired intervals against the baseline; its Markdown and its plots."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .sweep_summary import (
    add_f_bias,
    add_paired_intervals,
    aggregate,
    compare_to_reference,
    markdown_table,
    paired_table,
    plot,
    plot_paired,
    sweep_f_bias_table,
)


@dataclass(frozen=True)
class Summary:
    """The rows (one per method and sparsity), the F_bias metrics added to them, and the notes of the paired table."""

    rows: list[dict[str, Any]]
    f_bias: list[str]
    notes: list[str]


def summarize_runs(
    records: list[dict[str, Any]], metrics: Sequence[str], reference: str | None, baseline: str | None
) -> Summary:
    """The summary of `records` (each run's results; F_bias is added to them when there is a reference)."""
    f_bias = add_f_bias(records, reference, metrics[0]) if reference and metrics else []
    rows = aggregate(records, [*metrics, *f_bias])
    if reference:
        rows = compare_to_reference(rows, metrics, reference)
    notes: list[str] = []
    if baseline:  # paired by seed and example, from the runs' per-example predictions
        rows, notes = add_paired_intervals(rows, records, metrics, baseline)
    return Summary(rows, f_bias, notes)


def summary_markdown(summary: Summary, metrics: Sequence[str], reference: str | None, baseline: str | None) -> str:
    """The tables: mean ± std (and % of the reference), F_bias, and the paired differences from the baseline."""
    text = markdown_table(summary.rows, metrics, reference)
    text += sweep_f_bias_table(summary.rows, summary.f_bias, reference or "")
    return text + (paired_table(summary.rows, metrics, baseline, summary.notes) if baseline else "")


def plot_summary(
    rows: Sequence[dict[str, Any]],
    metrics: Sequence[str],
    f_bias: Sequence[str],
    baseline: str | None,
    plot_path: str,
    paired_path: str,
) -> None:
    """Each metric (and the task's F_bias, the first of `f_bias`) against sparsity; with a baseline, the paired
    differences too."""
    plot(rows, [*metrics, *f_bias[:1]], plot_path)
    if baseline:  # the comparison at one sparsity, a method per line with its interval
        plot_paired(rows, metrics, baseline, paired_path)
