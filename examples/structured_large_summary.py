"""Write `summary.json` of a structured sweep (`structured_large_minilm_mnli.sh`, `structured_weights_...sh`,
`structured_students_...sh`): one row per model.

    python examples/structured_large_summary.py outputs/structured_large_minilm_mnli \\
        --dense outputs/rmc_large_minilm_mnli/teacher --output results/structured_large_minilm_mnli

Rows, in the sweep's method order then by sparsity:
- `method`; `granularity` (dense, or the run's `mask_granularity`; a recovery run's, that of the search whose compact
  model or ticket it trained); `recipe` (`dense`; `student`: a dense model the run made smaller with
  `--student_layers` / `--student_ffn_size`; `frozen`: the search over frozen weights; `weights`: the search with
  `train_weights`; `weights+recovery` (or `frozen+recovery`): a run without pruning that fine-tuned such a search's
  compact model, or its ticket through `--mask_from`); `sparsity` (the target; 0 for a student);
- `mnli_m` and `hans_non_entailment` (means over the seeds, in %, of `eval_mnli_accuracy` and
  `eval_hans_non-entailment_accuracy`), `hans_entailment`, `seeds` (those found);
- `recipe_train_steps` and `recipe_train_runtime_s`: the training steps and seconds of the row's recipe (a recovery
  run's with its search's), means over the seeds;
- `cpu_throughput_vs_dense_b32`: the examples/s at batch 32 of each seed's saved model (`merged/`, compact where the
  masks removed units, or the run dir itself for a recovery run or a student, which saves its trained model there;
  none for a search whose ticket a recovery row trained and timed; the global budget cuts each seed's layers
  differently) over the dense model's, on CPU with `--threads` threads, all models
  timed in one alternating run (`hf_srnets.evaluation.speed`), the mean over the seeds (each seed's in
  `cpu_throughput_vs_dense_b32_by_seed`); `cpu_latency_vs_dense_b1`, the dense model's milliseconds per forward of
  one example over the model's (above 1 = faster), from the same run, likewise.
The dense row is 1.0 by definition. Beside `summary.json`: `speed.md` (examples/s and ms per forward of every model at
both batch sizes, with the CPU and thread count) and `pareto.png` (MNLI-m and HANS non-entailment against the b32
throughput ratio).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

import torch

from hf_srnets.evaluation.speed import SpeedRow, cpu_name, load_for_speed, measure_speed, speed_table
from hf_srnets.run_files import MERGED_DIR, MODEL_CONFIG_NAME, RESULTS_NAME, SRNET_CONFIG_NAME

METRICS = {"mnli_m": "eval_mnli_accuracy", "hans_non_entailment": "eval_hans_non-entailment_accuracy"}
EXTRA = {"hans_entailment": "eval_hans_entailment_accuracy"}
# the recipes' methods (structured_large_minilm_mnli.yaml, structured_weights_large_minilm_mnli.yaml); any other after
ORDER = (
    "dense",
    "element",
    "head",
    "ffn",
    "ffn_weights",
    "ffn_recovered",
    "hybrid",
    "hybrid_weights",
    "hybrid_recovered",
    "hybrid_weights_924",
    "cofi",
    "cofi_recovered",
    "student_l3",
    "student_l2",
    "student_l3_ffn768",
)  # fmt: skip  (and structured_students_large_minilm_mnli.yaml's)
RUN_META = "sweep_run.json"  # the sweep's record of a run (hf_srnets.experiments.sweep_runs), with its argv


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep", type=Path, help="The sweep's output_dir (<method>/s<sparsity>/seed<seed>/).")
    parser.add_argument("--dense", required=True, help="The dense model dir (the teacher the searches start from).")
    parser.add_argument("--output", type=Path, required=True, help="The folder of summary.json.")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads of the speed measurement.")
    parser.add_argument("--seq_length", type=int, default=64, help="Tokens per example when timing.")
    parser.add_argument("--rounds", type=int, default=5, help="Alternating rounds of the speed measurement.")
    parser.add_argument("--batches", type=int, default=8, help="Timed forwards per model, batch size and round.")
    parser.add_argument(
        "--shapes_only",
        action="store_true",
        help="Time models built from each saved config.json (its shapes, the removed heads and FFN units removed) "
        "with fresh weights: for runs made on another machine whose weights stayed there. Speed depends on the "
        "shapes only; speed.md says which was timed.",
    )
    return parser.parse_args(argv)


def method_order(sweep: Path) -> list[str]:
    """The methods with a finished run: those of `ORDER` in that order, then any other by name."""
    names = {p.parents[2].name for p in sweep.glob(f"*/s*/seed*/{RESULTS_NAME}")}
    return sorted(names, key=lambda name: (ORDER.index(name) if name in ORDER else len(ORDER), name))


def search_config(run: Path) -> dict[str, Any] | None:
    """The mask config of the run's search, or of the search whose model a recovery run trained; None for a model no
    search made (the dense one, a student)."""
    for folder in (run, search_source(run)):
        if folder is not None and (folder / SRNET_CONFIG_NAME).is_file():
            return json.loads((folder / SRNET_CONFIG_NAME).read_text(encoding="utf-8"))
    return None


def argument(run: Path, flag: str) -> str | None:
    """The value of `flag` in the run's arguments (its sweep record), or None."""
    meta = run / RUN_META
    argv = json.loads(meta.read_text(encoding="utf-8")).get("argv", []) if meta.is_file() else []
    return argv[argv.index(flag) + 1] if flag in argv[:-1] else None


def starting_model(run: Path) -> Path | None:
    """The `--model_name_or_path` the run trained from (its sweep record's arguments), when it names a local dir."""
    path = argument(run, "--model_name_or_path")
    return Path(path) if path is not None and Path(path).is_dir() else None


def search_source(run: Path) -> Path | None:
    """The search a run without pruning trained on: its `--mask_from` (a ticket, with the weights the search trained)
    or the run dir holding its `--model_name_or_path` (a search's saved model, `merged/`); None otherwise."""
    if argument(run, "--pruning") not in (None, "none"):
        return None
    mask_from = argument(run, "--mask_from")
    if mask_from is not None and (Path(mask_from) / SRNET_CONFIG_NAME).is_file():
        return Path(mask_from)
    source = starting_model(run)
    return source.parent if source is not None and (source.parent / SRNET_CONFIG_NAME).is_file() else None


def is_recovery(run: Path) -> bool:
    """A run without pruning that trained a search's model: its saved model or its ticket (`search_source`)."""
    return search_source(run) is not None


def is_student(run: Path) -> bool:
    """A dense model made smaller by the run's own `--student_layers` / `--student_ffn_size`."""
    return any(argument(run, flag) is not None for flag in ("--student_layers", "--student_ffn_size"))


def granularity(run: Path) -> str:
    config = search_config(run)
    return "dense" if config is None else config.get("mask_granularity", "element")


def recipe(run: Path) -> str:
    """`dense`, `student`, `frozen`, `weights`, or either of the two with `+recovery` (module docstring)."""
    config = search_config(run)
    if config is None:
        return "student" if is_student(run) else "dense"
    searched = "weights" if config.get("train_weights") else "frozen"
    return f"{searched}+recovery" if is_recovery(run) else searched


def collect(sweep: Path) -> list[dict[str, Any]]:
    """One group per (method, sparsity): its runs by seed, with their results."""
    groups = []
    for method in method_order(sweep):
        for level in sorted((sweep / method).glob("s*"), key=lambda p: float(p.name[1:])):
            runs = sorted(level.glob(f"seed*/{RESULTS_NAME}"), key=lambda p: int(p.parent.name[4:]))
            if runs:
                groups.append({"method": method, "sparsity": float(level.name[1:]), "runs": [p.parent for p in runs]})
    if not groups or groups[0]["method"] != "dense":
        raise SystemExit(f"no finished dense run under {sweep}: run examples/structured_large_minilm_mnli.sh first")
    return groups


def run_budget(run: Path) -> tuple[float, float]:
    """(training steps, training seconds) of the run's recipe: the run's own, plus the search's for a recovery run."""
    results = json.loads((run / RESULTS_NAME).read_text(encoding="utf-8"))
    steps, seconds = float(results.get("train_steps", 0)), float(results.get("train_runtime", 0.0))
    search = search_source(run)
    if search is not None and (search / RESULTS_NAME).is_file():
        more = run_budget(search)
        steps, seconds = steps + more[0], seconds + more[1]
    return steps, seconds


def mean_percent(runs: list[Path], key: str) -> float | None:
    values = [json.loads((run / RESULTS_NAME).read_text(encoding="utf-8")).get(key) for run in runs]
    values = [v for v in values if v is not None]
    return round(100 * statistics.fmean(values), 2) if values else None


def saved_models(group: dict[str, Any]) -> dict[str, str]:
    """`<method>@<sparsity>/seed<n>` -> the saved model dir of each of the group's runs that saved one."""
    name = f"{group['method']}@{group['sparsity']}"
    saved = {}
    for run in group["runs"]:
        if (run / MERGED_DIR).is_dir():
            saved[f"{name}/{run.name}"] = str(run / MERGED_DIR)
        elif (is_recovery(run) or is_student(run)) and (run / MODEL_CONFIG_NAME).is_file():
            saved[f"{name}/{run.name}"] = str(run)  # a run without masks saves its trained model in its own dir
    return saved


def write_speed_table(speed: list[SpeedRow], args: argparse.Namespace, path: Path) -> None:
    """The speed run's rows as text, headed by where and how they were measured."""
    head = (
        f"CPU: {cpu_name()}, {args.threads} threads, float32, {args.seq_length} tokens per example, "
        f"{args.rounds} alternating rounds of {args.batches} forwards per model and batch size (medians)."
    )
    if args.shapes_only:
        head += (
            " Timed on models of each saved model's shapes (built from its config.json, fresh weights: "
            "--shapes_only), the saved weights being on the machine that trained them."
        )
    path.write_text(f"{head}\n\n```\n{speed_table(speed)}\n```\n", encoding="utf-8")


def plot_pareto(rows: list[dict[str, Any]], path: Path) -> None:
    """Accuracy (MNLI-m, HANS non-entailment) against the b32 CPU throughput ratio, a point per model."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharex=True)
    panels = (("mnli_m", "MNLI-m (%)"), ("hans_non_entailment", "HANS non-entailment (%)"))
    for ax, (column, title) in zip(axes, panels):
        for row in rows:
            if row[column] is None or row["cpu_throughput_vs_dense_b32"] is None:
                continue
            label = row["method"] + ("" if row["sparsity"] == 0 else f" {round(100 * row['sparsity'])}%")
            ax.scatter(row["cpu_throughput_vs_dense_b32"], row[column])
            ax.annotate(label, (row["cpu_throughput_vs_dense_b32"], row[column]), fontsize=7)
        ax.set_xlabel("CPU throughput at batch 32, × dense")
        ax.set_ylabel(title)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def recovered_elsewhere(group: dict[str, Any], groups: list[dict[str, Any]]) -> bool:
    """Whether every run of the group is the search of a recovery run of another group (its `--mask_from`)."""
    sources = {search_source(run) for other in groups for run in other["runs"]}
    return all(run in sources for run in group["runs"])


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    groups = collect(args.sweep)
    saved = [{"dense": args.dense} if g["method"] == "dense" else saved_models(g) for g in groups]
    models = {
        name: load_for_speed(path, "cpu", "float32", shapes_only=args.shapes_only)
        for names in saved
        for name, path in names.items()
    }
    timing = {"length": args.seq_length, "rounds": args.rounds, "batches": args.batches}
    speed = measure_speed(models, [32, 1], reference="dense", **timing)
    ratio = {row.model: row.throughput_vs_dense for row in speed if row.batch_size == 32}
    latency = {row.model: row.latency_vs_dense for row in speed if row.batch_size == 1}
    rows = []
    for group, saved_of_group in zip(groups, saved):
        names = list(saved_of_group)
        first = group["runs"][0]
        if not names and not recovered_elsewhere(group, groups):
            raise SystemExit(f"no saved model under {first}/{MERGED_DIR}: run the sweep with save_merged")
        row = {"method": group["method"], "granularity": granularity(first), "recipe": recipe(first)}
        row["sparsity"] = group["sparsity"]
        row.update({column: mean_percent(group["runs"], key) for column, key in {**METRICS, **EXTRA}.items()})
        row["seeds"] = [int(run.name[4:]) for run in group["runs"]]
        budgets = [run_budget(run) for run in group["runs"]]
        row["recipe_train_steps"] = round(statistics.fmean(b[0] for b in budgets))
        row["recipe_train_runtime_s"] = round(statistics.fmean(b[1] for b in budgets), 1)
        if not names:  # a search whose ticket a recovery row trained and saved: timed there
            rows.append({**row, "cpu_throughput_vs_dense_b32": None, "cpu_latency_vs_dense_b1": None})
            continue
        row["cpu_throughput_vs_dense_b32"] = round(statistics.fmean(ratio[n] for n in names), 3)
        row["cpu_latency_vs_dense_b1"] = round(statistics.fmean(latency[n] for n in names), 3)
        if group["method"] != "dense":
            row["cpu_throughput_vs_dense_b32_by_seed"] = [round(ratio[n], 3) for n in names]
            row["cpu_latency_vs_dense_b1_by_seed"] = [round(latency[n], 3) for n in names]
        rows.append(row)
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "summary.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    write_speed_table(speed, args, args.output / "speed.md")
    plot_pareto(rows, args.output / "pareto.png")
    print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
