"""Align a run's label order with a fine-tuned checkpoint's own `id2label`, by name (as transformers' run_glue.py).

A checkpoint fine-tuned elsewhere may order the same labels differently (e.g. `{0: contradiction, 1: neutral,
2: entailment}`). Its outputs keep their meaning: the run adopts the checkpoint's order, remaps the gold label
ids of every set that uses the task's labels, and permutes the p_b / p_t columns. Prediction files are read
and written in the task's own order (`--task`/`--task_labels`), whatever the checkpoint's.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from datasets import Dataset

from ..errors import InputError
from ..run_files import MODEL_CONFIG_NAME
from .example_columns import per_label_columns
from .tasks import TaskSpec, relabelled

logger = logging.getLogger(__name__)

_DEFAULT_NAME = re.compile(r"^LABEL_\d+$")


def is_fine_tuned_classifier(config: Any) -> bool:
    return any(a.endswith("ForSequenceClassification") for a in getattr(config, "architectures", None) or [])


RELABEL_HINT = "pick the task's labels with --task_labels"  # run_glue_sparse.py's option; other scripts pass theirs


def checkpoint_label_order(
    config: Any, task: TaskSpec, model_name: str, relabel_hint: str = RELABEL_HINT
) -> tuple[str, ...] | None:
    """The task's label names in the checkpoint's id order, or None when the task's order applies.

    None for a checkpoint that is not a fine-tuned classifier (its head is new) or whose labels are unnamed
    (`LABEL_0`, ...: a warning says the task's order is assumed). Raises when the checkpoint is a classifier
    over another number of labels or over labels of other names.
    """
    if not is_fine_tuned_classifier(config):
        return None
    id2label = {int(k): str(v) for k, v in (getattr(config, "id2label", None) or {}).items()}
    task_labels = list(task.label_names)
    if len(id2label) != len(task_labels):
        raise InputError(
            f"{model_name} is a classifier with {len(id2label)} labels, but task {task.name!r} has "
            f"{len(task_labels)} ({task_labels}). Use a checkpoint fine-tuned on this task, or the pre-trained model."
        )
    names = [id2label[i] for i in sorted(id2label)]
    if all(_DEFAULT_NAME.match(n) for n in names):
        logger.warning(
            f"{model_name} names its labels {names}: assuming they are in the task's order {task_labels}. "
            f"If the checkpoint was trained with another order, set id2label in its {MODEL_CONFIG_NAME}."
        )
        return None
    by_name = {_canonical(n, task): n for n in task_labels}
    order = [by_name.get(_canonical(n, task)) for n in names]
    if None in order or len(set(order)) != len(order):
        raise InputError(
            f"{model_name} was fine-tuned with labels {names}, which do not match task {task.name!r}'s labels "
            f"{task_labels}. Use a checkpoint fine-tuned on this task, name its labels in its {MODEL_CONFIG_NAME} "
            f"(id2label), or {relabel_hint}."
        )
    if order != task_labels:
        logger.warning(  # a wrong id2label turns every prediction: say it where users look
            f"Aligned labels by name with {model_name}: its order {names} is used instead of {task_labels} (from "
            f"id2label in its {MODEL_CONFIG_NAME}; if that map is wrong, fix it there)"
        )
    return tuple(order)


def _canonical(name: str, task: TaskSpec) -> str:
    aliases = {k.lower(): v for k, v in task.label_aliases.items()}
    lowered = name.strip().lower()
    return aliases.get(lowered, name).strip().lower()


def reorder_task(task: TaskSpec, order: Sequence[str]) -> TaskSpec:
    """The task with its labels (and those of its default and optional OOD sets that use the task's labels) in
    `order`."""
    return relabelled(task, tuple(order))


def label_permutation(old: Sequence[str], new: Sequence[str]) -> list[int]:
    """`perm[j]` is the old id of the label that gets id j."""
    return [list(old).index(name) for name in new]


def remap_dataset(dataset: Dataset, perm: list[int], *, labels: bool = True) -> Dataset:
    """Gold ids and per-label columns (probabilities, `per_label_columns`) of a set in the old label order, moved
    to the new order."""
    if perm == list(range(len(perm))):
        return dataset
    new_id = {old: new for new, old in enumerate(perm)}
    columns = [c for c in per_label_columns() if c in dataset.column_names]

    def move(batch: dict[str, list]) -> dict[str, list]:
        out: dict[str, list] = {}
        if labels:
            out["label"] = [new_id.get(y, y) for y in batch["label"]]  # -1 (unlabelled) stays
        for c in columns:
            out[c] = [[row[i] for i in perm] for row in batch[c]]
        return out

    return dataset.map(move, batched=True, desc="aligning labels with the checkpoint")


def to_task_order(probs: Any, perm: list[int]) -> Any:
    """Rows of probabilities in the new order, put back in the old (the task's) order for prediction files."""
    inverse = [perm.index(i) for i in range(len(perm))]
    return probs[:, inverse]
