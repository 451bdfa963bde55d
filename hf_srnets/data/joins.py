"""Join per-example values (p_b, p_t, d_i) to a training set by example id, with the rows of extra training sets.

A training set may hold the rows of extra training sets (`--extra_train NAME=PATH`, OOD-informed search, Win-win
§4.5): such a row carries `source_name` NAME and `source_id`, its id in its own file (or the id prefix `NAME:` /
`NAME#k:` that `hf_srnets.data.splits.add_extra_training_data` gives it). `row_sources` tells each row's set and
own id, `extra_sets` rebuilds each extra set once, and `join_probabilities` adds a column whose values come from the
task's own predictions by id and from each extra set's predictions by its own id: a missing row is an error naming
the file, never a silent misalignment, and so is a row whose text differs from the `text_digest` the file records
for it (`hf_srnets.data.text_digests`): each row is checked against the file it was joined from
(`hf_srnets.data.columns.add_probability_column` joins one file to a set without extra rows).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from datasets import Dataset

from ..errors import InputError
from .text_digests import DEFAULT_FIX, check_texts

TRAIN_SOURCE = "train"
EXTRA_NAME = re.compile(r"^(?P<name>[\w.-]+)=")


def extra_names(specs: Sequence[str]) -> list[str]:
    """The NAMEs of `--extra_train NAME=PATH[xK]` specs, in order, each once."""
    names = [m["name"] for m in (EXTRA_NAME.match(s) for s in specs) if m]
    return list(dict.fromkeys(names))


def row_sources(train: Dataset, names: Sequence[str]) -> tuple[list[str], list[str]]:
    """Per training row: the set it comes from (`"train"` or an extra set's NAME) and its id in that set.

    From the `source_name`/`source_id` columns when the rows have them, else from the `NAME:`/`NAME#k:` id
    prefix `add_extra_training_data` gives extra rows.
    """
    data = train.select_columns([c for c in ("id", "source_name", "source_id") if c in train.column_names]).to_dict()
    ids = [str(i) for i in data["id"]]
    if "source_name" in data and "source_id" in data:
        return [str(s) for s in data["source_name"]], [str(s) for s in data["source_id"]]
    if not names:
        return [TRAIN_SOURCE] * len(ids), ids
    prefix = re.compile(r"^(?P<name>" + "|".join(re.escape(n) for n in names) + r")(?:#\d+)?:(?P<id>.*)$", re.S)
    sources, source_ids = [], []
    for row_id in ids:
        match = prefix.match(row_id)
        sources.append(match["name"] if match else TRAIN_SOURCE)
        source_ids.append(match["id"] if match else row_id)
    return sources, source_ids


def extra_sets(train: Dataset, sources: list[str], source_ids: list[str]) -> dict[str, Dataset]:
    """Each extra set's rows once (its `NAME#k:` copies share a source id), with its own ids: NAME -> dataset."""
    columns = [c for c in ("sentence1", "sentence2", "label") if c in train.column_names]
    data = train.select_columns(columns).to_dict()
    out: dict[str, dict[str, list]] = {}
    seen: dict[str, set[str]] = {}
    for i, (name, source_id) in enumerate(zip(sources, source_ids, strict=True)):
        if name == TRAIN_SOURCE or source_id in seen.setdefault(name, set()):
            continue
        seen[name].add(source_id)
        rows = out.setdefault(name, {"id": [], **{c: [] for c in columns}})
        rows["id"].append(source_id)
        for c in columns:
            rows[c].append(data[c][i])
    return {name: Dataset.from_dict(rows) for name, rows in out.items()}


def join_probabilities(
    train: Dataset,
    column: str,
    sources: list[str],
    source_ids: list[str],
    own: dict[str, list[float]],
    own_source: str,
    extra: dict[str, tuple[dict[str, list[float]], str]],
    *,
    allow_extra: bool,
    digests: Mapping[str, Mapping[str, str]] | None = None,
    fix: str = DEFAULT_FIX,
) -> Dataset:
    """Add `column` to `train`: the task's own rows from `own` by id, extra set NAME's rows from
    `extra[NAME] = (predictions, source)` by source id. Missing rows are an error naming the file and the fix;
    so are predictions for rows not in the training set, unless `allow_extra`. `digests` (source -> that file's
    `read_text_digests`): each row's text must have the digest its file records under the id it was joined by,
    else an error ending in `fix` (`text_digests.check_texts`: a file not in `digests` is not checked, one
    with {} is joined by id with a warning)."""
    ids = [str(i) for i in train.select_columns(["id"]).to_dict()["id"]]
    values: list[list[float]] = []
    lookups: list[tuple[str, str]] = []
    missing: dict[str, list[str]] = {}
    for row_id, name, source_id in zip(ids, sources, source_ids, strict=True):
        if name == TRAIN_SOURCE:
            probs, lookup = own.get(row_id), (own_source, row_id)
        elif row_id in own:  # a file that has the extra rows under their full (prefixed) ids
            probs, lookup = own[row_id], (own_source, row_id)
        else:
            probs = extra[name][0].get(source_id) if name in extra else None
            lookup = (extra[name][1] if name in extra else own_source, source_id)
        lookups.append(lookup)
        if probs is None:
            missing.setdefault(name, []).append(source_id if name != TRAIN_SOURCE else row_id)
        values.append(probs)
    for name, rows in missing.items():
        source = own_source if name == TRAIN_SOURCE or name not in extra else extra[name][1]
        what = "training rows" if name == TRAIN_SOURCE else f"rows of the extra training set {name!r}"
        raise InputError(
            f"{source}: no prediction for {len(rows)} {what}, first missing id {rows[0]!r}. "
            "Were the predictions made for this split and data?"
        )
    if not allow_extra:
        id_set = set(ids)
        unused = [k for k in own if k not in id_set]
        if unused:
            raise InputError(
                f"{own_source}: {len(unused)} predictions have ids not in the training set, first extra id "
                f"{unused[0]!r}. Were they made for another split?"
            )
    if digests is not None:
        check_texts(train, lookups, digests, fix=fix)
    if column in train.column_names:
        train = train.remove_columns(column)
    return train.add_column(column, values)
