"""Collect the runs of `rmc_minilm_mnli.sh` into a CSV (one row per run) and a Markdown table (mean ± sample std over
the seeds found) beside the paper's MNLI numbers: Table 4 (IMP at 40% with each mitigation, BERT-base, mean of 3
runs) and Table 6 (easy / hard accuracy; the paper reports them for Vanilla and RMC only), plus the stage-1 report
(the loss-variance split against the hypothesis-only one).

When the runs hold per-example predictions (`eval_predictions/`), each method's MNLI-m and HANS accuracy and
F_bias also get their difference from IMP 40% – Vanilla over the seeds both ran (paired by seed), on the same
examples, with a paired bootstrap 95% interval over the examples (`hf_srnets.metrics.bootstrap`; F_bias resamples
MNLI-m and HANS each on its own, with the teacher's predictions on the same resample); runs without them are
tabled as before and the table says which lack them.

    python examples/rmc_table.py outputs/rmc_minilm_mnli --output results/rmc_minilm_mnli
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
from collections.abc import Sequence
from pathlib import Path

from hf_srnets.evaluation.eval_predictions import predictions_path
from hf_srnets.experiments.paired_table import Column, f_bias_comparison
from hf_srnets.experiments.sweep_summary import RESAMPLES, paired_interval
from hf_srnets.metrics.bootstrap import PairedInterval, format_interval

# method dir -> (row name, Table 4 MNLI: DEV, HANS, F_bias; Table 6: hard, easy)
PAPER = {
    "teacher": ("teacher (full, ce)", (84.2, 59.8, None), (None, None)),
    "imp_vanilla": ("IMP 40% – Vanilla", (84.0, 54.7, 1.204), (74.9, 91.0)),
    "imp_distil": ("IMP 40% – Distil", (84.1, 56.2, 1.145), (None, None)),
    "imp_smooth": ("IMP 40% – Smooth", (84.2, 56.5, 1.135), (None, None)),
    "imp_focal": ("IMP 40% – Focal", (84.0, 56.7, 1.122), (None, None)),
    "imp_jtt": ("IMP 40% – JTT", (83.8, 56.3, 1.132), (None, None)),
    "imp_rmc": ("IMP 40% – RMC", (84.2, 58.6, 1.049), (75.9, 90.3)),
    "heads20_ce": ("heads −20% – ce", (None, None, None), (None, None)),  # Table 3: 116 heads, F_bias 1.17-1.25
    "mask_poe": ("SRNet 40% – mask, PoE", (None, None, None), (None, None)),
}
KEYS = {
    "mnli": "eval_mnli_accuracy",
    "hans": "eval_hans_accuracy",
    "hans_entailment": "eval_hans_entailment_accuracy",
    "hans_non_entailment": "eval_hans_non-entailment_accuracy",
    "f_bias": "f_bias",
    "easy": "eval_mnli_easy_accuracy",
    "hard": "eval_mnli_hard_accuracy",
    "gap": "eval_mnli_easy_hard_gap",
    "easy_confidence": "eval_mnli_easy_confidence",
    "hard_confidence": "eval_mnli_hard_confidence",
    "sparsity": "sparsity",
    "heads_pruned": "heads_pruned",
    "train_steps": "train_steps",
}


def run_dirs(root: Path) -> dict[str, list[Path]]:
    """The teacher's and each method's run dirs (`<method>/s<sparsity>/seed<seed>`, every seed)."""
    dirs = {"teacher": [root / "teacher"]}
    for method in PAPER:
        found = sorted(root.glob(f"{method}/s*/seed*/all_results.json"))
        if found:
            dirs[method] = [f.parent for f in found]
    return dirs


def read_row(method: str, run_dir: Path) -> dict[str, object]:
    results = json.loads((run_dir / "all_results.json").read_text())
    row: dict[str, object] = {"method": PAPER[method][0], "run": str(run_dir)}
    row.update({name: results.get(key) for name, key in KEYS.items()})
    return row


def cell(rows: list[dict[str, object]], key: str, scale: float = 100.0, digits: int = 1) -> str:
    """`mean ± std` of `key` over the rows (× scale), the mean alone for one row, – when absent."""
    values = [scale * float(r[key]) for r in rows if isinstance(r.get(key), (int, float))]
    if not values:
        return "–"
    mean = f"{statistics.mean(values):.{digits}f}"
    return mean if len(values) == 1 else f"{mean} ± {statistics.stdev(values):.{digits}f}"


def steps_cell(rows: list[dict[str, object]]) -> str:
    """The training steps the rows' runs took (`train_steps`): one number when they agree, else each; – when absent.
    Stated in the table because IMP stops Δt after reaching its target (Algorithm 1), before the end of its
    schedule, while head pruning and mask training run to t_max."""
    steps = sorted({int(r["train_steps"]) for r in rows if isinstance(r.get("train_steps"), (int, float))})
    return "/".join(map(str, steps)) if steps else "–"


def paper_cell(value: float | None, digits: int = 1) -> str:
    return f"{value:.{digits}f}" if value is not None else "–"


def markdown(groups: dict[str, list[dict[str, object]]]) -> str:
    lines = [
        "| method | runs | train steps | MNLI-m | HANS | HANS ent / non-ent | F_bias | easy | hard | gap E−H "
        "| conf. easy / hard | paper MNLI / HANS / F_bias | paper easy / hard |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for method, rows in groups.items():
        (dev, hans, fb), (hard, easy) = PAPER[method][1], PAPER[method][2]
        paper = f"{paper_cell(dev)} / {paper_cell(hans)} / {paper_cell(fb, 3)}"
        cells = [
            str(len(rows)),
            steps_cell(rows),
            cell(rows, "mnli"),
            cell(rows, "hans"),
            f"{cell(rows, 'hans_entailment')} / {cell(rows, 'hans_non_entailment')}",
            cell(rows, "f_bias", 1.0, 3),
            cell(rows, "easy"),
            cell(rows, "hard"),
            cell(rows, "gap"),
            f"{cell(rows, 'easy_confidence')} / {cell(rows, 'hard_confidence')}",
            paper,
            f"{paper_cell(easy)} / {paper_cell(hard)}",
        ]
        lines.append(f"| {PAPER[method][0]} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


BASELINE = "imp_vanilla"
SETS = ("mnli", "hans")  # the ID set and the OOD set F_bias uses (MNLI: HANS alone)
PAIRED_COLUMNS = ["method", "metric", "difference", "low", "high", "outside_noise", "seeds"]


def run_record(run_dir: Path) -> dict[str, object]:
    """A run's results with its dir (what `hf_srnets.experiments.sweep_summary.paired_interval` reads)."""
    return {**json.loads((run_dir / "all_results.json").read_text()), "run_dir": str(run_dir)}


def f_bias_interval(method: Sequence[Path], vanilla: Sequence[Path], teacher: Path) -> PairedInterval:
    """F_bias of the method minus Vanilla's over paired seeds, with both sets resampled on their own and the
    teacher's accuracies recomputed on each resample (`hf_srnets.experiments.paired_table.f_bias_comparison`)."""
    column = Column("F_bias", SETS[0], ood_set=SETS[1])
    runs = [[{"run_dir": str(d)} for d in dirs] for dirs in (method, vanilla)]
    return f_bias_comparison(*runs, {"run_dir": str(teacher)}, column, RESAMPLES).interval


def has_predictions(run_dir: Path) -> bool:
    return all(Path(predictions_path(run_dir, name)).is_file() for name in SETS)


def paired_intervals(method: str, dirs: dict[str, list[Path]], root: Path) -> dict[str, PairedInterval] | str:
    """MNLI-m, HANS and (when the teacher has predictions too) F_bias of `method` minus Vanilla's, paired by seed
    dir name; or why there are none."""
    base = {d.name: d for d in dirs.get(BASELINE, [])}
    mine = [d for d in dirs[method] if d.name in base]
    if not mine:
        return f"{PAPER[method][0]}: no seed in common with {PAPER[BASELINE][0]}"
    missing = [d for d in [*mine, *(base[d.name] for d in mine)] if not has_predictions(d)]
    if missing:
        return f"{PAPER[method][0]}: no per-example predictions in {missing[0]} (a run made before they were written)"
    method_runs, base_runs = [run_record(d) for d in mine], [run_record(base[d.name]) for d in mine]
    try:
        found = {
            "mnli": paired_interval(method_runs, base_runs, KEYS["mnli"], "mnli", "accuracy"),
            "hans": paired_interval(method_runs, base_runs, KEYS["hans"], "hans", "accuracy"),
        }
        if has_predictions(root / "teacher"):
            found["f_bias"] = f_bias_interval(mine, [base[d.name] for d in mine], root / "teacher")
    except ValueError as err:
        return f"{PAPER[method][0]}: {err}"
    return found


def paired_section(root: Path, dirs: dict[str, list[Path]]) -> tuple[str, list[dict[str, object]]]:
    """The paired differences from Vanilla as Markdown (with notes on what could not be paired) and CSV rows."""
    lines = [
        "| method | paired seeds | train steps (method / Vanilla) | ΔMNLI-m | ΔHANS | ΔF_bias |",
        "|---|---|---|---|---|---|",
    ]
    steps = {m: steps_cell([read_row(m, d) for d in found]) for m, found in dirs.items() if m != "teacher"}
    rows, notes = [], []
    for method in dirs:
        if method in ("teacher", BASELINE):
            continue
        found = paired_intervals(method, dirs, root)
        if isinstance(found, str):
            notes.append(found)
            continue
        scale = {"mnli": (100.0, 1), "hans": (100.0, 1), "f_bias": (1.0, 3)}
        cells = [format_interval(iv.difference, iv.low, iv.high, *scale[m]) for m, iv in found.items()]
        cells += ["–"] * (3 - len(cells))
        budget = f"{steps[method]} / {steps.get(BASELINE, '–')}"
        lines.append(f"| {PAPER[method][0]} | {found['mnli'].n_seeds} | {budget} | " + " | ".join(cells) + " |")
        for metric, iv in found.items():
            values = (iv.difference, iv.low, iv.high, iv.excludes_zero, iv.n_seeds)
            rows.append(dict(zip(PAIRED_COLUMNS, (PAPER[method][0], metric, *values))))
    text = (
        f"\n## Against {PAPER[BASELINE][0]}\n\nMethod − Vanilla on the same examples, the mean over the seeds both ran "
        f"(MNLI-m and HANS in points, F_bias as a ratio); [low, high] the 95% percentile interval of "
        f"{RESAMPLES:,} paired bootstrap resamples of the examples (F_bias: MNLI-m and HANS resampled each on "
        "its own, the teacher's Δ recomputed on each resample); * the interval excludes 0; intervals unadjusted for "
        "the table's many rows. Train steps: the budgets differ where the two numbers do.\n\n"
    )
    if len(lines) > 2 and not has_predictions(root / "teacher"):
        notes.append(f"F_bias: no per-example predictions of the teacher in {root / 'teacher'}")
    body = "\n".join(lines) + "\n" if len(lines) > 2 else ""
    return text + body + "".join(f"\n- no interval: {n}" for n in notes) + ("\n" if notes else ""), rows


def stage1_summary(root: Path) -> str:
    report_path = root / "difficulty" / "difficulty_report.json"
    if not report_path.is_file():
        return ""
    return "\n## Stage 1 report\n\n```json\n" + report_path.read_text().strip() + "\n```\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    dirs = run_dirs(args.root)
    groups = {m: [read_row(m, d) for d in found] for m, found in dirs.items()}
    args.output.mkdir(parents=True, exist_ok=True)
    with open(args.output / "runs.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["method", *KEYS, "run"])
        writer.writeheader()
        writer.writerows(row for rows in groups.values() for row in rows)
    paired, paired_rows = paired_section(args.root, dirs)
    with open(args.output / "paired.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=PAIRED_COLUMNS)
        writer.writeheader()
        writer.writerows(paired_rows)
    text = "# Robustness Challenges at CPU scale (MiniLM, MNLI)\n\n" + markdown(groups) + paired
    (args.output / "table.md").write_text(text + stage1_summary(args.root))
    print(text)


if __name__ == "__main__":
    main()
