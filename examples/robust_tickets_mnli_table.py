"""Collect `robust_tickets_mnli.sh`'s two searches (l0 + FreeLB with PoE, and with CE) into
`l0_freelb_poe_vs_ce.csv` and `.md`, with the PoE − CE differences and their paired bootstrap 95% intervals: on
MNLI-m, HANS and HANS's two gold labels over the evaluated pairs (the runs' `eval_predictions/`), and on the
TextFooler-style attack's Clean%, Aua% and Suc% over the pairs both attacked (`attack_textfooler.jsonl`).

    python examples/robust_tickets_mnli_table.py outputs/robust_tickets_mnli --output results/robust_tickets_mnli \
        --save_per_example results/robust_tickets_mnli/per_example
    python examples/robust_tickets_mnli_table.py results/robust_tickets_mnli/per_example \
        --output results/robust_tickets_mnli

`--save_per_example DIR` keeps what the tables are made of, small enough to commit: per search, `all_results.json`,
`<set>.jsonl.gz` per evaluation set (`hf_srnets.experiments.per_example`'s rows) and `attack_textfooler.jsonl.gz`
without the sentences (`hf_srnets.attack.per_example`); the second command regenerates the tables from those alone.
Intervals: `--resamples` seeded paired bootstrap resamples (10,000), unadjusted for the seven comparisons.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
from pathlib import Path

import numpy as np

from hf_srnets.attack.per_example import outcomes, paired_outcomes, save_attack_copy
from hf_srnets.errors import InputError, run_script
from hf_srnets.evaluation.eval_predictions import align, predictions_path, read_eval_predictions
from hf_srnets.experiments.per_example import SET_SUFFIX, compact_rows, write_set
from hf_srnets.metrics.bootstrap import PairedInterval, format_interval, paired_bootstrap

RUNS = {"poe": "l0_freelb_poe", "ce": "l0_freelb_ce"}  # search loss -> the script's run folder
RECIPE = "textfooler"
# CSV column -> all_results.json key (train_l0_*: the gates at the end of the search)
RESULT_KEYS = {
    "mnli_m": "eval_mnli_accuracy",
    "hans": "eval_hans_accuracy",
    "hans_ent": "eval_hans_entailment_accuracy",
    "hans_non_ent": "eval_hans_non-entailment_accuracy",
    "tf_clean": f"attack_{RECIPE}_clean_accuracy",
    "tf_aua": f"attack_{RECIPE}_accuracy_under_attack",
    "tf_suc": f"attack_{RECIPE}_attack_success_rate",
    "tf_queries": f"attack_{RECIPE}_avg_queries",
    "tf_examples": f"attack_{RECIPE}_num_examples",
    "l0_expected_sparsity": "train_l0_expected_sparsity",
    "l0_gates_zero": "train_l0_gates_zero",
    "l0_gates_one": "train_l0_gates_one",
    "train_steps": "train_steps",
    "train_runtime_s": "train_runtime",
}
# paired measure -> (evaluation set, the gold label it is restricted to or None for all, its CSV column)
SET_MEASURES = {
    "MNLI-m": ("mnli", None, "mnli_m"),
    "HANS": ("hans", None, "hans"),
    "HANS ent": ("hans", "entailment", "hans_ent"),
    "HANS non-ent": ("hans", "non-entailment", "hans_non_ent"),
}
PAIRED_COLUMNS = ["measure", "examples", "difference", "low", "high", "outside_noise"]


def read_results(run_dir: Path) -> dict[str, object]:
    path = run_dir / "all_results.json"
    if not path.is_file():
        raise InputError(f"{path} not found: run examples/robust_tickets_mnli.sh first (or give its per_example/)")
    return json.loads(path.read_text())


def csv_row(loss: str, results: dict[str, object]) -> dict[str, object]:
    missing = [key for key in RESULT_KEYS.values() if key not in results]
    if missing:
        raise InputError(f"the {loss} search's all_results.json lacks {missing}: was it evaluated and attacked?")
    return {"loss": loss, **{column: results[key] for column, key in RESULT_KEYS.items()}}


def set_file(run_dir: Path, set_name: str) -> Path:
    """The run's predictions on one set: `eval_predictions/<set>.jsonl` of a run, or `<set>.jsonl.gz` of a copy."""
    for path in (Path(predictions_path(run_dir, set_name)), run_dir / f"{set_name}{SET_SUFFIX}"):
        if path.is_file():
            return path
    raise InputError(f"{run_dir} has no predictions on {set_name}: evaluate it again (they are written by default)")


def correct(runs_dir: Path, set_name: str, label: str | None) -> tuple[np.ndarray, np.ndarray]:
    """[n] 0/1 correctness of the PoE and the CE search on the same pairs of one set (and gold label)."""
    sets = [read_eval_predictions(set_file(runs_dir / run, set_name)) for run in RUNS.values()]
    labels, predicted, names = align(sets)
    right = (predicted == labels).astype(float)
    keep = labels == names.index(label) if label is not None else np.ones_like(labels, dtype=bool)
    return right[0, keep], right[1, keep]


def paired_measures(runs_dir: Path, rows: dict[str, dict], resamples: int) -> dict[str, tuple[PairedInterval, int]]:
    """PoE − CE of every measure, with its interval and the number of examples; each set's accuracy is checked
    against the one its run reported."""
    found = {}
    for measure, (set_name, label, column) in SET_MEASURES.items():
        poe, ce = correct(runs_dir, set_name, label)
        for loss, scores in (("poe", poe), ("ce", ce)):
            if not np.isclose(scores.mean(), float(rows[loss][column])):
                raise InputError(
                    f"the {loss} search's {set_name} predictions give {scores.mean():.4f} on {measure}, its "
                    f"all_results.json {rows[loss][column]}: the files come from different runs"
                )
        found[measure] = (paired_bootstrap(poe, ce, n_resamples=resamples), len(poe))
    pair = [(outcomes(runs_dir / RUNS["poe"], RECIPE), outcomes(runs_dir / RUNS["ce"], RECIPE))]
    attack, n = paired_outcomes(pair, resamples)
    found |= {f"TF {name}": (attack[key], n) for key, name in (("clean", "Clean%"), ("aua", "Aua%"), ("suc", "Suc%"))}
    return found


def pct(value: object) -> str:
    return f"{100 * float(value):.1f}"


def markdown(rows: dict[str, dict], paired: dict[str, tuple[PairedInterval, int]], resamples: int) -> str:
    head = "| search loss | MNLI-m | HANS | HANS ent | HANS non-ent | TF Clean% | TF Aua% | TF Suc% | TF #Query |"
    lines = [head + " gates = 1 | gates = 0 | E[sparsity] |", "|" + "---|" * 12]
    for loss, row in rows.items():
        cells = [loss] + [pct(row[c]) for c in ("mnli_m", "hans", "hans_ent", "hans_non_ent")]
        cells += [pct(row[c]) for c in ("tf_clean", "tf_aua", "tf_suc")] + [f"{float(row['tf_queries']):.1f}"]
        cells += [f"{pct(row[c])}%" for c in ("l0_gates_one", "l0_gates_zero", "l0_expected_sparsity")]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        f"PoE − CE, in points, paired over the same examples; [low, high] the 95% percentile interval of {resamples:,} "
        "paired bootstrap resamples of the examples (TF Suc% recomputed as successful / attacked on each), "
        f"unadjusted for the {len(paired)} comparisons; * the interval excludes 0.",
        "",
        "| measure | examples | PoE − CE |",
        "|---|---|---|",
    ]
    for measure, (iv, n) in paired.items():
        lines.append(f"| {measure} | {n} | {format_interval(iv.difference, iv.low, iv.high, digits=1)} |")
    return "\n".join(lines) + "\n"


def save_per_example(runs_dir: Path, target: Path) -> None:
    """Copy each search's `all_results.json`, per-set predictions and attack results, in their committed form."""
    for run in RUNS.values():
        dest = target / run
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(runs_dir / run / "all_results.json", dest / "all_results.json")
        for set_name in dict.fromkeys(s for s, _, _ in SET_MEASURES.values()):
            source = set_file(runs_dir / run, set_name)
            if source.suffix == ".gz":
                shutil.copyfile(source, dest / source.name)
            else:
                write_set(compact_rows(str(source)), str(dest / f"{set_name}{SET_SUFFIX}"))
        save_attack_copy(runs_dir / run, RECIPE, dest)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs_dir", type=Path)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--resamples", type=int, default=10_000, help="paired bootstrap resamples per interval")
    parser.add_argument("--save_per_example", type=Path, default=None, help="also copy what the tables are made of")
    args = parser.parse_args()
    rows = {loss: csv_row(loss, read_results(args.runs_dir / run)) for loss, run in RUNS.items()}
    paired = paired_measures(args.runs_dir, rows, args.resamples)
    args.output.mkdir(parents=True, exist_ok=True)
    with open(args.output / "l0_freelb_poe_vs_ce.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["loss", *RESULT_KEYS])
        writer.writeheader()
        writer.writerows(rows.values())
    with open(args.output / "l0_freelb_poe_vs_ce_paired.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=PAIRED_COLUMNS)
        writer.writeheader()
        for measure, (iv, n) in paired.items():
            writer.writerow(dict(zip(PAIRED_COLUMNS, (measure, n, iv.difference, iv.low, iv.high, iv.excludes_zero))))
    if args.save_per_example is not None:
        save_per_example(args.runs_dir, args.save_per_example)
    text = markdown(rows, paired, args.resamples)
    (args.output / "l0_freelb_poe_vs_ce.md").write_text(text)
    print(text)


if __name__ == "__main__":
    raise SystemExit(run_script(main))
