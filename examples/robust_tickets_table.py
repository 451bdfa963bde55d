"""Collect the SST-2 Robust Tickets runs of `robust_tickets_sst2.sh` into a CSV and a Markdown table beside the
paper's Table 1 (SST-2 rows, BERT-base, the average of 5 seeds; the numbers below are transcribed from it), and
each method's differences from Fine-tune in Clean%, Aua% and Suc% with paired bootstrap 95% intervals over the
attacked sentences (`hf_srnets.metrics.bootstrap`), read from the per-sentence `attack_<recipe>.jsonl` files.

    python examples/robust_tickets_table.py outputs/robust_tickets_sst2 --output results/robust_tickets_sst2 \
        --save_per_example results/robust_tickets_sst2/per_example
    python examples/robust_tickets_table.py results/robust_tickets_sst2/per_example --output results/robust_tickets_sst2

`--save_per_example DIR` keeps what the tables are made of, small enough to commit: each run's `all_results.json`
and its per-sentence attack files without the sentences, gzipped (`attack_<recipe>.jsonl.gz`); the second command
regenerates every table from those alone. Intervals: `--resamples` paired bootstrap resamples (10,000), seeded, so
a rerun is identical.

A run is `<runs_dir>/<run>/` or, with several seeds, `<runs_dir>/<run>/seed<N>/`; seeds are paired with
Fine-tune's of the same N, and sentences by example id (those both runs attacked).
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
from pathlib import Path

from hf_srnets.attack.per_example import outcomes, paired_outcomes, save_attack_copy
from hf_srnets.metrics.bootstrap import DEFAULT_RESAMPLES, PairedInterval, format_interval

RUNS = {"finetune": "Fine-tune", "freelb": "FreeLB", "lth": "LTH", "rand": "Rand", "robustt": "RobustT"}
RECIPES = ("textfooler", "textbugger")
# Table 1, SST-2: Clean%, then (Aua%, Suc%, #Query) for TextFooler and TextBugger
PAPER = {
    "Fine-tune": (92.0, (5.0, 94.6, 98.4), (29.4, 68.3, 49.7)),
    "FreeLB": (91.6, (14.4, 84.2, 123.8), (42.4, 53.7, 54.9)),
    "LTH": (92.1, (4.1, 95.5, 90.5), (29.1, 68.4, 49.6)),
    "Rand": (83.2, (2.4, 97.1, 75.6), (16.5, 80.2, 44.2)),
    "RobustT": (90.9, (26.7, 70.6, 149.8), (42.1, 53.7, 53.9)),
}
COLUMNS = ["method", "sparsity", "dev_accuracy"] + [
    f"{recipe}_{key}" for recipe in RECIPES for key in ("clean", "aua", "suc", "queries", "examples")
]


def read_run(run_dir: Path) -> dict[str, object]:
    results = json.loads((run_dir / "all_results.json").read_text())
    row: dict[str, object] = {
        "sparsity": results.get("train_sparsity", results.get("sparsity", 0.0)),
        "dev_accuracy": next((v for k, v in results.items() if k.startswith("eval_") and k.endswith("accuracy")), None),
    }
    for recipe in RECIPES:
        prefix = f"attack_{recipe}_"
        row[f"{recipe}_clean"] = results.get(prefix + "clean_accuracy")
        row[f"{recipe}_aua"] = results.get(prefix + "accuracy_under_attack")
        row[f"{recipe}_suc"] = results.get(prefix + "attack_success_rate")
        row[f"{recipe}_queries"] = results.get(prefix + "avg_queries")
        row[f"{recipe}_examples"] = results.get(prefix + "num_examples")
    return row


def pct(value: object) -> str:
    return "–" if value is None else f"{100 * float(value):.1f}"


def markdown(rows: list[dict[str, object]]) -> str:
    lines = [
        "| method | sparsity | Clean% (dev) | TF Aua% | TF Suc% | TF #Query | TB Aua% | TB Suc% | TB #Query |"
        " paper Clean% | paper TF Aua/Suc/#Q | paper TB Aua/Suc/#Q |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        paper = PAPER[row["method"]]
        cells = [str(row["method"]), pct(row["sparsity"]), pct(row["dev_accuracy"])]
        for recipe in RECIPES:
            queries = row[f"{recipe}_queries"]
            queries_cell = "–" if queries is None else f"{queries:.1f}"
            cells += [pct(row[f"{recipe}_aua"]), pct(row[f"{recipe}_suc"]), queries_cell]
        cells += [f"{paper[0]:.1f}", " / ".join(map(str, paper[1])), " / ".join(map(str, paper[2]))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


BASELINE = "finetune"
PAIRED_COLUMNS = ["method", "recipe", "metric", "difference", "low", "high", "outside_noise", "seeds", "sentences"]


def seed_dirs(run_dir: Path) -> dict[str, Path]:
    """`seed<N>` -> its dir for a run with seed sub-dirs, else {"": run_dir} (one unnamed seed)."""
    seeds = {p.name: p for p in sorted(run_dir.glob("seed*")) if p.is_dir()}
    return seeds or ({"": run_dir} if run_dir.is_dir() else {})


def save_per_example(runs_dir: Path, runs: list[str], target: Path) -> None:
    """Copy each run's (and seed's) `all_results.json` and gzipped attack files to `target/<run>[/seed<N>]/`."""
    for run in runs:
        for seed, source in seed_dirs(runs_dir / run).items():
            dest = target / run / seed
            dest.mkdir(parents=True, exist_ok=True)
            if (source / "all_results.json").is_file():
                shutil.copyfile(source / "all_results.json", dest / "all_results.json")
            for recipe in RECIPES:
                save_attack_copy(source, recipe, dest)


def paired_attack(
    runs_dir: Path, run: str, recipe: str, resamples: int = DEFAULT_RESAMPLES
) -> tuple[dict[str, PairedInterval], int] | str:
    """Clean%, Aua% and Suc% of `run` minus Fine-tune's on the sentences both attacked, over paired seeds, with
    paired bootstrap intervals, and the number of sentences; or why there are none."""
    mine, base = seed_dirs(runs_dir / run), seed_dirs(runs_dir / BASELINE)
    seeds = [s for s in mine if s in base]
    pairs = [(outcomes(mine[s], recipe), outcomes(base[s], recipe)) for s in seeds]
    pairs = [(m, b) for m, b in pairs if m and b]
    if not pairs:
        return f"no {recipe} results of both {run} and {BASELINE} for a common seed"
    try:
        return paired_outcomes(pairs, resamples)
    except ValueError as err:  # no sentence in common, or Suc% of a seed that classified no sentence correctly
        return f"{run} against {BASELINE} with {recipe}: {err}"


def paired_rows(
    runs_dir: Path, methods: list[str], resamples: int = DEFAULT_RESAMPLES
) -> tuple[list[dict[str, object]], list[str]]:
    """CSV rows of every method's paired differences from Fine-tune, and notes on what could not be paired."""
    rows, notes = [], []
    for run in methods:
        for recipe in RECIPES:
            found = paired_attack(runs_dir, run, recipe, resamples)
            if isinstance(found, str):
                notes.append(found)
                continue
            intervals, n = found
            for metric, iv in intervals.items():
                values = (iv.difference, iv.low, iv.high, iv.excludes_zero, iv.n_seeds, n)
                rows.append(dict(zip(PAIRED_COLUMNS, (RUNS[run], recipe, metric, *values))))
    return rows, notes


def paired_markdown(rows: list[dict[str, object]], notes: list[str], resamples: int = DEFAULT_RESAMPLES) -> str:
    """The paired differences as a table, `Δ [low, high]` in points, `*` when the interval excludes 0."""
    head = ["method", "seeds"] + [f"{r} {c}" for r in ("TF", "TB") for c in ("n", "ΔClean%", "ΔAua%", "ΔSuc%")]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for method in dict.fromkeys(r["method"] for r in rows):
        mine = [r for r in rows if r["method"] == method]
        cells = [str(method), str(max(int(r["seeds"]) for r in mine))]
        for recipe in RECIPES:
            got = {r["metric"]: r for r in mine if r["recipe"] == recipe}
            cells.append(str(next(iter(got.values()))["sentences"]) if got else "–")
            for metric in ("clean", "aua", "suc"):
                r = got.get(metric)
                cells.append(format_interval(r["difference"], r["low"], r["high"], digits=1) if r else "–")
        lines.append("| " + " | ".join(cells) + " |")
    text = (
        f"\nAgainst {RUNS[BASELINE]}, in points: method − {RUNS[BASELINE]} on the n sentences both attacked, the mean "
        f"over paired seeds; [low, high] the 95% percentile interval of {resamples:,} paired bootstrap "
        "resamples of the sentences (Suc% recomputed as successful / attacked on each); * the interval excludes 0.\n\n"
    )
    return text + "\n".join(lines) + "\n" + "".join(f"\n- no interval: {n}" for n in notes) + ("\n" if notes else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs_dir", type=Path)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--resamples", type=int, default=10_000, help="paired bootstrap resamples per interval")
    parser.add_argument(
        "--save_per_example", type=Path, default=None, help="also copy what the tables are made of here (see above)"
    )
    args = parser.parse_args()
    rows = []
    for run, method in RUNS.items():
        if (args.runs_dir / run / "all_results.json").is_file():
            rows.append({"method": method, **read_run(args.runs_dir / run)})
    args.output.mkdir(parents=True, exist_ok=True)
    with open(args.output / "table1_sst2.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    methods = [run for run in RUNS if run != BASELINE and (args.runs_dir / run).is_dir()]
    paired, notes = paired_rows(args.runs_dir, methods, args.resamples)
    with open(args.output / "table1_sst2_paired.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=PAIRED_COLUMNS)
        writer.writeheader()
        writer.writerows(paired)
    text = markdown(rows) + paired_markdown(paired, notes, args.resamples)
    if args.save_per_example is not None:
        save_per_example(args.runs_dir, [run for run in RUNS if (args.runs_dir / run).is_dir()], args.save_per_example)
    (args.output / "table1_sst2.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
