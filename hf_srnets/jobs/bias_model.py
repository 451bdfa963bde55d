"""One `run_bias_model.py` run from its parsed arguments (`hf_srnets.arguments.bias_model_arguments`), `run_bias_model`:
the output dir taken (refused if it holds another run, cleared on request, locked; `hf_srnets.training.output_dir`),
the training set and the splits to predict (`load_data`), the bias model fitted (features chosen by
`bias.choose_bias_model`), p_b written per split with the report (`write_bias_predictions`), and the report logged:
calibration per split, a near-uniform warning, the run_glue_sparse.py flags that use the p_b."""

from __future__ import annotations

import dataclasses
import logging
import os
from typing import Any

from datasets import ClassLabel, Dataset

from ..arguments.bias_model_arguments import CACHE_NAME, BiasModelArguments, parse_ood_file
from ..bias import choose_bias_model, compute_bias_predictions, save_bias_predictions
from ..bias.report import near_uniform_warning
from ..data import EvalSet, TaskSpec, ood_file_set, resolve_task
from ..data.splits import check_same_inputs, ood_label_options, parse_ood_labels, read_split
from ..errors import InputError
from ..run_files import BIAS_REPORT_NAME
from ..training.output_dir import prepare_output_dir

logger = logging.getLogger("run_bias_model")


def _with_label_names(dataset: Dataset, label_names: tuple[str, ...], task: TaskSpec) -> Dataset:
    """Mark a split whose labels are not the task's (e.g. HANS) with a ClassLabel, so the report collapses it."""
    if label_names == tuple(task.label_names):
        return dataset
    return dataset.cast_column("label", ClassLabel(names=list(label_names)))


def predict_options(args: BiasModelArguments) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """The `--ood_file` splits as (NAME, PATH) and the `--ood_labels` per NAME, checked before loading anything:
    unique names, and labels only for named splits."""
    predict = [parse_ood_file(spec) for spec in args.ood_file]
    names = [name for name, _ in predict]
    if len(set(names)) != len(names):
        raise InputError(f"--ood_file: split names must be unique, got {names}")
    ood_labels = parse_ood_labels(args.ood_labels)
    unknown = sorted(set(ood_labels) - set(names))
    if unknown:
        raise InputError(f"--ood_labels names {unknown}, but the --ood_file splits are {names}")
    return predict, ood_labels


def load_data(args: BiasModelArguments, task: TaskSpec) -> tuple[Dataset, dict[str, Dataset]]:
    """The training set and the splits to predict (see the argument help for the defaults).

    Files are read as `run_glue_sparse.py` reads them (`hf_srnets.data.splits`): texts by meaning, integer label
    ids in the task's published order, labels left out by --task_labels refused by name.
    """
    predict, ood_labels = predict_options(args)  # fail before loading anything
    train = load_train(args, task)
    if predict:
        splits = load_predict_files(task, predict, ood_labels)
        check_same_inputs([("train", train), *splits.items()])
        return train, splits
    if task.name == "custom":
        logger.info("--task custom without --ood_file: predicting the training set only")
        return train, {}
    return train, load_default_splits(args, task)


def load_train(args: BiasModelArguments, task: TaskSpec) -> Dataset:
    """`--train_file` or the task's training split, capped by `--max_train_samples`."""
    if not args.train_file and task.name == "custom":
        raise InputError("--task custom has no default training set: pass --train_file")
    train = read_split(
        task,
        task.label_names,
        name=f"train ({args.train_file})" if args.train_file else "train",
        file=args.train_file,
        source=task.train,
        data_dir=args.data_dir,
        cache_dir=args.cache_dir,
    )
    if args.max_train_samples is not None:
        if args.max_train_samples < 1:
            raise InputError(f"--max_train_samples must be positive, got {args.max_train_samples}")
        train = train.select(range(min(args.max_train_samples, len(train))))
    return train


def load_predict_files(
    task: TaskSpec, predict: list[tuple[str, str]], ood_labels: dict[str, Any]
) -> dict[str, Dataset]:
    """The `--ood_file NAME=PATH` splits, each with its labels (a task's OOD set by NAME, else read like one)."""
    ood = {s.name: s for s in task.ood}
    splits: dict[str, Dataset] = {}
    for name, path in predict:
        eval_set = ood[name] if name in ood else ood_file_set(f"{name}={path}", task)
        eval_set = EvalSet(name, eval_set.source, eval_set.label_names, eval_set.kind)
        eval_set, labels = ood_label_options(task, eval_set, ood_labels.get(name))
        ds = read_split(
            task, eval_set.label_names, name=f"{name} ({path})", file=path, source=eval_set.source, labels=labels
        )
        splits[name] = _with_label_names(ds, tuple(eval_set.label_names), task)
    return splits


def load_default_splits(args: BiasModelArguments, task: TaskSpec) -> dict[str, Dataset]:
    """The task's validation split and its OOD sets (a set that cannot be read is skipped with a warning)."""
    where = {"data_dir": args.data_dir, "cache_dir": args.cache_dir}
    splits = {"validation": read_split(task, task.label_names, name="validation", source=task.validation, **where)}
    for eval_set in task.ood:
        eval_set, labels = ood_label_options(task, eval_set, None)
        try:
            ds = read_split(
                task, eval_set.label_names, name=eval_set.name, source=eval_set.source, labels=labels, **where
            )
        except (FileNotFoundError, OSError) as err:
            logger.warning("Skipping OOD set %s: %s", eval_set.name, err)
            continue
        splits[eval_set.name] = _with_label_names(ds, tuple(eval_set.label_names), task)
    return splits


def files_read(args: BiasModelArguments) -> list[tuple[str, str | None]]:
    """What the script reads, as (the flag that names it, its path): what `--overwrite_output_dir` must never
    delete."""
    files = [("--train_file", args.train_file), *[("--ood_file", spec.partition("=")[2]) for spec in args.ood_file]]
    return files + [("--vectors", args.vectors), ("--cache_dir", args.cache_dir), ("--data_dir", args.data_dir)]


def run_bias_model(args: BiasModelArguments) -> dict[str, Any]:
    """Take the output dir (refused if it holds another run, cleared on request, locked), then fit the bias model
    and write p_b per split and the report there (`write_bias_predictions`); return the report."""
    with prepare_output_dir(
        args.output_dir,
        overwrite=args.overwrite_output_dir,
        resume=None,
        is_main_process=True,
        reads=files_read(args),
        ignore=() if args.cache_dir else (CACHE_NAME,),
    ):
        return write_bias_predictions(args)


def write_bias_predictions(args: BiasModelArguments) -> dict[str, Any]:
    """Fit the bias model, write p_b per split and the report into the prepared output dir; return the report."""
    task = resolve_task(args.task, args.task_labels)
    cache_dir = args.cache_dir or os.path.join(args.output_dir, CACHE_NAME)
    train, splits = load_data(args, task)
    task = dataclasses.replace(task, bias_model=choose_bias_model(task, train, args.bias_model))
    logger.info(
        "Bias model for %s (%s features, labels %s): train %d examples; predicting %s",
        task.name,
        task.bias_model,
        ",".join(task.label_names),
        len(train),
        ", ".join(f"{n} ({len(d)})" for n, d in splits.items()) or "train only",
    )
    predictions, report = compute_bias_predictions(
        task, train, splits, vectors=args.vectors, cache_dir=cache_dir, seed=args.seed, C=args.C,
        cross_fit=args.cross_fit,
    )  # fmt: skip
    paths = save_bias_predictions(args.output_dir, predictions, report, datasets={"train": train, **splits})
    for split, path in paths.items():
        logger.info("Wrote p_b for %s (%d examples) to %s", split, len(predictions[split]), path)
    log_report(report)
    log_next_step(args, task, paths["train"])
    return report


def log_report(report: dict[str, Any]) -> None:
    """Each split's calibration, then a warning for each predicted split whose p_b is near uniform when the
    training set's is not."""
    for split, rep in report["splits"].items():
        cal = rep.get("calibration")
        if cal:
            logger.info(
                "Calibration on %s: mean p_b of the gold label %.3f (uniform: %.3f); mean confidence %.3f vs "
                "accuracy %.3f; ECE %.3f",
                split,
                cal["mean_gold_prob"],
                cal["uniform_prob"],
                cal["mean_confidence"],
                cal["accuracy"],
                cal["ece"],
            )
    if near_uniform_warning(report, "train") is None and len(report["splits"]) > 1:
        for split in list(report["splits"])[1:]:
            warning = near_uniform_warning(report, split)
            if warning:
                logger.warning(warning)


def log_next_step(args: BiasModelArguments, task: TaskSpec, train_path: str) -> None:
    """Where the report is, and the run_glue_sparse.py flags that train with the training set's p_b."""
    labels = f" --task_labels {','.join(task.label_names)}" if args.task_labels else ""
    logger.info(
        "Wrote %s; train with: run_glue_sparse.py --task %s%s --bias_predictions %s ...",
        os.path.join(args.output_dir, BIAS_REPORT_NAME),
        task.name,
        labels,
        train_path,
    )
