"""Rows of any source into the one canonical schema of a split: `id` (str, unique), `sentence1`, `sentence2`
(absent for single-text tasks) and `label` (int, the position in the set's label names), plus the source's extra
columns (e.g. HANS `heuristic`, `subcase`): which columns hold the texts, the label and the id, the label names
normalised, unusable rows counted and refused or dropped (`canonicalize`)."""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from datasets import Dataset

from ..errors import InputError
from .file_readers import GENERIC_PAIRS, ID_COLUMNS, LABEL_COLUMNS, SINGLE_COLUMNS
from .tasks import FileFormat

logger = logging.getLogger(__name__)


def normalize_label(
    value: Any,
    label_names: Sequence[str],
    aliases: dict[str, str],
    where: str,
    *,
    id_label_names: Sequence[str] | None = None,
    excluded_labels: Sequence[str] = (),
) -> int:
    """Map a raw label (name, alias or integer id) to its index in `label_names`.

    An integer id indexes `id_label_names` (default `label_names`), e.g. a task's published label order when
    `label_names` is a `--task_labels` restriction; the name it gives is then looked up like a string label.
    A label in `excluded_labels` (left out by `--task_labels`) is an error that says so.
    """
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        names = label_names if id_label_names is None else id_label_names
        if not 0 <= value < len(names):
            raise InputError(f"{where}: label id {value} out of range for labels {list(names)}")
        if id_label_names is None:
            return value
        value = names[value]
    text = str(value).strip()
    if id_label_names is not None and text.isdigit():  # named ids win over aliases like QQP's "0"/"1"
        return normalize_label(
            int(text), label_names, aliases, where, id_label_names=id_label_names, excluded_labels=excluded_labels
        )
    lowered = {name.lower(): i for i, name in enumerate(label_names)}
    key = aliases.get(text, aliases.get(text.lower(), text)).lower()
    if key in lowered:
        return lowered[key]
    if key in {n.lower() for n in excluded_labels}:
        raise InputError(
            f"{where}: label {value!r} is not among the labels {list(label_names)} chosen with --task_labels; "
            f"remove such rows from the file, or add {value!r} to --task_labels"
        )
    if text.lstrip("-").isdigit():
        return normalize_label(
            int(text), label_names, aliases, where, id_label_names=id_label_names, excluded_labels=excluded_labels
        )
    raise InputError(f"{where}: unknown label {value!r}; expected one of {list(label_names)}")


def _pick(columns: Sequence[str], candidates: Sequence[str]) -> str | None:
    for candidate in candidates:
        if candidate in columns:
            return candidate
    return None


def _text_columns(
    columns: Sequence[str], text_fields: Sequence[tuple[str, Sequence[str]]], name: str
) -> tuple[str, str | None]:
    """The source columns of `sentence1` and `sentence2` (None: single text), chosen by meaning."""
    if not text_fields:  # custom task: the first known pair of names, else one known text column
        for first, second in GENERIC_PAIRS:
            if first in columns and second in columns:
                return first, second
        single = _pick(columns, SINGLE_COLUMNS)
        if single is None:
            raise InputError(
                f"{name}: no text column found among {list(columns)}; expected one of {list(SINGLE_COLUMNS)} "
                f"or a pair {[list(p) for p in GENERIC_PAIRS]}"
            )
        return single, None
    chosen = []
    for role, candidates in text_fields:
        column = _pick(columns, candidates)
        if column is None:
            roles = " and ".join(r for r, _ in text_fields)
            hint = ""
            if "sentence1" in columns and "sentence1" not in candidates:
                hint = (
                    f" Its sentence1/sentence2 columns do not say which text is the {role} (FEVER-Symmetric v0.2 "
                    "puts the evidence in sentence1): rename them."
                )
            raise InputError(
                f"{name}: no {role} column among {list(columns)}; this task's inputs are the {roles}, and the "
                f"{role} is read from the first of {list(candidates)} (a pair task needs both texts).{hint}"
            )
        chosen.append(column)
    return chosen[0], (chosen[1] if len(chosen) > 1 else None)


def _is_unlabelled(value: Any) -> bool:
    """`-` (MNLI pairs without a gold label) and -1 (GLUE test splits on the Hub) mark unlabelled rows."""
    return (isinstance(value, int) and not isinstance(value, bool) and value == -1) or (
        isinstance(value, str) and value.strip() in ("-", "-1")
    )


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _extra_column_kind(values: list[Any]) -> str:
    """`keep` (one scalar type, or int and float), `stringify` (mixed scalars) or `drop` (lists, dicts)."""
    types = {type(v) for v in values if v is not None}
    if any(not issubclass(t, (str, int, float, bool)) for t in types):
        return "drop"
    if len(types) <= 1 or types == {int, float}:
        return "keep"
    return "stringify"


def _check_label_ids(
    raw_labels: list[Any],
    label_names: Sequence[str],
    aliases: dict[str, str],
    id_label_names: Sequence[str] | None,
    name: str,
    fix: str,
) -> None:
    """Refuse integer labels that do not use every id of the labels: the file likely has its own label set."""
    names = list(label_names if id_label_names is None else id_label_names)
    known = {n.lower() for n in label_names} | {a.lower() for a in aliases}
    ids = set()
    for value in raw_labels:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            continue
        text = str(value).strip()
        if text.lower() not in known and text.lstrip("-").isdigit():
            ids.add(int(text))
    if ids and ids != set(range(len(names))):
        as_read = ", ".join(f"{i} = {names[i]}" for i in sorted(ids) if 0 <= i < len(names))
        raise InputError(
            f"{name}: its labels are the integer ids {sorted(ids)}, but its label set {names} has the ids "
            f"0..{len(names) - 1} and a file with these labels would use them all, so this file likely has a "
            f"label set of its own"
            + (f" (it would be read as {as_read})" if as_read else "")
            + f". Name its labels, in id order, with {fix}, or write label names into the file."
        )


@dataclass(frozen=True)
class _ColumnPlan:
    """Which source column becomes which canonical column, and what happens to the others."""

    id_col: str | None
    s1: str
    s2: str | None
    label_col: str | None
    ignored: list[str]  # candidates for the canonical columns that were not chosen: left out
    extras: list[str]  # the source's other columns: kept, stringified or dropped

    @property
    def texts(self) -> list[str]:
        return [c for c in (self.s1, self.s2) if c is not None]

    @property
    def required(self) -> list[str]:
        return [c for c in (self.id_col, *self.texts, self.label_col) if c is not None]


def _plan_columns(
    columns: list[str], text_fields: Sequence[tuple[str, Sequence[str]]], name: str, require_labels: bool
) -> _ColumnPlan:
    """Choose the id, text and label columns among `columns` (see `canonicalize`)."""
    id_col = _pick(columns, ID_COLUMNS)
    s1, s2 = _text_columns(columns, text_fields, name)
    label_col = _pick(columns, LABEL_COLUMNS)
    if label_col is None and require_labels:
        raise InputError(f"{name}: no label column found among {columns}; expected one of {LABEL_COLUMNS}")
    used = {id_col, s1, s2, label_col}
    # Other candidates for the canonical columns are left out: a second text pair (FEVER-Symmetric v0.2's
    # reversed sentence1/sentence2), a second label column (gold_label next to label; `labels` would be taken
    # for the labels by the Trainer), columns named like the canonical ones.
    candidates = {*SINGLE_COLUMNS, *(c for pair in GENERIC_PAIRS for c in pair), *LABEL_COLUMNS, "id"}
    candidates |= {c for _, names in text_fields for c in names}
    ignored = [c for c in columns if c not in used and c in candidates]
    extras = [c for c in columns if c not in used and c not in candidates]
    return _ColumnPlan(id_col, s1, s2, label_col, ignored, extras)


def _row_problem(row: dict[str, Any], plan: _ColumnPlan, n_columns: int) -> str | None:
    """Why a row is incomplete (wrong number of TSV fields, a missing or empty required value), or None."""
    if None in row:  # csv.DictReader puts the fields beyond the header under None
        return f"{n_columns + len(row[None])} fields, but the header has {n_columns}"
    missing = [c for c in plan.required if _is_missing(row.get(c))]
    return f"missing or empty {missing}" if missing else None


def _usable_rows(
    rows: list[dict[str, Any]], plan: _ColumnPlan, n_columns: int, name: str, skip_incomplete_rows: bool
) -> list[tuple[int, dict[str, Any]]]:
    """(row number in the file, row) of the labelled, complete rows; the dropped ones are logged."""
    kept: list[tuple[int, dict[str, Any]]] = []
    unlabelled, incomplete = 0, []
    for i, row in enumerate(rows):
        problem = _row_problem(row, plan, n_columns)
        if problem is None and plan.label_col is not None and _is_unlabelled(row[plan.label_col]):
            unlabelled += 1
            continue
        if problem is not None:
            if not skip_incomplete_rows:
                raise InputError(
                    f"{name} row {i}: {problem}. Fix the file, or pass --skip_incomplete_rows to drop such rows "
                    "(the number dropped is logged)."
                )
            incomplete.append((i, problem))
            continue
        for c in plan.texts:
            if not isinstance(row[c], (str, int, float)):
                raise InputError(f"{name} row {i}: {c!r} holds a {type(row[c]).__name__}, not a text")
        kept.append((i, row))
    if unlabelled:
        logger.warning(f"{name}: dropped {unlabelled} of {len(rows)} rows without a gold label ('-' or -1)")
    if incomplete:
        first, problem = incomplete[0]
        logger.warning(
            f"{name}: dropped {len(incomplete)} of {len(rows)} incomplete rows (--skip_incomplete_rows); "
            f"first: row {first}, {problem}"
        )
    if not kept:
        raise InputError(
            f"{name}: no usable rows: {unlabelled} of {len(rows)} lack a gold label, {len(incomplete)} are incomplete"
        )
    return kept


def _example_id(row: dict[str, Any], i: int, plan: _ColumnPlan, seen: dict[str, int], name: str) -> str:
    """The row's id (its id column, else a content hash made unique with `-k`); duplicate ids are refused."""
    if plan.id_col is not None:
        ex_id = str(row[plan.id_col])
    else:  # no id column: a content hash is stable under reordering, unlike a row number
        ex_id = hashlib.sha1(f"{row[plan.s1]}\t{row[plan.s2] if plan.s2 else ''}".encode()).hexdigest()[:16]
        if ex_id in seen:
            seen[ex_id] += 1
            ex_id = f"{ex_id}-{seen[ex_id]}"
    if ex_id in seen and plan.id_col is not None:
        raise InputError(f"{name}: duplicate example id {ex_id!r} in column {plan.id_col!r} (row {i})")
    seen.setdefault(ex_id, 0)
    return ex_id


def _canonical_columns(
    kept: list[tuple[int, dict[str, Any]]], plan: _ColumnPlan, name: str, label_of: Callable[[Any, str], int]
) -> dict[str, list[Any]]:
    """The `id`, `sentence1`, (`sentence2`) and `label` columns; `label_of(raw label, where)` maps a label."""
    out: dict[str, list[Any]] = {"id": [], "sentence1": []}
    if plan.s2:
        out["sentence2"] = []
    out["label"] = []
    seen: dict[str, int] = {}
    for i, row in kept:
        ex_id = _example_id(row, i, plan, seen, name)
        out["id"].append(ex_id)
        out["sentence1"].append(str(row[plan.s1]))
        if plan.s2:
            out["sentence2"].append(str(row[plan.s2]))
        out["label"].append(label_of(row[plan.label_col], f"{name} row {i} (id {ex_id!r})") if plan.label_col else -1)
    return out


def _add_extra_columns(
    out: dict[str, list[Any]], kept: list[tuple[int, dict[str, Any]]], plan: _ColumnPlan, name: str
) -> None:
    """Add the source's other columns to `out` (stringified or dropped, see `canonicalize`) and log what was done."""
    dropped, stringified = [], []
    for c in plan.extras:
        values = [row.get(c) for _, row in kept]
        kind = _extra_column_kind(values)
        if kind == "drop":
            dropped.append(c)
            continue
        if kind == "stringify":
            stringified.append(c)
            values = [None if v is None else str(v) for v in values]
        out[c] = values
    notes = []
    if plan.ignored:
        notes.append(f"ignored the columns {plan.ignored} (the inputs are {plan.texts}, the label {plan.label_col!r})")
    if dropped:
        notes.append(f"dropped the columns {dropped} (lists or dicts)")
    if stringified:
        notes.append(f"stored the columns {stringified} as strings (mixed value types)")
    if notes:
        logger.info(
            f"{name}: read sentence1 from {plan.s1!r}"
            + (f", sentence2 from {plan.s2!r}" if plan.s2 else "")
            + "; "
            + "; ".join(notes)
        )


def canonicalize(
    rows: list[dict[str, Any]],
    label_names: Sequence[str],
    *,
    name: str,
    aliases: dict[str, str] | None = None,
    require_labels: bool = True,
    id_label_names: Sequence[str] | None = None,
    excluded_labels: Sequence[str] = (),
    text_fields: Sequence[tuple[str, Sequence[str]]] = (),
    skip_incomplete_rows: bool = False,
    check_label_ids: str | None = None,
) -> Dataset:
    """Rename columns to the canonical schema, map labels to ids and check ids are unique.

    `text_fields` (a task's `TaskSpec.text_fields`) chooses `sentence1`/`sentence2` by meaning; without it the
    first known pair of column names is used (see `GENERIC_PAIRS`), else one text column. Rows labelled `-`
    or -1 are unlabelled and dropped (logged). A row with a missing or empty text, id or label, or a TSV row with
    the wrong number of fields, is an error, or dropped (logged) with `skip_incomplete_rows`. Extra columns are
    kept if each holds one scalar type; mixed scalars are stringified and lists/dicts dropped (both logged).
    With `check_label_ids` (how to name the labels, for the message), integer labels that do not use every id
    0..n-1 are refused: the file probably has a label set of its own (PAWS 0/1 read as MNLI labels).
    """
    if not rows:
        raise InputError(f"{name} has no rows")
    columns = [c for c in rows[0].keys() if c is not None]
    plan = _plan_columns(columns, text_fields, name, require_labels)
    aliases = aliases or {}
    kept = _usable_rows(rows, plan, len(columns), name, skip_incomplete_rows)
    if check_label_ids is not None and plan.label_col is not None:
        _check_label_ids(
            [row[plan.label_col] for _, row in kept], label_names, aliases, id_label_names, name, check_label_ids
        )

    def label_of(value: Any, where: str) -> int:
        return normalize_label(
            value, label_names, aliases, where, id_label_names=id_label_names, excluded_labels=excluded_labels
        )

    out = _canonical_columns(kept, plan, name, label_of)
    _add_extra_columns(out, kept, plan, name)
    return Dataset.from_dict(out)


def check_parallel_labels(
    rows: list[dict[str, Any]],
    folder: str | os.PathLike,
    file_format: FileFormat,
    label_names: Sequence[str],
    aliases: dict[str, str] | None = None,
    *,
    id_label_names: Sequence[str] | None = None,
    excluded_labels: Sequence[str] = (),
) -> None:
    """Refuse a label word of parallel files (`read_parallel_files`) that the labels do not know, naming its file and
    line (`normalize_label`'s message); unlabelled (`-`) and empty lines are left to `canonicalize`."""
    label_file = next((name for name, column in file_format.parallel_files if column in LABEL_COLUMNS), None)
    if label_file is None:
        return
    column = dict(file_format.parallel_files)[label_file]
    path = os.path.join(os.fspath(folder), label_file)
    for line, row in enumerate(rows, 1):
        value = row[column]
        if not (_is_missing(value) or _is_unlabelled(value)):
            where = f"{path} line {line}"
            normalize_label(
                value, label_names, aliases or {}, where, id_label_names=id_label_names, excluded_labels=excluded_labels
            )
