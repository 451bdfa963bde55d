"""Collect the SST-2 Robust Tickets runs of `robust_tickets_sst2.sh` into a CSV and a Markdown table beside the
paper's Table 1 (SST-2 rows, BERT-base, the average of 5 seeds; the numbers below are transcribed from it).

    python examples/robust_tickets_table.py outputs/robust_tickets_sst2 --output results/robust_tickets_sst2
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs_dir", type=Path)
    parser.add_argument("--output", type=Path, required=True)
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
    (args.output / "table1_sst2.md").write_text(markdown(rows))
    print(markdown(rows))


if __name__ == "__main__":
    main()
