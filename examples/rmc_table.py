"""Collect the runs of `rmc_minilm_mnli.sh` into a CSV (one row per run) and a Markdown table (mean ± sample std over
the seeds found) beside the paper's MNLI numbers: Table 4 (IMP at 40% with each mitigation, BERT-base, mean of 3
runs) and Table 6 (easy / hard accuracy; the paper reports them for Vanilla and RMC only), plus the stage-1 report
(the loss-variance split against the hypothesis-only one).

    python examples/rmc_table.py outputs/rmc_minilm_mnli --output results/rmc_minilm_mnli
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
from pathlib import Path

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


def paper_cell(value: float | None, digits: int = 1) -> str:
    return f"{value:.{digits}f}" if value is not None else "–"


def markdown(groups: dict[str, list[dict[str, object]]]) -> str:
    lines = [
        "| method | runs | MNLI-m | HANS | HANS ent / non-ent | F_bias | easy | hard | gap E−H | conf. easy / hard "
        "| paper MNLI / HANS / F_bias | paper easy / hard |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for method, rows in groups.items():
        (dev, hans, fb), (hard, easy) = PAPER[method][1], PAPER[method][2]
        paper = f"{paper_cell(dev)} / {paper_cell(hans)} / {paper_cell(fb, 3)}"
        cells = [
            str(len(rows)),
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
    groups = {m: [read_row(m, d) for d in dirs] for m, dirs in run_dirs(args.root).items()}
    args.output.mkdir(parents=True, exist_ok=True)
    with open(args.output / "runs.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["method", *KEYS, "run"])
        writer.writeheader()
        writer.writerows(row for rows in groups.values() for row in rows)
    text = "# Robustness Challenges at CPU scale (MiniLM, MNLI)\n\n" + markdown(groups)
    (args.output / "table.md").write_text(text + stage1_summary(args.root))
    print(text)


if __name__ == "__main__":
    main()
