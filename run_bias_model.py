#!/usr/bin/env python
"""Train the bias-only model (Win-win appendix B.3.1, Clark et al. 2019) and write p_b for the debiasing losses.

    python run_bias_model.py --task mnli --data_dir ../shared/data --output_dir bias
    python run_glue_sparse.py ... --loss poe --bias_predictions bias/bias_train.jsonl

Writes `<output_dir>/bias_<split>.jsonl` (`{"id": ..., "probs": [...]}` per line, the task's label order)
for `train` and every predicted split, and `<output_dir>/bias_report.json` (vectors used, accuracy and
per-gold-label breakdown per split), and logs the report as a table.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from datasets import ClassLabel, Dataset
from transformers import HfArgumentParser

from hf_srnets.bias import compute_bias_predictions, save_bias_predictions
from hf_srnets.data import TASKS, TaskSpec, get_task, load_file, load_source

logger = logging.getLogger("run_bias_model")


@dataclass
class BiasModelArguments:
    task: str = field(
        metadata={"help": "The task: its bias features, labels and default splits.", "choices": sorted(TASKS)}
    )
    output_dir: str = field(metadata={"help": "Where bias_<split>.jsonl and bias_report.json are written."})
    data_dir: str | None = field(
        default=None,
        metadata={
            "help": "Directory with the task's files (e.g. mnli/dev_matched.tsv, "
            "hans/heuristics_evaluation_set.tsv); else the Hub is tried."
        },
    )
    train_file: str | None = field(
        default=None, metadata={"help": "Training set file (.tsv/.csv/.jsonl) instead of the task's train split."}
    )
    predict_file: list[str] = field(
        default_factory=list,
        metadata={
            "help": "NAME=PATH of a split to predict (repeatable). Replaces the default splits (the task's "
            "validation and OOD sets). If NAME is one of the task's OOD sets (e.g. hans), its "
            "labels are used.",
            "action": "extend",
        },
    )
    vectors: str | None = field(
        default=None,
        metadata={
            "help": "Word vectors: a fastText .bin, a .vec or GloVe text file. Default: fastText "
            "trained on the training text (cached in --cache_dir)."
        },
    )
    cache_dir: str | None = field(
        default=None, metadata={"help": "Cache for trained vectors (and Hub data). Default: <output_dir>/cache."}
    )
    seed: int = field(default=42, metadata={"help": "Seed of the vector training and the bias model."})
    max_train_samples: int | None = field(
        default=None, metadata={"help": "Train on the first N training examples only (as run_glue_sparse.py)."}
    )


def parse_predict_file(spec: str) -> tuple[str, str]:
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise ValueError(f"--predict_file {spec!r}: expected NAME=PATH, e.g. --predict_file hans=hans/eval.tsv")
    if name == "train":
        raise ValueError("--predict_file train=...: 'train' is the training set; use --train_file, or another NAME")
    return name, path


def _with_label_names(dataset: Dataset, label_names: tuple[str, ...], task: TaskSpec) -> Dataset:
    """Mark a split whose labels are not the task's (e.g. HANS) with a ClassLabel, so the report collapses it."""
    if label_names == tuple(task.label_names):
        return dataset
    return dataset.cast_column("label", ClassLabel(names=list(label_names)))


def load_data(args: BiasModelArguments, task: TaskSpec) -> tuple[Dataset, dict[str, Dataset]]:
    """The training set and the splits to predict (see the argument help for the defaults)."""
    aliases = task.label_aliases
    predict = [parse_predict_file(spec) for spec in args.predict_file]  # fail before loading anything
    names = [name for name, _ in predict]
    if len(set(names)) != len(names):
        raise ValueError(f"--predict_file: split names must be unique, got {names}")
    if args.train_file:
        train = load_file(args.train_file, task.label_names, name=f"train ({args.train_file})", aliases=aliases)
    else:
        train = load_source(
            task.train,
            task.label_names,
            name="train",
            data_dir=args.data_dir,
            aliases=aliases,
            cache_dir=args.cache_dir,
        )
    if args.max_train_samples is not None:
        if args.max_train_samples < 1:
            raise ValueError(f"--max_train_samples must be positive, got {args.max_train_samples}")
        train = train.select(range(min(args.max_train_samples, len(train))))
    ood = {s.name: s for s in task.ood}
    splits: dict[str, Dataset] = {}
    if predict:
        for name, path in predict:
            label_names = ood[name].label_names if name in ood else task.label_names
            ds = load_file(path, label_names, name=f"{name} ({path})", aliases=aliases)
            splits[name] = _with_label_names(ds, tuple(label_names), task)
        return train, splits
    splits["validation"] = load_source(
        task.validation,
        task.label_names,
        name="validation",
        data_dir=args.data_dir,
        aliases=aliases,
        cache_dir=args.cache_dir,
    )
    for eval_set in task.ood:
        try:
            ds = load_source(
                eval_set.source,
                eval_set.label_names,
                name=eval_set.name,
                data_dir=args.data_dir,
                aliases=aliases,
                cache_dir=args.cache_dir,
            )
        except (FileNotFoundError, OSError) as err:
            logger.warning("Skipping OOD set %s: %s", eval_set.name, err)
            continue
        splits[eval_set.name] = _with_label_names(ds, tuple(eval_set.label_names), task)
    return train, splits


def main(argv: list[str] | None = None) -> dict[str, Any]:
    (args,) = HfArgumentParser(BiasModelArguments).parse_args_into_dataclasses(args=argv)
    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        level=logging.INFO,
        handlers=[logging.StreamHandler(sys.stdout)],
    )
    task = get_task(args.task)
    cache_dir = args.cache_dir or os.path.join(args.output_dir, "cache")
    train, splits = load_data(args, task)
    logger.info(
        "Bias model for %s: train %d examples; predicting %s",
        task.name,
        len(train),
        ", ".join(f"{n} ({len(d)})" for n, d in splits.items()) or "train only",
    )
    predictions, report = compute_bias_predictions(
        task, train, splits, vectors=args.vectors, cache_dir=cache_dir, seed=args.seed
    )
    paths = save_bias_predictions(args.output_dir, predictions, report)
    for split, path in paths.items():
        logger.info("Wrote p_b for %s (%d examples) to %s", split, len(predictions[split]), path)
    logger.info(
        "Wrote %s; train with: run_glue_sparse.py --task %s --bias_predictions %s ...",
        os.path.join(args.output_dir, "bias_report.json"),
        task.name,
        paths["train"],
    )
    return report


if __name__ == "__main__":
    main()
