"""Per-example columns keyed by example id: probabilities (bias model p_b, teacher p_t) and the sample difficulty
d_i of RMC (Du et al. 2023, Eq. 1).

Probability files, one JSON object per line: `{"id": "<example id>", "probs": [p_1, ..., p_K], "text_digest":
"<16 hex digits>"}` with the probabilities in the task's label order. Difficulty files: `{"id": "<example id>",
"difficulty": d_i, "text_digest": ..., ...}` with d_i in (0, 1] (other fields, e.g. the variance and the losses it
came from, are kept for the reader but not joined). `text_digest` records the example's text the value was made on
(`hf_srnets.data.text_digests`; files written before it lack it). Rows are joined to the dataset by `id`, never by
position, and a join refuses rows whose text differs from the digest. Which columns a loss may read, with their flags,
is the registry of `hf_srnets.data.example_columns`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from datasets import Dataset

from ..errors import InputError, check_input_file, check_path_argument, wrong_type
from ..run_files import replaced_file
from .file_readers import not_utf8_error
from .text_digests import DEFAULT_FIX, DIGEST_KEY, check_texts

BIAS_COLUMN = "bias_probs"
TEACHER_COLUMN = "teacher_probs"
DIFFICULTY_COLUMN = "difficulty"
SUM_TOLERANCE = 1e-3


def _json_rows(path: str | os.PathLike, kind: str, field: str, shape: str) -> Iterator[tuple[int, dict]]:
    """(line number, object) of each non-empty line of a JSON-lines file whose objects have `id` and `field`;
    errors name the file and the line (`kind` and `shape` word them)."""
    check_input_file(path, f"{kind} file")
    try:
        with open(path, encoding="utf-8-sig") as f:
            lines = f.read().splitlines()
    except UnicodeDecodeError as err:
        raise not_utf8_error(str(path), err) from None
    for line_no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(f"{path}:{line_no}: not valid JSON ({err})") from None
        if not isinstance(row, dict) or "id" not in row or field not in row:
            raise InputError(f'{path}:{line_no}: expected {{"id": ..., "{field}": {shape}}}, got {line.strip()[:80]}')
        yield line_no, row


def read_predictions(path: str | os.PathLike, num_labels: int) -> dict[str, list[float]]:
    """Read and validate a predictions file; return id -> probabilities.

    Errors name the file and the first bad id: duplicate ids, wrong number of classes, NaN or negative
    values, rows that do not sum to 1 (±1e-3).
    """
    check_path_argument(path, "read_predictions", "path", "pass the predictions file's path")
    out: dict[str, list[float]] = {}
    for line_no, row in _json_rows(path, "Predictions", "probs", "[...]"):
        ex_id, probs = str(row["id"]), row["probs"]
        where = f"{path}: id {ex_id!r} (line {line_no})"
        if ex_id in out:
            raise InputError(f"{where}: duplicate id")
        out[ex_id] = checked_probabilities(probs, num_labels, where)
    if not out:
        raise InputError(f"{path} contains no predictions")
    return out


def checked_probabilities(probs: Any, num_labels: int, where: str) -> list[float]:
    """`probs` as floats when it is a distribution over `num_labels` labels (a list of that length, numbers, none
    NaN or negative, summing to 1 ± `SUM_TOLERANCE`); else `InputError` starting with `where`."""
    if not isinstance(probs, (list, tuple)) or len(probs) != num_labels:
        got = len(probs) if isinstance(probs, (list, tuple)) else type(probs).__name__
        raise InputError(
            f"{where}: {got} probabilities, but the task has {num_labels} labels. "
            "Were these predictions made for another task?"
        )
    try:
        values = [float(p) for p in probs]
    except (TypeError, ValueError):
        raise InputError(f"{where}: probabilities must be numbers, got {probs}") from None
    if any(math.isnan(p) for p in values):
        raise InputError(f"{where}: NaN probability")
    if any(p < 0 for p in values):
        raise InputError(f"{where}: negative probability in {values}")
    if abs(sum(values) - 1.0) > SUM_TOLERANCE:
        raise InputError(f"{where}: probabilities sum to {sum(values):.4f}, not 1: write softmax outputs")
    return values


def read_difficulty(path: str | os.PathLike) -> dict[str, float]:
    """Read and validate a sample-difficulty file (`{"id", "difficulty"}` lines); return id -> d_i.

    The rules of `read_predictions`: errors name the file and the first bad id (duplicate ids, a missing or
    non-numeric difficulty, NaN, a value outside (0, 1]).
    """
    out: dict[str, float] = {}
    for line_no, row in _json_rows(path, "Sample-difficulty", "difficulty", "d"):
        ex_id, where = str(row["id"]), f"{path}: id {row['id']!r} (line {line_no})"
        if ex_id in out:
            raise InputError(f"{where}: duplicate id")
        value = row["difficulty"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
            raise InputError(f"{where}: the difficulty must be a number, got {value!r}")
        if not 0.0 < value <= 1.0:
            raise InputError(f"{where}: difficulty {value} is outside (0, 1] (Eq. 1 maps variances to [alpha, 1])")
        out[ex_id] = float(value)
    if not out:
        raise InputError(f"{path} contains no sample difficulties")
    return out


def add_probability_column(
    dataset: Dataset,
    predictions: dict[str, list[float]] | dict[str, float],
    column: str,
    *,
    source: str,
    allow_extra: bool = False,
    digests: Mapping[str, str] | None = None,
    fix: str = DEFAULT_FIX,
) -> Dataset:
    """Attach `predictions` (id -> probabilities, or id -> one value) to `dataset` as `column`, joined on `id`.

    Missing ids are always an error. Predictions for ids not in the dataset are an error unless
    `allow_extra` (e.g. a file covering the full training set used with a subset of it). `digests` (the file's
    `read_text_digests`): each row's text must have the file's digest of its id, else an error ending in `fix`
    (`text_digests.check_texts`; {} joins an older file by id, with a warning; None does not check).
    """
    where = "add_probability_column"
    if not isinstance(dataset, Dataset):
        raise wrong_type(where, "dataset", "a datasets.Dataset", dataset, "read it with read_split(...)")
    if not isinstance(predictions, Mapping):
        raise wrong_type(
            where, "predictions", "a dict of id -> p_b", predictions, "read it with read_predictions(path)"
        )
    if not isinstance(column, str):
        raise wrong_type(where, "column", "a column name (str)", column, "e.g. hf_srnets.data.BIAS_COLUMN")
    if "id" not in dataset.column_names:
        raise InputError("The dataset has no 'id' column to join predictions on")
    ids = dataset["id"]
    missing = [i for i in ids if i not in predictions]
    if missing:
        raise InputError(
            f"{source}: no prediction for {len(missing)} of {len(ids)} examples, first missing id {missing[0]!r}. "
            "Were the predictions made for this split and data?"
        )
    if not allow_extra and len(predictions) != len(ids):
        id_set = set(ids)
        extra = next(k for k in predictions if k not in id_set)
        raise InputError(
            f"{source}: {len(predictions) - len(id_set)} predictions have ids not in the dataset, first extra id "
            f"{extra!r}. Were they made for another split?"
        )
    if digests is not None:
        check_texts(dataset, [(source, str(i)) for i in ids], {source: digests}, fix=fix)
    values = [predictions[i] for i in ids]
    if values and isinstance(values[0], (list, tuple)):  # distributions: the checks read_predictions makes
        width = _label_count(dataset) or len(values[0])
        values = [checked_probabilities(v, width, f"{source}: id {i!r}") for i, v in zip(ids, values, strict=True)]
    if column in dataset.column_names:
        dataset = dataset.remove_columns(column)
    return dataset.add_column(column, values)


def _label_count(dataset: Dataset) -> int | None:
    """The number of classes of the dataset's `label` column when it records one (a `ClassLabel`), else None."""
    feature = dataset.features.get("label")
    return getattr(feature, "num_classes", None)


def write_predictions(
    path: str | os.PathLike,
    ids: Iterable[str],
    probs: np.ndarray | Sequence[Sequence[float]],
    digests: Sequence[str] | None = None,
) -> None:
    """Write `{"id", "probs", "text_digest"}` JSON lines, the format `read_predictions` reads; `digests` are the
    examples' `text_digests.dataset_digests`, in the order of `ids` (the package's writers always give them;
    without them the rows lack `text_digest` and join by id only)."""
    ids, probs = list(ids), list(probs)
    if digests is not None and len(digests) != len(ids):
        raise ValueError(f"{len(digests)} text digests for {len(ids)} predictions")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with replaced_file(path) as f:  # a hard link at `path` (e.g. to the training file) is replaced, not written
        for k, (ex_id, row) in enumerate(zip(ids, probs, strict=True)):
            record = {"id": str(ex_id), "probs": [float(p) for p in row]}
            if digests is not None:
                record[DIGEST_KEY] = digests[k]
            f.write(json.dumps(record) + "\n")


def write_difficulty(path: str | os.PathLike, rows: Iterable[dict]) -> None:
    """Write difficulty JSON lines, the format `read_difficulty` reads: each row a dict with `id` and
    `difficulty` (and any other JSON fields, e.g. `text_digest`, `variance`, `losses`, `hard`)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with replaced_file(path) as f:
        for row in rows:
            f.write(json.dumps({"id": str(row["id"]), **{k: v for k, v in row.items() if k != "id"}}) + "\n")
