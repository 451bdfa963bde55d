"""The splits of one run: the task's training, ID dev and OOD sets from files, a data dir or the Hub."""

from __future__ import annotations

import logging
import os
import re

import numpy as np
from datasets import Dataset, concatenate_datasets

from ..arguments import DataArguments
from . import tasks
from .loading import load_file, load_source
from .tasks import EvalSet, SplitSource, TaskSpec, ood_file_set

logger = logging.getLogger(__name__)


def resolve_task(data_args: DataArguments) -> TaskSpec:
    """`--task` with its labels restricted/reordered by `--task_labels` (see `tasks.resolve_task`)."""
    return tasks.resolve_task(data_args.task, data_args.task_labels)


def label_options(task: TaskSpec, label_names: tuple[str, ...]) -> dict:
    """How a set with `label_names` reads labels: integer ids index the task's published labels when the set
    uses the (restricted) task labels, and labels removed by `--task_labels` are refused by name."""
    if task.published_label_names and label_names == task.label_names:
        return {"id_label_names": task.file_label_names, "excluded_labels": task.excluded_label_names}
    return {}


def load_splits(
    task: TaskSpec, data_args: DataArguments, cache_dir: str | None
) -> tuple[Dataset, Dataset, list[tuple[EvalSet, Dataset]]]:
    def load(source: SplitSource, file: str | None, labels: tuple[str, ...], name: str) -> Dataset:
        if file:
            return load_file(
                file, labels, name=f"{name} ({file})", aliases=task.label_aliases, **label_options(task, labels)
            )
        return load_source(
            source,
            labels,
            name=name,
            data_dir=data_args.data_dir,
            aliases=task.label_aliases,
            cache_dir=cache_dir,
            **label_options(task, labels),
        )

    train = load(task.train, data_args.train_file, task.label_names, f"{task.name} train")
    validation = load(task.validation, data_args.validation_file, task.label_names, f"{task.name} validation")
    ood: list[tuple[EvalSet, Dataset]] = []
    if not data_args.no_default_ood:
        for eval_set in task.ood:
            ood.append((eval_set, load(eval_set.source, None, eval_set.label_names, eval_set.name)))
    for spec in data_args.ood_file:
        eval_set = ood_file_set(spec, task)
        path = eval_set.source.local_paths[0]
        ood.append(
            (
                eval_set,
                load_file(
                    path,
                    eval_set.label_names,
                    name=f"{eval_set.name} ({path})",
                    aliases=task.label_aliases,
                    **label_options(task, eval_set.label_names),
                ),
            )
        )
    return train, validation, ood


EXTRA_TRAIN_PATTERN = re.compile(r"^(?P<name>[\w.-]+)=(?P<path>.+?)(?:x(?P<copies>\d+))?$")
# HANS (2-way) mixed into 3-way NLI training: non-entailment is trained as contradiction; HANS is scored with
# neutral and contradiction collapsed, so either non-entailment class counts as correct there.
NLI_EXTRA_ALIASES = {"non-entailment": "contradiction", "non_entailment": "contradiction"}


def add_extra_training_data(
    train: Dataset, task: TaskSpec, specs: list[str], data_args: DataArguments, ood: list[tuple[EvalSet, Dataset]]
) -> Dataset:
    """Append `NAME=PATH[xK]` sets to the training data (ids prefixed `NAME[#k]:`); refuse evaluation sets."""
    eval_paths = {
        os.path.abspath(p) for p in [data_args.validation_file, *[o.split("=", 1)[1] for o in data_args.ood_file]] if p
    }
    if data_args.data_dir:
        for source in [task.validation, *(s.source for s, _ in ood)]:
            eval_paths |= {os.path.abspath(os.path.join(data_args.data_dir, rel)) for rel in source.local_paths}
    eval_pairs = [set(zip(d["sentence1"], d["sentence2"])) for _, d in ood if "sentence2" in d.column_names]
    columns = [c for c in ("id", "sentence1", "sentence2", "label") if c in train.column_names]
    parts = [train.select_columns(columns)]
    aliases = {**task.label_aliases, **(NLI_EXTRA_ALIASES if "entailment" in task.label_names else {})}
    for spec in specs:
        match = EXTRA_TRAIN_PATTERN.match(spec)
        if match is None:
            raise ValueError(f"--extra_train expects NAME=PATH or NAME=PATHxK, got {spec!r}")
        name, path, copies = match["name"], match["path"], int(match["copies"] or 1)
        if os.path.abspath(path) in eval_paths:
            raise ValueError(
                f"--extra_train {spec}: {path} is also an evaluation set; training on it would leak "
                "test data. Use the set's training split (e.g. hans/heuristics_train_set.tsv)."
            )
        extra = load_file(
            path, task.label_names, name=f"{name} ({path})", aliases=aliases, **label_options(task, task.label_names)
        )
        if "sentence2" in extra.column_names:
            pairs = set(zip(extra["sentence1"], extra["sentence2"]))
            for seen in eval_pairs:
                if len(pairs & seen) > len(pairs) / 2:
                    raise ValueError(
                        f"--extra_train {spec}: most of its pairs are in an evaluation set; refusing "
                        "to train on evaluation data."
                    )
        extra = extra.select_columns(columns)
        for k in range(copies):
            prefix = f"{name}:" if copies == 1 else f"{name}#{k}:"
            parts.append(extra.map(lambda row, p=prefix: {"id": p + row["id"]}, desc=f"adding {name}"))
        logger.info(f"Added {copies} x {len(extra)} examples of {name} to the training set")
    return concatenate_datasets(parts)


def evenly_spaced(dataset: Dataset, n: int | None) -> Dataset:
    if n is None or n >= len(dataset):
        return dataset
    return dataset.select(np.linspace(0, len(dataset) - 1, n).round().astype(int).tolist())
