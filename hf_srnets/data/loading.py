"""Load task splits from the Hub, a data directory or single files into one canonical schema.

Every loaded split has the columns `id` (str, unique), `sentence1`, `sentence2` (absent for
single-text tasks) and `label` (int, the position in the set's label names), plus any extra columns of
the source (e.g. HANS `heuristic`, `subcase`).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
from collections.abc import Sequence
from typing import Any

from datasets import Dataset

from .tasks import SplitSource

ID_COLUMNS = ("id", "idx", "guid", "pairID", "pair_id", "uid")
SENTENCE1_COLUMNS = ("sentence1", "premise", "question1", "claim", "text_a", "text", "sentence")
SENTENCE2_COLUMNS = ("sentence2", "hypothesis", "question2", "evidence", "evidence_sentence", "text_b")
LABEL_COLUMNS = ("label", "gold_label", "labels", "is_duplicate")


def read_rows(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read a `.tsv` (tab-separated, no quoting, with header), `.csv` or `.jsonl`/`.json` file."""
    path = str(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"Data file not found: {path}")
    ext = os.path.splitext(path)[1].lower()
    with open(path, encoding="utf-8", newline="") as f:
        if ext == ".tsv":
            return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
        if ext == ".csv":
            return list(csv.DictReader(f))
        if ext in (".jsonl", ".json"):
            text = f.read()
            if ext == ".json" and text.lstrip().startswith("["):
                return json.loads(text)
            rows = []
            for line_no, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as err:
                        raise ValueError(f"{path}:{line_no} is not valid JSON: {err}") from None
            return rows
    raise ValueError(f"Unsupported data file type {ext!r} for {path}: use .tsv, .csv or .jsonl")


def _pick(columns: Sequence[str], candidates: Sequence[str]) -> str | None:
    for candidate in candidates:
        if candidate in columns:
            return candidate
    return None


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
            raise ValueError(f"{where}: label id {value} out of range for labels {list(names)}")
        if id_label_names is None:
            return value
        value = names[value]
    text = str(value).strip()
    lowered = {name.lower(): i for i, name in enumerate(label_names)}
    key = aliases.get(text, aliases.get(text.lower(), text)).lower()
    if key in lowered:
        return lowered[key]
    if key in {n.lower() for n in excluded_labels}:
        raise ValueError(
            f"{where}: label {value!r} is not among the labels {list(label_names)} chosen with --task_labels; "
            f"remove such rows from the file, or add {value!r} to --task_labels"
        )
    if text.lstrip("-").isdigit():
        return normalize_label(
            int(text), label_names, aliases, where, id_label_names=id_label_names, excluded_labels=excluded_labels
        )
    raise ValueError(f"{where}: unknown label {value!r}; expected one of {list(label_names)}")


def canonicalize(
    rows: list[dict[str, Any]],
    label_names: Sequence[str],
    *,
    name: str,
    aliases: dict[str, str] | None = None,
    require_labels: bool = True,
    id_label_names: Sequence[str] | None = None,
    excluded_labels: Sequence[str] = (),
) -> Dataset:
    """Rename columns to the canonical schema, map labels to ids and check ids are unique."""
    if not rows:
        raise ValueError(f"{name} has no rows")
    columns = list(rows[0].keys())
    id_col = _pick(columns, ID_COLUMNS)
    s1 = _pick(columns, SENTENCE1_COLUMNS)
    s2 = _pick(columns, [c for c in SENTENCE2_COLUMNS if c != s1])
    label_col = _pick(columns, LABEL_COLUMNS)
    if s1 is None:
        raise ValueError(f"{name}: no text column found among {columns}; expected one of {SENTENCE1_COLUMNS}")
    if label_col is None and require_labels:
        raise ValueError(f"{name}: no label column found among {columns}; expected one of {LABEL_COLUMNS}")
    aliases = aliases or {}
    out: dict[str, list[Any]] = {"id": [], "sentence1": []}
    if s2:
        out["sentence2"] = []
    out["label"] = []
    extras = [c for c in columns if c not in {id_col, s1, s2, label_col} and c not in out]
    for c in extras:
        out[c] = []
    seen: dict[str, int] = {}
    skipped = 0
    for i, row in enumerate(rows):
        raw_label = row.get(label_col) if label_col else None
        if label_col and (raw_label is None or str(raw_label).strip() in ("", "-", "-1")):
            skipped += 1  # unlabeled rows (e.g. GLUE test, MNLI pairs without gold agreement)
            continue
        if id_col is not None:
            ex_id = str(row[id_col])
        else:  # no id column: a content hash is stable under reordering, unlike a row number
            ex_id = hashlib.sha1(f"{row.get(s1)}\t{row.get(s2) if s2 else ''}".encode()).hexdigest()[:16]
            if ex_id in seen:
                seen[ex_id] += 1
                ex_id = f"{ex_id}-{seen[ex_id]}"
        if ex_id in seen and id_col is not None:
            raise ValueError(f"{name}: duplicate example id {ex_id!r} in column {id_col!r} (row {i})")
        seen.setdefault(ex_id, 0)
        out["id"].append(ex_id)
        out["sentence1"].append(str(row[s1]))
        if s2:
            out["sentence2"].append(str(row[s2]))
        out["label"].append(
            normalize_label(
                raw_label,
                label_names,
                aliases,
                f"{name} row {i}",
                id_label_names=id_label_names,
                excluded_labels=excluded_labels,
            )
            if label_col
            else -1
        )
        for c in extras:
            out[c].append(row.get(c))
    if not out["id"]:
        raise ValueError(f"{name}: all {len(rows)} rows lack a label ({skipped} skipped)")
    return Dataset.from_dict(out)


def load_source(
    source: SplitSource,
    label_names: Sequence[str],
    *,
    name: str,
    data_dir: str | None = None,
    aliases: dict[str, str] | None = None,
    cache_dir: str | None = None,
    id_label_names: Sequence[str] | None = None,
    excluded_labels: Sequence[str] = (),
) -> Dataset:
    """Load a split from `data_dir` (first existing of `source.local_paths`) or else from the Hub."""
    labels: dict[str, Any] = {"id_label_names": id_label_names, "excluded_labels": excluded_labels}
    if data_dir is not None:
        for rel in source.local_paths:
            path = os.path.join(data_dir, rel)
            if os.path.isfile(path):
                return canonicalize(read_rows(path), label_names, name=f"{name} ({path})", aliases=aliases, **labels)
        if source.hub_path is None:
            raise FileNotFoundError(
                f"{name}: none of {list(source.local_paths)} exists under --data_dir {data_dir}; "
                f"pass the file with --train_file/--validation_file/--ood_file."
            )
    if source.hub_path is None:
        raise FileNotFoundError(
            f"{name} is not on the Hub; pass --data_dir containing one of {list(source.local_paths)}, "
            "or the file itself."
        )
    from datasets import load_dataset

    try:
        hub = load_dataset(source.hub_path, source.hub_config, split=source.hub_split, cache_dir=cache_dir)
    except Exception as err:  # offline, gated, renamed: all mean "not reachable"
        raise OSError(
            f"Could not load {name} from the Hub ({source.hub_path}, {source.hub_config}, {source.hub_split}): {err}. "
            f"Offline? Pass --data_dir with {list(source.local_paths)} or the files themselves."
        ) from err
    rows = hub.to_list()
    if rows and "label" in rows[0] and hasattr(hub.features.get("label"), "names"):
        names = hub.features["label"].names
        for row in rows:
            row["label"] = names[row["label"]] if 0 <= row["label"] < len(names) else -1
    return canonicalize(rows, label_names, name=name, aliases=aliases, **labels)


def load_file(
    path: str,
    label_names: Sequence[str],
    *,
    name: str | None = None,
    aliases: dict[str, str] | None = None,
    id_label_names: Sequence[str] | None = None,
    excluded_labels: Sequence[str] = (),
) -> Dataset:
    return canonicalize(
        read_rows(path),
        label_names,
        name=name or path,
        aliases=aliases,
        id_label_names=id_label_names,
        excluded_labels=excluded_labels,
    )
