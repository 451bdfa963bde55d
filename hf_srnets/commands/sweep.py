"""Run methods over sparsities and seeds with run_glue_sparse.py; aggregate mean ± std and plot (Win-win Fig. 2).

    python run_sweep.py examples/sweep_minilm_mnli.yaml                      # a recipe
    python run_sweep.py recipe.yaml --sparsities 0.3,0.5,0.7 --seeds 1,2     # override its grid
    python run_sweep.py recipe.yaml --methods full_ce,mask_poe               # only these methods of the recipe
    python run_sweep.py recipe.yaml --aggregate_only                         # just collect, CSV and plot
    python run_sweep.py --sparsities 0.2,0.3,0.5,0.7,0.9 --seeds 1,2,3,4 --output_dir sweeps/mnli \
        -- --model_name_or_path outputs/full_ce --task mnli --pruning mask --loss poe \
        --bias_predictions bias/bias_train.jsonl --do_train               # one method, no recipe

Recipe (YAML): `output_dir`, `sparsities`, `seeds`, `metrics` (keys of all_results.json, the ID one first),
`common` (arguments of run_glue_sparse.py shared by every run), `methods` (name -> its own arguments, where
`sparsities` may narrow the grid for that method) and optionally `reference` (a full-model method: every other
method's ID metric is also given as a percentage of it, and every metric as a difference from it; and each run's
F_bias = Δ_run / Δ_reference (Du et al. 2023, §3.4) against the reference run of its seed, else their mean, goes
to runs.csv, summary.csv, summary.md and an F_bias panel of the plot). With `baseline` (a method of the recipe;
default: the `reference`) and runs that hold per-example predictions (`eval_predictions/`, which every run of
run_glue_sparse.py writes), each other method's accuracy/F1 metrics get the mean difference from the baseline over
the seeds both ran, on the same examples, with a paired bootstrap 95% interval over the examples and `*` when it
excludes 0 (summary.csv: `<metric>_paired_diff`, `_paired_low`, `_paired_high`, `_paired_seeds`,
`_paired_outside_noise`; summary.md: a table of them). The baseline's runs at the method's sparsity are paired,
else those of the baseline's only sparsity. Methods with `pruning: none` are full models, run once per seed at
sparsity 0. A recipe is checked before any run (`hf_srnets.experiments.sweep_recipe`): an unknown key (with the
nearest valid name), a repeated key or a value of the wrong type is refused naming the key. Writes
`<output_dir>/summary.csv` (mean ± std), `summary.md` (the same as a Markdown table, the paired differences
and a budget line: runs, hours of training and evaluation), `runs.csv` (one row per run), `summary.png` (each
metric against sparsity) and, with a baseline, `paired.png` (a method per line with its paired interval).

Without a recipe, the arguments after `--` (a run_glue_sparse.py config file and/or flags, without `--sparsity`,
`--seed` or `--output_dir`, which the sweep sets) are one method, named `<pruning>_<loss>` unless `--method_name`
says otherwise; `--seeds` defaults to 42 and `--metrics` to the task's ID metric and its OOD sets' metrics.

Interrupted at any point, the same command continues the sweep (`hf_srnets.experiments.sweep_runs`): it first
says how many runs are done, to resume and to start; a finished run is skipped when its recorded settings (a
fingerprint of its arguments, in its `sweep_run.json`) are the recipe's, and an unfinished one resumes from its last
checkpoint when it has one, else starts again in its cleared dir. Runs save a checkpoint only with
`--checkpoint_steps N` (or the recipe's `checkpoint_steps`): every N steps, the last one kept, removed when the run
finishes unless `--keep_checkpoints`. A run dir made with other settings than the recipe's now is refused unless
`--rerun_changed`.

String values may hold `{seed}` and `{output_dir}` (the sweep's), `{sparsity}` and environment variables (`$MINILM`),
so a pruning method can start from the full model of its own seed, e.g.
`model_name_or_path: "{output_dir}/full_ce/s0/seed{seed}"` after a `full_ce` method (methods run in order), and a
method without pruning can train each sparse model of an earlier method (a recovery stage:
`model_name_or_path: "{output_dir}/hybrid/s{sparsity}/seed{seed}/merged"`; it runs at every sparsity, without
`--sparsity`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Callable
from typing import Any

from ..cli.options import parse_args, validate_args
from ..errors import InputError, run_script
from ..experiments.child_runs import run_glue_sparse, sets_flag
from ..experiments.summary_pipeline import plot_summary, summarize_runs, summary_markdown
from ..experiments.sweep_recipe import load_recipe
from ..experiments.sweep_runs import (
    PlannedRun,
    RunStatus,
    changed_runs_error,
    checkpoint_argv,
    is_full_model,
    planned_runs,
    run_status,
    status_report,
    write_meta,
)
from ..experiments.sweep_summary import (
    budget_line,
    collect,
    default_metrics,
    write_csv,
)
from ..run_files import (
    RESULTS_NAME,
    SWEEP_PAIRED_PLOT,
    SWEEP_RUNS_TABLE,
    SWEEP_SUMMARY_MARKDOWN,
    SWEEP_SUMMARY_PLOT,
    SWEEP_SUMMARY_TABLE,
    replaced_file,
)
from ..runner.data import run_task
from ..training.output_dir import OutputDirLock, acquire_lock, check_is_folder, handing_over, is_checkpoint

# reported per run in runs.csv besides the recipe's metrics
RUN_EXTRAS = ("sparsity_measured", "train_runtime", "train_steps")
SWEEP_SET_FLAGS = ("--sparsity", "--seed", "--output_dir")


def recipe_from_run_args(
    run_argv: list[str],
    output_dir: str,
    sparsities: list[float] | None,
    seeds: list[int],
    method_name: str | None = None,
    metrics: list[str] | None = None,
) -> dict[str, Any]:
    """A one-method recipe from run_glue_sparse.py arguments, checked before anything runs."""
    for flag in SWEEP_SET_FLAGS:
        if sets_flag(run_argv, flag):
            raise InputError(
                f"{flag} is set by the sweep for every run: remove it from the run_glue_sparse.py arguments"
            )
    run = parse_args([*run_argv, "--output_dir", output_dir])
    validate_args(run)
    model_args, data_args, args = run.model, run.data, run.training
    method: dict[str, Any] = {"argv": list(run_argv), "pruning": model_args.pruning}
    if model_args.mask_from:
        method["mask_from"] = model_args.mask_from
    if not is_full_model(method) and not sparsities:
        raise InputError(f"--pruning {model_args.pruning} needs --sparsities, e.g. --sparsities 0.3,0.5,0.7")
    return {
        "output_dir": output_dir,
        "sparsities": sparsities or [0.0],
        "seeds": seeds,
        "metrics": metrics
        or default_metrics(run_task(data_args), data_args.ood_file, data_args.no_default_ood, data_args.ood_labels),
        "methods": {method_name or f"{model_args.pruning}_{args.loss}": method},
    }


def select_methods(methods: dict[str, Any], names: list[str], recipe_path: str) -> dict[str, Any]:
    """The recipe's methods restricted to `names`, in the recipe's order (later methods may use earlier ones)."""
    unknown = [n for n in names if n not in methods]
    if unknown:
        raise InputError(f"{recipe_path} has no method {', '.join(unknown)}; its methods are {', '.join(methods)}")
    return {name: args for name, args in methods.items() if name in names}


def parse_list(text: str | None, kind: type, flag: str, example: str) -> list | None:
    """A comma-separated option as a list of `kind` (None if not given); a bad item is an `InputError`."""
    if not text:
        return None
    try:
        return [kind(item) for item in text.split(",")]
    except ValueError:
        bad = next(item for item in text.split(",") if not _parses(item, kind))
        raise InputError(
            f"{flag} {text}: {bad!r} is not {'a number' if kind is float else 'an integer'}; give a comma-separated "
            f"list without spaces, e.g. {flag} {example}"
        ) from None


def _parses(item: str, kind: type) -> bool:
    try:
        kind(item)
    except ValueError:
        return False
    return True


def run_one(argv: list[str]) -> None:
    """Run one run of the sweep (`run_glue_sparse.py`); a failed run stops the sweep with one line."""
    run_glue_sparse(argv, "run", "run the sweep again")


def run_sweep_runs(recipe: dict[str, Any], runner: Callable[[list[str]], None], rerun_changed: bool = False) -> None:
    """Run what is not done yet (`hf_srnets.experiments.sweep_runs`): resume a run from its last checkpoint when it
    has one of the same settings, else start it in its cleared dir; say what is done and what is left first."""
    statuses = [run_status(run) for run in planned_runs(recipe)]
    changed = [s for s in statuses if s.state == "changed"]
    if changed and not rerun_changed:
        raise changed_runs_error(changed)
    print(status_report(statuses), flush=True)
    saving = checkpoint_argv(recipe.get("checkpoint_steps"))
    for status in statuses:
        if status.state == "done":  # a sweep killed between a run's end and its clean-up left its checkpoints
            if saving and not recipe.get("keep_checkpoints"):
                remove_checkpoints(status.run)
            continue
        run = status.run
        lock = record_run(status)
        try:
            with handing_over(lock):  # the run starts under the sweep's lock: no other run can slip in between
                start_run(status, runner, saving)
        finally:
            lock.release()
        if saving and not recipe.get("keep_checkpoints"):
            remove_checkpoints(run)


def start_run(status: RunStatus, runner: Callable[[list[str]], None], saving: list[str]) -> None:
    """Resume the run from its checkpoint, or start it in its cleared dir."""
    run = status.run
    if status.state == "resume":
        print(f"== {run.label}: resuming from {status.checkpoint}", flush=True)
        runner([*run.argv, *saving, "--resume_from_checkpoint", status.checkpoint])
    else:  # the sweep owns the run dir: what an earlier attempt left is cleared (sweep_run.json stays)
        print(f"== {run.label}", flush=True)
        runner([*run.argv, *saving, "--overwrite_output_dir", "true"])


def record_run(status: RunStatus) -> OutputDirLock:
    """Take the run dir's lock and write the run's `sweep_run.json`, once its state is still the one planned: a dir
    that another run (another sweep's) is using is refused before its record is touched, so a refused sweep changes
    nothing; a dir another sweep finished or changed since the plan is refused too. Return the lock, which the
    caller hands to the run (`handing_over`) and releases after it."""
    run = status.run
    lock = acquire_lock(run.output_dir)  # OutputDirError, naming the holder, while another run writes there
    try:
        now = run_status(run)
        if now.state != status.state:
            raise InputError(
                f"{run.output_dir} changed while this sweep started (planned: {status.state}, now: {now.state}); "
                "another sweep or run is writing there: wait for it to end, then run the sweep again"
            )
        write_meta(run)
    except BaseException:
        lock.release()
        raise
    return lock


def remove_checkpoints(run: PlannedRun) -> None:
    """A finished run's checkpoints are only for resuming it: remove them (Trainer checkpoint folders only)."""
    for name in os.listdir(run.output_dir):
        path = os.path.join(run.output_dir, name)
        if is_checkpoint(path):
            shutil.rmtree(path)


def sweep(
    recipe: dict[str, Any],
    runner: Callable[[list[str]], None] = run_one,
    aggregate_only: bool = False,
    rerun_changed: bool = False,
) -> list:
    if not aggregate_only:
        run_sweep_runs(recipe, runner, rerun_changed)
    return summarize(recipe)


def summarize(recipe: dict[str, Any]) -> list[dict[str, Any]]:
    """Aggregate the finished runs into summary.csv/md, runs.csv and summary.png (module doc); return the rows."""
    records, out, metrics = collect(recipe["output_dir"]), recipe["output_dir"], recipe["metrics"]
    reference = recipe.get("reference")
    baseline = recipe.get("baseline") or reference
    summary = summarize_runs(records, metrics, reference, baseline)
    if summary.rows:
        per_run = ["method", "sparsity", "seed", *metrics, *summary.f_bias, *RUN_EXTRAS]
        write_csv([{k: r[k] for k in per_run if k in r} for r in records], os.path.join(out, SWEEP_RUNS_TABLE))
        write_csv(summary.rows, os.path.join(out, SWEEP_SUMMARY_TABLE))
        with replaced_file(os.path.join(out, SWEEP_SUMMARY_MARKDOWN)) as f:
            f.write(summary_markdown(summary, metrics, reference, baseline) + "\n" + budget_line(records))
        plots = (os.path.join(out, SWEEP_SUMMARY_PLOT), os.path.join(out, SWEEP_PAIRED_PLOT))
        plot_summary(summary.rows, metrics, summary.f_bias, baseline, *plots)
    return summary.rows


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recipe", nargs="?", help="a YAML recipe; or give run_glue_sparse.py arguments after --")
    parser.add_argument("--sparsities", help="comma-separated, e.g. 0.2,0.3,0.5")
    parser.add_argument("--seeds", help="comma-separated, e.g. 1,2,3,4")
    parser.add_argument("--methods", help="comma-separated names of the recipe's methods to run (default: all)")
    parser.add_argument("--metrics", help=f"comma-separated {RESULTS_NAME} keys to aggregate and plot")
    parser.add_argument("--reference", help="a full-model method to compare every method with (e.g. full_ce)")
    parser.add_argument(
        "--baseline", help="a method to give every other method's paired differences and intervals against"
    )
    parser.add_argument("--method_name", help="without a recipe: the method's name (default <pruning>_<loss>)")
    parser.add_argument("--output_dir")
    parser.add_argument("--aggregate_only", action="store_true")
    parser.add_argument(
        "--checkpoint_steps", type=int, help="every run saves a checkpoint every N steps, to resume from if stopped"
    )
    parser.add_argument("--keep_checkpoints", action="store_true", help="keep a finished run's last checkpoint")
    parser.add_argument(
        "--rerun_changed", action="store_true", help="run again the run dirs made with other settings than now"
    )
    return parser


def recipe_from_file(args: argparse.Namespace, overrides: dict[str, Any]) -> dict[str, Any]:
    """The recipe file, checked against its schema (`sweep_recipe`), with the command line's grid, metrics, dirs and
    methods over its own."""
    recipe = load_recipe(args.recipe)
    recipe.update({key: value for key, value in overrides.items() if value})
    for key in ("output_dir", "sparsities", "seeds", "metrics", "methods"):
        if key not in recipe:
            raise InputError(f"{args.recipe} lacks {key!r}; see the docstring of run_sweep.py")
    if args.methods:
        recipe["methods"] = select_methods(recipe["methods"], args.methods.split(","), args.recipe)
    return recipe


def main(argv: list[str] | None = None, runner: Callable[[list[str]], None] = run_one) -> list[dict[str, Any]]:
    argv = list(sys.argv[1:] if argv is None else argv)
    run_argv = argv[argv.index("--") + 1 :] if "--" in argv else None
    argv = argv[: argv.index("--")] if "--" in argv else argv
    parser = build_parser()
    args = parser.parse_args(argv)
    sparsities = parse_list(args.sparsities, float, "--sparsities", "0.2,0.3,0.5")
    seeds = parse_list(args.seeds, int, "--seeds", "1,2,3")
    metrics = args.metrics.split(",") if args.metrics else None
    if run_argv is not None:
        if args.recipe:
            parser.error("give either a recipe or run_glue_sparse.py arguments after --, not both")
        if not args.output_dir:
            parser.error("a sweep without a recipe needs --output_dir")
        recipe = recipe_from_run_args(run_argv, args.output_dir, sparsities, seeds or [42], args.method_name, metrics)
        recipe.update(reference=args.reference, baseline=args.baseline)
    elif args.recipe:
        overrides = {"sparsities": sparsities, "seeds": seeds, "metrics": metrics, "output_dir": args.output_dir}
        recipe = recipe_from_file(args, {**overrides, "reference": args.reference, "baseline": args.baseline})
    else:
        parser.error("give a recipe, or run_glue_sparse.py arguments after --")
    recipe.update({k: v for k, v in (("checkpoint_steps", args.checkpoint_steps),) if v})
    recipe["keep_checkpoints"] = args.keep_checkpoints or recipe.get("keep_checkpoints", False)
    if recipe.get("output_dir"):
        check_is_folder(str(recipe["output_dir"]))
    rows = sweep(recipe, runner=runner, aggregate_only=args.aggregate_only, rerun_changed=args.rerun_changed)
    for row in rows:
        print(row)
    return rows


if __name__ == "__main__":
    raise SystemExit(run_script(main))
