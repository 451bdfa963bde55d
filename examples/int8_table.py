"""What a user can deploy, in float32 and INT8: one table and one Pareto plot (issue 71) from a results folder's
per-example files and its `bench/bench_runtimes.py` record.

    python examples/int8_table.py results/int8_cofi_minilm_mnli --reference dense

The folder holds `per_example/<model>_torch_fp32/` and `per_example/<model>_torch_int8/` (each `mnli.jsonl.gz` and
`hans.jsonl.gz`: a `run_glue_sparse.py --do_eval` run's `eval_predictions/`, the second with `--quantize int8`)
and `runtimes.json` with the runtimes `eager` and `torch-int8` for the same model names. For each model and
precision: MNLI-m, HANS non-entailment, F_bias (Du et al. 2023, §3.4: Δ = (MNLI-m − HANS) / MNLI-m of the model
over that of the reference model in float32), the share of the reference's MNLI-m, and ×dense (b32 throughput over
the reference's float32 eager throughput); for INT8, the paired interval of INT8 − float32 on MNLI-m and HANS
non-entailment (`--resamples` paired resamples, seeded); whether the row is on the Pareto front (no other row both
faster and more accurate on MNLI-m). Writes `table.md` and `pareto.png` into the folder.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from hf_srnets.evaluation.eval_predictions import read_eval_predictions
from hf_srnets.metrics import relative_bias
from hf_srnets.metrics.bootstrap import paired_bootstrap

PRECISIONS = {"fp32": ("torch_fp32", "eager"), "int8": ("torch_int8", "torch-int8")}  # folder suffix, runtime


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--reference", default="dense", help="The dense model every ratio and F_bias is against.")
    parser.add_argument("--resamples", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def models(folder: Path, record: dict[str, Any]) -> list[str]:
    """The models of the runtimes record with both precisions' per-example files, in its order."""
    return [m for m in record["models"] if all((folder / "per_example" / f"{m}_{s}").is_dir() for s, _ in
                                               PRECISIONS.values())]  # fmt: skip


def non_entailment(folder: Path, run: str) -> np.ndarray:
    """Correct (1/0) on HANS's non-entailment examples."""
    hans = read_eval_predictions(folder / "per_example" / run / "hans.jsonl.gz")
    return hans.correct[np.array([label == "non-entailment" for label in hans.labels])]


def throughput(record: dict[str, Any]) -> dict[tuple[str, str], float]:
    """b32 examples/s by (model, runtime)."""
    return {
        (row["model"], runtime): row["examples_per_s"]
        for runtime, rec in record["runtimes"].items()
        for row in rec["rows"]
        if row["batch_size"] == 32
    }


def interval(a: np.ndarray, b: np.ndarray, args: argparse.Namespace) -> str:
    result = paired_bootstrap(a, b, n_resamples=args.resamples, seed=args.seed)
    return f"{100 * result.difference:+.2f} [{100 * result.low:+.2f}, {100 * result.high:+.2f}]".replace("-", "−")


def rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    folder, found = args.folder, []
    record = json.loads((folder / "runtimes.json").read_text(encoding="utf-8"))
    speed = throughput(record)
    ref_run = f"{args.reference}_{PRECISIONS['fp32'][0]}"
    ref_mnli = read_eval_predictions(folder / "per_example" / ref_run / "mnli.jsonl.gz").correct.mean()
    ref_hans = read_eval_predictions(folder / "per_example" / ref_run / "hans.jsonl.gz").correct.mean()
    base_speed = speed[(args.reference, "eager")]
    for model in models(folder, record):
        for precision, (suffix, runtime) in PRECISIONS.items():
            run = f"{model}_{suffix}"
            mnli = read_eval_predictions(folder / "per_example" / run / "mnli.jsonl.gz").correct
            hans = read_eval_predictions(folder / "per_example" / run / "hans.jsonl.gz").correct
            row = {"model": model, "precision": precision, "mnli": mnli, "hans_non": non_entailment(folder, run)}
            row["f_bias"] = relative_bias(mnli.mean(), hans.mean(), ref_mnli, ref_hans)
            row["of_reference"] = mnli.mean() / ref_mnli
            row["x_dense"] = speed[(model, runtime)] / base_speed
            if precision == "int8":
                fp32 = found[-1]
                row["mnli_change"] = interval(mnli, fp32["mnli"], args)
                row["hans_non_change"] = interval(row["hans_non"], fp32["hans_non"], args)
            found.append(row)
    for row in found:  # on the front: no other row at least as fast and more accurate, or faster and as accurate
        row["front"] = not any(
            o is not row
            and o["x_dense"] >= row["x_dense"]
            and o["mnli"].mean() >= row["mnli"].mean()
            and (o["x_dense"] > row["x_dense"] or o["mnli"].mean() > row["mnli"].mean())
            for o in found
        )
    return found


def markdown(found: list[dict[str, Any]], args: argparse.Namespace) -> str:
    lines = [
        f"| model | precision | MNLI-m | % of {args.reference} | HANS non-ent. | F_bias | ×dense b32 | "
        "INT8 − fp32 MNLI-m [95%] | INT8 − fp32 HANS non-ent. [95%] | Pareto |",
        "|---|---|---:|---:|---:|---:|---:|---|---|---|",
    ]
    for r in found:
        lines.append(
            f"| {r['model']} | {r['precision']} | {100 * r['mnli'].mean():.2f} | {100 * r['of_reference']:.1f}% | "
            f"{100 * r['hans_non'].mean():.2f} | {r['f_bias']:.3f} | {r['x_dense']:.2f} | "
            f"{r.get('mnli_change', '')} | {r.get('hans_non_change', '')} | {'yes' if r['front'] else ''} |"
        )
    return "\n".join(lines) + "\n"


def plot(found: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for precision, marker in (("fp32", "o"), ("int8", "s")):
        chosen = [r for r in found if r["precision"] == precision]
        ax.scatter([r["x_dense"] for r in chosen], [100 * r["mnli"].mean() for r in chosen], marker=marker,
                   label=precision)  # fmt: skip
        for r in chosen:
            ax.annotate(r["model"], (r["x_dense"], 100 * r["mnli"].mean()), fontsize=7, xytext=(3, 3),
                        textcoords="offset points")  # fmt: skip
    front = sorted((r for r in found if r["front"]), key=lambda r: r["x_dense"])
    ax.plot([r["x_dense"] for r in front], [100 * r["mnli"].mean() for r in front], "k--", lw=0.8, label="front")
    ax.set_xlabel("× float32 eager dense throughput (b32)")
    ax.set_ylabel("MNLI-m accuracy (%)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    found = rows(args)
    table = markdown(found, args)
    (args.folder / "table.md").write_text(table, encoding="utf-8")
    plot(found, args.folder / "pareto.png")
    print(table, end="")


if __name__ == "__main__":
    main()
