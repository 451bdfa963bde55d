"""What a per-example file was made on: each row of a file the package writes (p_b, p_t, d_i) records a digest of its
example's text under `text_digest`, and a join by id refuses rows whose digest differs from the training row's text.

Ids alone do not say which data a file belongs to: MNLI's `idx` runs 0..N in every MNLI file, so p_b made on
dev-matched would join onto dev-mismatched row by row. The digest of a row is the first 16 hex digits of the SHA-256
of the UTF-8 bytes of `sentence1 + "\\x1f" + sentence2`, the texts as the loader gives them (`load_file`: the file's
fields as strings, not stripped); `sentence2` is "" for a single-text task. A file written before digests (no row has
`text_digest`) still joins by id, with a warning; a file in which some rows have one and others not is refused.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence

from datasets import Dataset

from ..errors import InputError, check_path_argument

logger = logging.getLogger(__name__)

DIGEST_KEY = "text_digest"
DIGEST_LENGTH = 16
SEPARATOR = "\x1f"
DIGEST_PATTERN = re.compile(rf"^[0-9a-f]{{{DIGEST_LENGTH}}}$")
DEFAULT_FIX = "make the file from this run's training data"
TEXT_PREVIEW = 60


def text_digest(sentence1: str | None, sentence2: str | None = None) -> str:
    """The digest of one example's text (module doc)."""
    text = ("" if sentence1 is None else str(sentence1)) + SEPARATOR + ("" if sentence2 is None else str(sentence2))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:DIGEST_LENGTH]


def _texts(dataset: Dataset) -> tuple[list, list]:
    if "sentence1" not in dataset.column_names:
        raise InputError(
            f"The data has no 'sentence1' column (columns: {dataset.column_names}) to digest; "
            "load it with hf_srnets.data.load_file, which gives the canonical columns."
        )
    columns = [c for c in ("sentence1", "sentence2") if c in dataset.column_names]
    data = dataset.select_columns(columns).to_dict()
    return data["sentence1"], data.get("sentence2", [None] * len(dataset))


def dataset_digests(dataset: Dataset) -> list[str]:
    """The digest of each row of `dataset` (its `sentence1` and, if any, `sentence2`), in order."""
    first, second = _texts(dataset)
    return [text_digest(a, b) for a, b in zip(first, second, strict=True)]


def digests_by_id(dataset: Dataset) -> dict[str, str]:
    """id -> digest of each row of `dataset`."""
    ids = [str(i) for i in dataset.select_columns(["id"]).to_dict()["id"]]
    return dict(zip(ids, dataset_digests(dataset), strict=True))


def read_text_digests(path: str | os.PathLike) -> dict[str, str]:
    """id -> `text_digest` of a JSON-lines per-example file; {} when it records none (a file of an older version).

    Call it after the file's reader, which has refused a missing file, bad JSON and duplicate ids. A file with
    digests on some rows only, or a digest that is not 16 hex digits, is refused (it was edited by hand).
    """
    check_path_argument(path, "read_text_digests", "path", "pass the per-example file's path")
    out: dict[str, str] = {}
    without = None
    with open(path, encoding="utf-8-sig") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            digest = row.get(DIGEST_KEY)
            if digest is None:
                without = without or (line_no, row.get("id"))
                continue
            if not isinstance(digest, str) or not DIGEST_PATTERN.match(digest):
                raise InputError(f"{path}:{line_no}: {DIGEST_KEY} must be {DIGEST_LENGTH} hex digits, got {digest!r}")
            out[str(row["id"])] = digest
    if out and without is not None:
        raise InputError(
            f"{path}:{without[0]}: id {without[1]!r} has no {DIGEST_KEY} but other rows have one: the file was "
            "edited or pieced together; write it again with the script that made it."
        )
    return out


def _preview(dataset: Dataset, row: int) -> str:
    first, second = (dataset[row].get(c) for c in ("sentence1", "sentence2"))
    text = str(first) + (f" / {second}" if second is not None else "")
    return repr(text[:TEXT_PREVIEW] + ("..." if len(text) > TEXT_PREVIEW else ""))


def check_texts(
    dataset: Dataset,
    lookups: Sequence[tuple[str, str]],
    digests: Mapping[str, Mapping[str, str]],
    *,
    fix: str = DEFAULT_FIX,
) -> None:
    """Refuse values joined onto other texts: row i of `dataset` took its value from file `lookups[i][0]` under id
    `lookups[i][1]`; `digests[file]` is that file's `read_text_digests`. A file absent from `digests` is not
    checked; one with no digests (an older file) is logged as joined by id only. A row whose text's digest differs
    from the file's is an error naming the file, how many rows differ, the first one's id and text, and `fix`."""
    row_digests: list[str] | None = None
    mismatched: dict[str, list[int]] = {}
    for source in dict.fromkeys(s for s, _ in lookups):
        if source in digests and not digests[source]:
            logger.warning(
                f"{source} does not record the data it was made on (no {DIGEST_KEY}: written by an older "
                "version), so it is joined by id only; if its ids repeat in other files, make sure it was made on "
                f"this data, or {fix} to have the join check the texts"
            )
    for i, (source, key) in enumerate(lookups):
        recorded = digests.get(source)
        if not recorded:
            continue
        row_digests = row_digests if row_digests is not None else dataset_digests(dataset)
        if recorded.get(key) != row_digests[i]:
            mismatched.setdefault(source, []).append(i)
    for source, rows in mismatched.items():
        first = rows[0]
        total = sum(1 for s, _ in lookups if s == source)
        raise InputError(
            f"{source}: {len(rows)} of the {total} rows joined by id were made on other texts than this run's "
            f"data ({DIGEST_KEY} differs), first id {lookups[first][1]!r} (here {_preview(dataset, first)}): "
            f"the file belongs to another data file whose ids coincide; {fix}."
        )
