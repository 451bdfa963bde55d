"""The splits of one run: the task's training, ID dev and OOD sets from files, a data dir or the Hub."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from datasets import Dataset, concatenate_datasets

from ..errors import InputError, wrong_type
from . import tasks
from .loading import load_file, load_source
from .tasks import EvalSet, SplitSource, TaskSpec, ood_file_set

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SplitFiles:
    """Where a run's splits come from: given files (`train_file`, `validation_file`, `ood_files` as NAME=PATH, or
    NAME alone for a set registered for the task, `tasks.ood_file_set`), the labels of OOD sets (`ood_labels`,
    NAME=LABEL0,LABEL1,...), whether the task's default OOD sets are evaluated, the directory holding the task's
    files (else the Hub) and whether incomplete rows are dropped."""

    train_file: str | None = None
    validation_file: str | None = None
    ood_files: tuple[str, ...] = ()
    ood_labels: tuple[str, ...] = ()
    no_default_ood: bool = False
    data_dir: str | None = None
    skip_incomplete_rows: bool = False


def label_options(task: TaskSpec, label_names: tuple[str, ...]) -> dict[str, Any]:
    """How a set with `label_names` reads labels: integer ids index the task's published labels when the set
    uses the (restricted) task labels, and labels removed by `--task_labels` are refused by name."""
    if task.published_label_names and label_names == task.label_names:
        return {"id_label_names": task.file_label_names, "excluded_labels": task.excluded_label_names}
    return {}


def parse_ood_labels(specs: list[str]) -> dict[str, tuple[str, ...]]:
    """`--ood_labels NAME=LABEL0,LABEL1,...` -> {NAME: labels}."""
    out: dict[str, tuple[str, ...]] = {}
    for spec in specs:
        name, sep, labels = spec.partition("=")
        names = tuple(n.strip() for n in labels.split(","))
        if not sep or not name or len(names) < 2 or not all(names):
            raise InputError(f"--ood_labels expects NAME=LABEL0,LABEL1,... (at least 2 labels), got {spec!r}")
        if name in out:
            raise InputError(f"--ood_labels names the labels of {name!r} twice")
        out[name] = names
    return out


def ood_label_options(
    task: TaskSpec, eval_set: EvalSet, named: tuple[str, ...] | None
) -> tuple[EvalSet, dict[str, Any]]:
    """The OOD set and how its labels are read.

    Without `--ood_labels`, integer labels must use every id of the set's labels (else the file has another
    label set: refused). With `--ood_labels NAME=L0,L1,...`, integer id k means Lk: each Lk must be a label of the
    set (a label of the task, or an alias), or on an NLI task the names are entailment/non-entailment and the set
    is scored like HANS (neutral and contradiction predictions count as non-entailment).
    """
    fix = f"--ood_labels {eval_set.name}=LABEL0,LABEL1,..."
    if named is None:
        return eval_set, {**label_options(task, eval_set.label_names), "check_label_ids": fix}
    aliases = {k.lower(): v for k, v in task.label_aliases.items()}

    def resolve(labels: tuple[str, ...]) -> list[str] | None:
        lowered = {n.lower(): n for n in labels}
        out = [lowered.get(aliases.get(n.lower(), n).lower()) for n in named]
        return None if None in out else [str(n) for n in out]

    resolved = resolve(eval_set.label_names)
    if resolved is not None:
        options = label_options(task, eval_set.label_names)
        return eval_set, {**options, "id_label_names": resolved}
    if "entailment" in task.label_names:
        resolved = resolve(tasks.HANS_LABELS)
        if resolved is not None:
            logger.info(
                f"{eval_set.name}: labels {resolved}: scored like HANS (neutral/contradiction = non-entailment)"
            )
            return EvalSet(eval_set.name, eval_set.source, tasks.HANS_LABELS, kind="hans"), {"id_label_names": resolved}
    allowed = list(eval_set.label_names) + (list(tasks.HANS_LABELS[1:]) if "entailment" in task.label_names else [])
    raise InputError(
        f"--ood_labels {eval_set.name}={','.join(named)}: each label must be one of {allowed}"
        + (" (entailment/non-entailment: a 2-way set scored like HANS)" if "entailment" in task.label_names else "")
    )


def plan_ood_sets(
    task: TaskSpec, ood_files: Sequence[str] = (), no_default_ood: bool = False, ood_labels: Sequence[str] = ()
) -> list[tuple[EvalSet, str | None, dict[str, Any]]]:
    """A run's OOD sets, without loading them: (set, its `--ood_file` path or None, label options for `load_file`).

    The task's default sets (unless `no_default_ood`), then each `--ood_file NAME=PATH` or `--ood_file NAME` (a
    set registered for the task, e.g. `mnli_hard_matched`: read from its source, path None); a NAME of a default
    set replaces it. `--ood_labels` may turn a set into a HANS-style one (see `ood_label_options`).
    """
    file_sets = [(ood_file_set(spec, task), spec.partition("=")[2] or None) for spec in ood_files]
    names = [s.name for s, _ in file_sets]
    if len(set(names)) < len(names):
        raise InputError(f"--ood_file: two sets named {sorted({n for n in names if names.count(n) > 1})}")
    sets: list[tuple[EvalSet, str | None]] = []
    if not no_default_ood:
        for eval_set in task.ood:
            if eval_set.name in names:
                logger.info(f"--ood_file {eval_set.name}[=PATH] replaces the default {eval_set.name} set")
            else:
                sets.append((eval_set, None))
    sets += file_sets
    named = parse_ood_labels(list(ood_labels))
    unknown = sorted(set(named) - {s.name for s, _ in sets})
    if unknown:
        raise InputError(f"--ood_labels names {unknown}, but the OOD sets are {[s.name for s, _ in sets]}")
    out = []
    for eval_set, path in sets:
        eval_set, labels = ood_label_options(task, eval_set, named.get(eval_set.name))
        out.append((eval_set, path, labels))
    return out


def ood_eval_sets(
    task: TaskSpec, ood_files: Sequence[str] = (), no_default_ood: bool = False, ood_labels: Sequence[str] = ()
) -> list[EvalSet]:
    """The OOD sets a run evaluates (names, labels, kind), as `load_splits` builds them: for metric keys."""
    return [s for s, _, _ in plan_ood_sets(task, ood_files, no_default_ood, ood_labels)]


def read_split(
    task: TaskSpec,
    label_names: tuple[str, ...],
    *,
    name: str | None,
    file: str | None = None,
    source: SplitSource | None = None,
    data_dir: str | None = None,
    cache_dir: str | None = None,
    labels: dict[str, Any] | None = None,
    skip_incomplete_rows: bool = False,
) -> Dataset:
    """One split of `task` in the canonical columns: `file` if given, else `source` from `data_dir` or the Hub.

    `name` is what messages call the split (for a file, None: its path). A file is read in the task's published
    format (AG News: no header; IMDB-CAD: csv quoting), or in the format of `source` when it is an OOD set's (a
    robust-nli folder for the MNLI hard subsets; most OOD sets have none: a header line). Texts are read by meaning
    (`task.text_fields`), labels as `labels` says (default: `label_options(task, label_names)`);
    `skip_incomplete_rows` drops incomplete rows instead of failing.
    """
    if not isinstance(task, TaskSpec):
        raise wrong_type("read_split", "task", "a TaskSpec", task, "get it with hf_srnets.data.get_task('mnli')")
    if isinstance(label_names, str) or not all(isinstance(n, str) for n in label_names):  # a str: its letters
        raise wrong_type("read_split", "label_names", "a tuple of label names", label_names, "e.g. task.label_names")
    options: dict[str, Any] = {
        "text_fields": task.text_fields,
        "skip_incomplete_rows": skip_incomplete_rows,
        **(label_options(task, label_names) if labels is None else labels),
    }
    if file:
        file_format = (
            task.file_format if source is None or source in (task.train, task.validation) else source.file_format
        )
        return load_file(file, label_names, name=name, aliases=task.label_aliases, file_format=file_format, **options)
    if source is None:
        raise InputError(
            f"read_split: {name} has neither a file nor a source: pass file=PATH (a file in the task's format) or "
            "source= one of the task's splits (e.g. task.validation)"
        )
    return load_source(
        source, label_names, name=name, data_dir=data_dir, aliases=task.label_aliases, cache_dir=cache_dir, **options
    )


def load_splits(
    task: TaskSpec, files: SplitFiles, cache_dir: str | None
) -> tuple[Dataset, Dataset, list[tuple[EvalSet, Dataset]]]:
    """The training, ID dev and OOD sets of a run (each read by `read_split`).

    An `--ood_file` whose NAME is one of the task's default OOD sets replaces it. All sets must agree on single
    texts vs pairs.
    """

    def load(
        source: SplitSource, file: str | None, label_names: tuple[str, ...], name: str, labels: dict | None = None
    ) -> Dataset:
        return read_split(
            task,
            label_names,
            name=f"{name} ({file})" if file else name,
            file=file,
            source=source,
            data_dir=files.data_dir,
            cache_dir=cache_dir,
            labels=labels,
            skip_incomplete_rows=files.skip_incomplete_rows,
        )

    train = load(task.train, files.train_file, task.label_names, f"{task.name} train")
    validation = load(task.validation, files.validation_file, task.label_names, f"{task.name} validation")
    ood: list[tuple[EvalSet, Dataset]] = []
    for eval_set, path, labels in plan_ood_sets(task, files.ood_files, files.no_default_ood, files.ood_labels):
        ood.append((eval_set, load(eval_set.source, path, eval_set.label_names, eval_set.name, labels)))
    check_same_inputs([("train", train), ("validation", validation), *((s.name, d) for s, d in ood)])
    return train, validation, ood


def check_same_inputs(named_sets: list[tuple[str, Dataset]]) -> None:
    """Refuse a mix of single-text and pair sets (e.g. a training file without its hypothesis column)."""
    pairs = [n for n, d in named_sets if "sentence2" in d.column_names]
    singles = [n for n, d in named_sets if "sentence2" not in d.column_names]
    if pairs and singles:
        raise InputError(
            f"{singles} have one text column but {pairs} have text pairs: a model trained on one and evaluated on "
            "the other would be scored on inputs it never saw. Give every file both texts (or only one), with "
            "the same column names."
        )


EXTRA_TRAIN_PATTERN = re.compile(r"^(?P<name>[\w.-]+)=(?P<path>.+?)(?:x(?P<copies>\d+))?$")
# HANS (2-way) mixed into 3-way NLI training: non-entailment is trained as contradiction; HANS is scored with
# neutral and contradiction collapsed, so either non-entailment class counts as correct there.
NLI_EXTRA_ALIASES = {"non-entailment": "contradiction", "non_entailment": "contradiction"}


def _evaluation_paths(task: TaskSpec, files: SplitFiles, ood: list[tuple[EvalSet, Dataset]]) -> set[str]:
    """The absolute paths of every evaluation file of the run (given files, and the sets' files under --data_dir)."""
    eval_paths = {
        os.path.abspath(p) for p in [files.validation_file, *[o.partition("=")[2] for o in files.ood_files]] if p
    }
    if files.data_dir:
        for source in [task.validation, *(s.source for s, _ in ood)]:
            eval_paths |= {os.path.abspath(os.path.join(files.data_dir, rel)) for rel in source.local_paths}
    return eval_paths


def _refuse_evaluation_pairs(spec: str, extra: Dataset, eval_pairs: list[set[tuple[str, str]]]) -> None:
    """Refuse an extra set most of whose (sentence1, sentence2) pairs are in one evaluation set."""
    if "sentence2" not in extra.column_names:
        return
    pairs = set(zip(extra["sentence1"], extra["sentence2"]))
    for seen in eval_pairs:
        if len(pairs & seen) > len(pairs) / 2:
            raise InputError(
                f"--extra_train {spec}: most of its pairs are in an evaluation set; refusing "
                "to train on evaluation data."
            )


def _extra_copies(extra: Dataset, name: str, copies: int) -> list[Dataset]:
    """`copies` copies of an extra set, ids prefixed `NAME:` (one copy) or `NAME#k:`, with their source columns."""
    parts = []
    for k in range(copies):
        prefix = f"{name}:" if copies == 1 else f"{name}#{k}:"
        parts.append(
            extra.map(
                lambda row, p=prefix, n=name: {"id": p + row["id"], "source_name": n, "source_id": row["id"]},
                desc=f"adding {name}",
            )
        )
    return parts


def add_extra_training_data(
    train: Dataset, task: TaskSpec, specs: list[str], files: SplitFiles, ood: list[tuple[EvalSet, Dataset]]
) -> Dataset:
    """Append `NAME=PATH[xK]` sets to the training data (ids prefixed `NAME[#k]:`); refuse evaluation sets.

    Every returned row has `source_name` (`"train"` for the task's own rows, else the set's NAME) and `source_id`
    (its id in its own file), so per-example values such as p_b can be joined or predicted for extra rows too.
    """
    eval_paths = _evaluation_paths(task, files, ood)
    eval_pairs = [set(zip(d["sentence1"], d["sentence2"])) for _, d in ood if "sentence2" in d.column_names]
    columns = [c for c in ("id", "sentence1", "sentence2", "label") if c in train.column_names]
    own = train.select_columns(columns)
    parts = [own.add_column("source_name", ["train"] * len(own)).add_column("source_id", [str(i) for i in own["id"]])]
    aliases = {**task.label_aliases, **(NLI_EXTRA_ALIASES if "entailment" in task.label_names else {})}
    options = {
        "text_fields": task.text_fields,
        "skip_incomplete_rows": files.skip_incomplete_rows,
        **label_options(task, task.label_names),
    }
    for spec in specs:
        match = EXTRA_TRAIN_PATTERN.match(spec)
        if match is None:
            raise InputError(f"--extra_train expects NAME=PATH or NAME=PATHxK, got {spec!r}")
        name, path, copies = match["name"], match["path"], int(match["copies"] or 1)
        if os.path.abspath(path) in eval_paths:
            raise InputError(
                f"--extra_train {spec}: {path} is also an evaluation set; training on it would leak "
                "test data. Use the set's training split (e.g. hans/heuristics_train_set.tsv)."
            )
        extra = load_file(
            path, task.label_names, name=f"{name} ({path})", aliases=aliases, file_format=task.file_format, **options
        )
        check_same_inputs([("train", train), (f"--extra_train {name}", extra)])
        _refuse_evaluation_pairs(spec, extra, eval_pairs)
        parts.extend(_extra_copies(extra.select_columns(columns), name, copies))
        logger.info(f"Added {copies} x {len(extra)} examples of {name} to the training set")
    return concatenate_datasets(parts)


def evenly_spaced_rows(dataset: Dataset, n: int | None) -> Dataset:
    """`n` rows spread evenly over `dataset` (first and last included), in order; all of it when `n` is None or
    not below its length."""
    if n is None or n >= len(dataset):
        return dataset
    return dataset.select(np.linspace(0, len(dataset) - 1, n).round().astype(int).tolist())
