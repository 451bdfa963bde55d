"""What a card says of the data a run read: each split's actual origin (a local file by name, a file under
`--data_dir`, or a Hub split) and how many rows were used. Model-index results (the Hub's leaderboard metadata)
are claimed only for a full official split: loaded from the Hub, or from the task's local copy of it with the
official row count."""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from typing import Any

from ..data.loading import local_source_path
from ..data.tasks import EvalSet, SplitSource, TaskSpec

EXTRA_TRAIN_NAME = "extra"  # the training row of the `--extra_train` sets
ROLE_TITLES = {"train": "training", "validation": "ID evaluation", "ood": "OOD evaluation"}


@dataclass(frozen=True)
class DataSources:
    """Where a run was told to read its data and how much of it to use (`--train_file`, `--max_*_samples`, ...)."""

    train_file: str | None = None
    validation_file: str | None = None
    data_dir: str | None = None
    extra_train: tuple[str, ...] = ()  # `--extra_train` sets, `name=path` or a path
    max_train_samples: int | None = None
    max_eval_samples: int | None = None
    max_ood_samples: int | None = None
    transform: str | None = None  # `--data_transform`: what it did to the data, in words


@dataclass(frozen=True)
class SplitUse:
    """One split a run read: its role, where it came from, and how much of it was used."""

    role: str  # "train", "validation" or "ood"
    name: str
    origin: str  # markdown, without local absolute paths
    rows: int
    selection: str  # "all rows", "first 3,000 rows (--max_eval_samples 3000)", ...
    hub: SplitSource | None = None  # the official Hub split, set only when all of it was used

    def model_index_dataset(self) -> dict[str, Any] | None:
        """The model-index `dataset` entry, or None when the results are not on a full official split."""
        return self.hub.dataset_entry(self.name) if self.hub is not None else None


def _hub_label(source: SplitSource) -> str:
    return f"`{source.hub_path}`" + "".join(f" {p}" for p in (source.hub_config, source.hub_split) if p)


def _official_rows(source: SplitSource) -> int | None:
    return source.official_rows if source.hub_path is not None and source.hub_split is not None else None


def describe_split(
    role: str,
    name: str,
    source: SplitSource,
    file: str | None,
    data_dir: str | None,
    rows: int,
    cap: int | None,
    cap_flag: str,
    how: str = "first",
) -> SplitUse:
    """Where one split came from (as `load_splits` resolves it: a file, else `--data_dir`, else the Hub).

    `cap` is the `--max_*_samples` value that limited it (`cap_flag` names the flag) and `how` how rows were
    picked ("first" or "evenly spaced").
    """
    official = _official_rows(source)
    hub: SplitSource | None = None
    if file:
        origin = f"local file `{os.path.basename(file)}`"
    else:
        found = local_source_path(source, data_dir)
        local = os.path.relpath(found, data_dir) if found is not None and data_dir else None
        if local is not None:
            origin = f"`{local}` under `--data_dir`" + (
                f" (the task's local copy of {_hub_label(source)})" if source.hub_path else ""
            )
            hub = source if official is not None and rows == official else None
        elif source.hub_path:
            origin = f"Hub dataset {_hub_label(source)}"
            hub = source
        else:
            origin = "unknown source"
    capped = cap is not None and rows >= cap and rows != official
    if capped:
        of = f" of {official:,}" if official is not None and not file else ""
        selection = (
            f"first {rows:,}{of} rows ({cap_flag} {cap})"
            if how == "first"
            else f"{rows:,}{of} rows, evenly spaced ({cap_flag} {cap})"
        )
        hub = None
    else:
        selection = f"all {rows:,} rows"
    return SplitUse(role, name, origin, rows, selection, hub)


def _train_splits(task: TaskSpec, data_args: DataSources, train_rows: int, train_total: int) -> list[SplitUse]:
    """The training data: the task's own split (`train_total` rows read, capped by `--max_train_samples`) and the
    `--extra_train` sets (the rest of the `train_rows` used)."""
    own = min(train_total, data_args.max_train_samples) if data_args.max_train_samples is not None else train_total
    train = describe_split(
        "train",
        task.name,
        task.train,
        data_args.train_file,
        data_args.data_dir,
        own,
        data_args.max_train_samples,
        "--max_train_samples",
    )
    if own < train_total:
        of = f"first {own:,} of {train_total:,} rows (--max_train_samples {data_args.max_train_samples})"
        train = SplitUse("train", train.name, train.origin, own, of, None)
    splits = [train]
    if train_rows > own:
        names = ", ".join(f"`{re.split(r'[=]', s, maxsplit=1)[0]}`" for s in data_args.extra_train)
        splits.append(
            SplitUse(
                "train", EXTRA_TRAIN_NAME, f"--extra_train sets {names}", train_rows - own, "all rows, as given", None
            )
        )
    return splits


def describe_splits(
    task: TaskSpec,
    data_args: DataSources,
    *,
    train_rows: int,
    train_total: int,
    validation_rows: int,
    ood: list[tuple[EvalSet, int]],
    id_name: str | None = None,
) -> list[SplitUse]:
    """The splits of a run for its card: training (`train_total` rows read, `train_rows` used including
    `--extra_train` sets), ID evaluation and each OOD set with the rows evaluated."""
    splits = _train_splits(task, data_args, train_rows, train_total)
    splits.append(
        describe_split(
            "validation",
            id_name or task.name,
            task.validation,
            data_args.validation_file,
            data_args.data_dir,
            validation_rows,
            data_args.max_eval_samples,
            "--max_eval_samples",
        )
    )
    registered = {s.source for s in task.registered_sets}  # read from --data_dir or the Hub, not from a given file
    if data_args.transform:  # changed data: no claim of a result on the published split
        splits = [_transformed(s, data_args.transform) for s in splits]
    for eval_set, rows in ood:
        if data_args.transform and not (eval_set.source.hub_path or eval_set.source.local_paths):
            made = f"the ID evaluation set, changed by `--data_transform` ({eval_set.display_name or eval_set.name})"
            splits.append(SplitUse("ood", eval_set.name, made, rows, _made_selection(rows, data_args), None))
            continue
        file = None if eval_set.source in registered else (eval_set.source.local_paths or (None,))[0]
        splits.append(
            describe_split(
                "ood",
                eval_set.name,
                eval_set.source,
                file,
                data_args.data_dir,
                rows,
                data_args.max_ood_samples,
                "--max_ood_samples",
                how="evenly spaced",
            )
        )
    return splits


def training_datasets(splits: list[SplitUse], task: TaskSpec) -> list[str]:
    """Hub ids of the data the model was trained on (card metadata `datasets`): only a known Hub dataset
    (read from the Hub or from the task's local copy of it), never a guess about a user's file."""
    train = next((s for s in splits if s.role == "train"), None)
    if train is None or train.origin.startswith("local file") or task.train.hub_path is None:
        return []
    return [task.train.hub_path]


def _transformed(split: SplitUse, transform: str) -> SplitUse:
    """A split as the `--data_transform` left it: the task's own training set and the ID dev set are changed (and no
    longer the published split); `--extra_train` sets are mixed in after the transform, unchanged."""
    if split.role == "train" and split.name != EXTRA_TRAIN_NAME:
        return dataclasses.replace(split, origin=f"{split.origin}; then {transform}", hub=None)
    if split.role == "validation":
        return dataclasses.replace(split, origin=f"{split.origin}; then the same `--data_transform`", hub=None)
    return split


def _made_selection(rows: int, data_args: DataSources) -> str:
    """How many rows of a set made by the data transform were evaluated."""
    if data_args.max_ood_samples is not None:
        return f"{rows:,} rows, evenly spaced (--max_ood_samples {data_args.max_ood_samples})"
    return f"all {rows:,} rows"


def data_section(splits: list[SplitUse]) -> str:
    """A markdown table of the splits a run read."""
    lines = ["| role | set | source | rows used |", "|---|---|---|---|"]
    lines += [f"| {ROLE_TITLES.get(s.role, s.role)} | {s.name} | {s.origin} | {s.selection} |" for s in splits]
    note = (
        "Results on a subset or on a local file are not entered as Hub model-index results; only a full official "
        "split is."
    )
    return "\n".join(lines) + "\n\n" + note


def card_dataset(name: str, source: SplitSource) -> dict[str, Any]:
    """The model-index `dataset` entry: the Hub id when the set is on the Hub, else its name."""
    return source.dataset_entry(name)
