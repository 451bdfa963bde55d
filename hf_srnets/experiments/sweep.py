"""A sweep (`run_sweep.py`, whose docstring gives the recipe format): the recipe from a file or from one method's
run_glue_sparse.py arguments, its runs started or resumed one after another (`sweep_runs` plans them), then the
summary (`summary_pipeline`): runs.csv, summary.csv/md and the plots. Progress goes to this module's logger (the
command prints it)."""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Callable
from typing import Any

from ..arguments.glue_sparse_arguments import parse_args, validate_args
from ..arguments.sweep_arguments import SweepArguments
from ..errors import InputError
from ..run_files import (
    SWEEP_PAIRED_PLOT,
    SWEEP_RUNS_TABLE,
    SWEEP_SUMMARY_MARKDOWN,
    SWEEP_SUMMARY_PLOT,
    SWEEP_SUMMARY_TABLE,
    replaced_file,
)
from ..runner.data import run_task, run_transform
from ..training.output_dir import (
    OutputDirError,
    OutputDirLock,
    acquire_lock,
    check_is_folder,
    handing_over,
    is_checkpoint,
    lock_holder_words,
    orphaned_run_pid,
    read_lock,
)
from .child_runs import run_glue_sparse, sets_flag
from .summary_pipeline import plot_summary, summarize_runs, summary_markdown
from .sweep_recipe import load_recipe
from .sweep_runs import (
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
from .sweep_summary import budget_line, collect, default_metrics, write_csv

logger = logging.getLogger(__name__)

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
        or default_metrics(
            run_task(data_args), data_args.ood_file, data_args.no_default_ood, data_args.ood_labels, run_transform(run)
        ),
        "methods": {method_name or f"{model_args.pruning}_{args.loss}": method},
    }


def select_methods(methods: dict[str, Any], names: list[str], recipe_path: str) -> dict[str, Any]:
    """The recipe's methods restricted to `names`, in the recipe's order (later methods may use earlier ones)."""
    unknown = [n for n in names if n not in methods]
    if unknown:
        raise InputError(f"{recipe_path} has no method {', '.join(unknown)}; its methods are {', '.join(methods)}")
    return {name: args for name, args in methods.items() if name in names}


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
    logger.info(status_report(statuses))
    saving = checkpoint_argv(recipe.get("checkpoint_steps"))
    for status in statuses:
        if status.state == "done":  # a sweep killed between a run's end and its clean-up left its checkpoints
            if saving and not recipe.get("keep_checkpoints"):
                remove_checkpoints(status.run)
            continue
        run = status.run
        lock, status = record_run(status)
        if status.state == "done":  # a run its killed sweep had left writing, which this sweep waited for
            lock.release()
            if saving and not recipe.get("keep_checkpoints"):
                remove_checkpoints(run)
            continue
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
        logger.info(f"== {run.label}: resuming from {status.checkpoint}")
        runner([*run.argv, *saving, "--resume_from_checkpoint", status.checkpoint])
    else:  # the sweep owns the run dir: what an earlier attempt left is cleared (sweep_run.json stays)
        logger.info(f"== {run.label}")
        runner([*run.argv, *saving, "--overwrite_output_dir", "true"])


def record_run(status: RunStatus) -> tuple[OutputDirLock, RunStatus]:
    """Take the run dir's lock and write the run's `sweep_run.json`, once its state is still the one planned: a dir
    that another run (another sweep's) is using is refused before its record is touched, so a refused sweep changes
    nothing; a dir another sweep finished or changed since the plan is refused too. A run that a killed sweep left
    writing there is waited for (`acquire_after_orphan`), and the run's state then taken anew. Return the lock,
    which the caller hands to the run (`handing_over`) and releases after it, and the run's state."""
    run = status.run
    lock, waited = acquire_after_orphan(run.output_dir)  # OutputDirError, naming the holder, for any other holder
    try:
        now = run_status(run)
        if waited:
            status = now
            if now.state in ("done", "changed"):
                if now.state == "changed":
                    raise changed_runs_error([now])
                return lock, now
        if now.state != status.state:
            raise InputError(
                f"{run.output_dir} changed while this sweep started (planned: {status.state}, now: {now.state}); "
                "another sweep or run is writing there: wait for it to end, then run the sweep again"
            )
        write_meta(run)
    except BaseException:
        lock.release()
        raise
    return lock, status


ORPHAN_POLL_SECONDS = 2.0


def acquire_after_orphan(output_dir: str) -> tuple[OutputDirLock, bool]:
    """The lock of a run dir (`acquire_lock`), after waiting for the run a killed sweep left writing there, if any
    (it holds the lock until it ends: `orphaned_run_pid`), saying once which process it waits for. Returns the lock
    and whether it waited."""
    waited = False
    while True:
        try:
            return acquire_lock(output_dir), waited
        except OutputDirError:
            holder = read_lock(output_dir)
            orphan = orphaned_run_pid(holder)
            if orphan is None:
                raise
            if not waited:
                logger.warning(
                    f"Waiting for {output_dir}: {lock_holder_words(holder)}. It holds the dir until it ends; this "
                    f"sweep then resumes or skips the run (stop it with `kill {orphan}` not to wait)"
                )
            waited = True
            time.sleep(ORPHAN_POLL_SECONDS)


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


def recipe_from_file(args: SweepArguments, overrides: dict[str, Any]) -> dict[str, Any]:
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


def sweep_recipe(args: SweepArguments, run_argv: list[str] | None) -> dict[str, Any]:
    """The recipe `args` ask for: a one-method recipe from `run_argv` (the arguments after `--`), or the recipe
    file with the command line's grid, metrics, dirs and methods over its own; checked before any run."""
    sparsities, seeds, metrics = args.sparsity_grid(), args.seed_list(), args.metric_list()
    if run_argv is not None:
        recipe = recipe_from_run_args(run_argv, args.output_dir, sparsities, seeds or [42], args.method_name, metrics)
        recipe.update(reference=args.reference, baseline=args.baseline)
    else:
        overrides = {"sparsities": sparsities, "seeds": seeds, "metrics": metrics, "output_dir": args.output_dir}
        recipe = recipe_from_file(args, {**overrides, "reference": args.reference, "baseline": args.baseline})
    recipe.update({k: v for k, v in (("checkpoint_steps", args.checkpoint_steps),) if v})
    recipe["keep_checkpoints"] = args.keep_checkpoints or recipe.get("keep_checkpoints", False)
    if recipe.get("output_dir"):
        check_is_folder(str(recipe["output_dir"]))
    return recipe


def run_sweep(
    args: SweepArguments, run_argv: list[str] | None = None, runner: Callable[[list[str]], None] | None = None
) -> list[dict[str, Any]]:
    """The sweep `args` (and `run_argv`) describe: run what is not done, then summarize; return the summary rows."""
    recipe = sweep_recipe(args, run_argv)
    return sweep(recipe, runner=runner or run_one, aggregate_only=args.aggregate_only, rerun_changed=args.rerun_changed)
