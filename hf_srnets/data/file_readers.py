"""Read a data file into rows: .tsv/.csv (with or without a header), .json/.jsonl, a folder of parallel text files
(the robust-NLI layout), with one clear error for a file that is missing, not UTF-8, or broken (a field longer than
`MAX_FIELD_CHARS`). The rows are the file's own columns; `hf_srnets.data.canonical` makes them a split."""

from __future__ import annotations

import csv
import json
import logging
import os
from collections.abc import Sequence
from typing import Any

from ..errors import InputError, MissingInputError, check_input_file
from .tasks import ROBUST_NLI_FORMAT, FileFormat

logger = logging.getLogger(__name__)

ID_COLUMNS = ("id", "idx", "guid", "pairID", "pair_id", "uid")
# Text columns of a task without `TaskSpec.text_fields` (custom): the first pair present, else one text column.
GENERIC_PAIRS = (
    ("premise", "hypothesis"),
    ("question1", "question2"),
    ("claim", "evidence"),
    ("claim", "evidence_sentence"),
    ("sentence1", "sentence2"),
    ("text_a", "text_b"),
)
SINGLE_COLUMNS = ("sentence", "text", "sentence1", "text_a", "review", "premise", "question1", "claim")
LABEL_COLUMNS = ("label", "gold_label", "labels", "is_duplicate")
# The longest field a .tsv/.csv may hold, in characters (the csv module's default is 131,072): room for long
# documents, whose texts --max_seq_length truncates, while a longer field is most likely a broken file (with csv
# quoting, an unbalanced quote runs one field over the rest of the file) and is refused. The longest text of the
# data sets in docs/evaluation.md is 2,104 characters (an IMDB review of imdb_cad).
MAX_FIELD_CHARS = 1 << 20


def read_rows(
    path: str | os.PathLike, *, columns: Sequence[str] | None = None, quoting: str = "none"
) -> list[dict[str, Any]]:
    """Read a `.tsv` (tab-separated, with header), `.csv` or `.jsonl`/`.json` file, as UTF-8.

    A `.tsv` is read without quoting (`quoting="none"`: `"` is a literal character) or, with `quoting="csv"`,
    with csv quoting (fields wrapped in `"`, inner quotes doubled, newlines allowed inside). `columns` names the
    fields of a file without a header line (AG News as published by ALPS: `text<TAB>label`). A field may hold up to
    `MAX_FIELD_CHARS` characters. A file that is not UTF-8, or a field over the limit, is an `InputError` naming the
    file and line.
    """
    path = str(path)
    check_input_file(path, "Data file")
    if quoting not in ("none", "csv"):
        raise InputError(f"quoting must be 'none' or 'csv', got {quoting!r}")
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".tsv", ".csv", ".jsonl", ".json"):
        raise InputError(f"Unsupported data file type {ext!r} for {path}: use .tsv, .csv or .jsonl")
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:  # -sig: a byte-order mark is not in the header
            if ext in (".jsonl", ".json"):
                return _read_json(f.read(), ext, path)
            if ext == ".tsv":
                mode = csv.QUOTE_NONE if quoting == "none" else csv.QUOTE_MINIMAL
                reader = csv.DictReader(f, fieldnames=list(columns) if columns else None, delimiter="\t", quoting=mode)
            else:
                reader = csv.DictReader(f, fieldnames=list(columns) if columns else None)
            return _read_csv(reader, path)
    except UnicodeDecodeError as err:
        raise not_utf8_error(path, err) from None


def _read_csv(reader: csv.DictReader, path: str) -> list[dict[str, Any]]:
    """The rows of `reader`, with fields up to `MAX_FIELD_CHARS`; a csv error names the file and line."""
    limit = csv.field_size_limit()
    csv.field_size_limit(MAX_FIELD_CHARS)
    try:
        return list(reader)
    except csv.Error as err:
        line = reader.reader.line_num  # the DictReader's own line_num stops at the last row it returned
        if "field limit" in str(err):
            raise InputError(
                f"{path} line {line}: a field is longer than {MAX_FIELD_CHARS:,} characters, the limit "
                "for one text (a model reads at most a few hundred tokens of it). Shorten the text; with csv "
                "quoting an unbalanced quote also runs a field on over the lines after it."
            ) from None
        raise InputError(f"{path} line {line}: not a readable {os.path.splitext(path)[1]} row: {err}") from None
    finally:
        csv.field_size_limit(limit)


def _first_non_utf8(path: str) -> tuple[int, int, int] | None:
    """(line number, column, byte) of the first byte of `path` that is not UTF-8, None if every line decodes."""
    with open(path, "rb") as f:
        for line_no, line in enumerate(f, 1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as bad:
                return line_no, bad.start + 1, line[bad.start]
    return None


def not_utf8_error(path: str, err: UnicodeDecodeError) -> InputError:
    """An `InputError` naming the first line of `path` that is not UTF-8, its byte and the fix."""
    found = _first_non_utf8(path)
    where = f"line {found[0]}, byte {found[1]} is 0x{found[2]:02x}" if found else str(err)
    return InputError(
        f"{path} is not UTF-8 ({where}). hf_srnets reads data files as UTF-8: convert it, e.g. from Latin-1 "
        f"with iconv -f latin1 -t utf-8 {path} > converted{os.path.splitext(path)[1]}"
    )


def _read_json(text: str, ext: str, path: str) -> list[dict[str, Any]]:
    if ext == ".json" and text.lstrip().startswith("["):
        try:
            return json.loads(text)
        except json.JSONDecodeError as err:
            raise InputError(f"{path} line {err.lineno} is not valid JSON: {err.msg}") from None
    rows = []
    for line_no, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise InputError(f"{path}:{line_no} is not valid JSON: {err}") from None
    return rows


def folder_format(path: str | os.PathLike, file_format: FileFormat | None) -> FileFormat | None:
    """The format of parallel files `path` is read in: `file_format` when it is one (`FileFormat.parallel_files`),
    else `ROBUST_NLI_FORMAT` for a folder given without a format that holds one of its files; None otherwise (a
    file, or another folder: `read_rows` refuses it)."""
    if file_format is not None and file_format.parallel_files:
        return file_format
    if file_format is None and os.path.isdir(path):
        names = [name for name, _ in ROBUST_NLI_FORMAT.parallel_files]
        if any(os.path.isfile(os.path.join(path, name)) for name in names):
            return ROBUST_NLI_FORMAT
    return None


def _text_lines(path: str) -> list[str]:
    """The lines of a plain-text file, without their line ends (`\n`, `\r\n`; only these end a line, not the
    other breaks `str.splitlines` knows, which a text may hold); an empty or blank file is refused."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            text = f.read()
    except UnicodeDecodeError as err:
        raise not_utf8_error(path, err) from None
    if not text.strip():
        raise InputError(
            f"{path} is empty: a file of a folder of parallel files holds one line per example. Copy the folder "
            "again from its source."
        )
    lines = text.split("\n")
    if lines[-1] == "":  # the last line's own end
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_parallel_files(folder: str | os.PathLike, file_format: FileFormat = ROBUST_NLI_FORMAT) -> list[dict[str, Any]]:
    """Read a folder of parallel plain-text files (`FileFormat.parallel_files`): line k of each file is one field of
    example k, e.g. robust-nli's `s1.test`, `s2.test` and `labels.test` (`ROBUST_NLI_FORMAT`). Rows have the
    format's columns (`premise`, `hypothesis`, `label`) and no id: `canonicalize` gives each a hash of its texts.

    A missing folder or file, an empty file, a file that is not UTF-8 or files of different line counts are an
    `InputError` naming the file (and the line) and the fix.
    """
    folder = os.fspath(folder)
    names = [name for name, _ in file_format.parallel_files]
    if not os.path.isdir(folder):
        raise MissingInputError(f"Data folder not found: {folder} (a folder holding {names}, one example per line)")
    columns: dict[str, list[str]] = {}
    for name, column in file_format.parallel_files:
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            raise MissingInputError(
                f"{folder} has no {name}: a folder of this format holds {names}, line k of each the same example"
            )
        columns[column] = _text_lines(path)
    counts = {name: len(columns[column]) for name, column in file_format.parallel_files}
    shortest = min(counts.values())
    if len(set(counts.values())) > 1:
        longer = [name for name, n in counts.items() if n > shortest]
        shorter = [name for name, n in counts.items() if n == shortest]
        raise InputError(
            f"{folder}: " + ", ".join(f"{name} has {n:,} lines" for name, n in counts.items()) + f": line "
            f"{shortest + 1} of {os.path.join(folder, longer[0])} has no line in {shorter}, but line k of each file "
            "is the same example. A file was cut or changed: copy the folder again from its source."
        )
    return [dict(zip(columns, values)) for values in zip(*columns.values())]


def read_formatted_rows(path: str | os.PathLike, file_format: FileFormat | None = None) -> list[dict[str, Any]]:
    """Read a file in a task's published format (`FileFormat`): quoting, header-less columns, column renames; or a
    folder of parallel files (`read_parallel_files`: a format with `parallel_files`, or a folder given without a
    format, read as robust-nli's `s1.test`, `s2.test` and `labels.test`).

    A file of a header-less format whose first line is a header (a field is a known column name, e.g.
    `sentence<TAB>label`) is read with it, so users' files with a header load too.
    """
    parallel = folder_format(path, file_format)
    if parallel is not None:
        return read_parallel_files(path, parallel)
    if file_format is None:
        return read_rows(path)
    columns = file_format.columns or None
    if columns and _first_line_is_header(path, columns):
        columns = None
    rows = read_rows(path, columns=columns, quoting=file_format.quoting)
    if file_format.rename:
        rename = dict(file_format.rename)
        rows = [{rename.get(k, k) if k is not None else None: v for k, v in row.items()} for row in rows]
    return rows


def _first_line_is_header(path: str | os.PathLike, columns: Sequence[str]) -> bool:
    """Whether a file of a header-less format starts with a header anyway: a field of its first line is a
    column name (the format's or a known one, any case)."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            first = f.readline().rstrip("\r\n")
    except UnicodeDecodeError as err:
        raise not_utf8_error(str(path), err) from None
    sep = "\t" if str(path).lower().endswith(".tsv") else ","
    known = {c.lower() for c in (*columns, *ID_COLUMNS, *SINGLE_COLUMNS, *LABEL_COLUMNS)}
    known |= {c.lower() for pair in GENERIC_PAIRS for c in pair}
    return any(field.strip().strip('"').lower() in known for field in first.split(sep))
