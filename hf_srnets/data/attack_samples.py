"""The 1,000-example attack samples of the TextFooler paper (Jin et al. 2020), read into a task's canonical columns.

TextFooler (github.com/jind11/TextFooler, `data/`) ships the fixed samples it attacks: `ag` and `imdb` are one
example a line, `label text` (an integer class id, a space, the lower-cased tokenized text); `mnli_matched` and
`mnli_mismatched` are `label<TAB>premise<TAB>hypothesis` with label words (entailment/neutral/contradiction).
`read_attack_sample` turns either, or any file of the task in its normal format (tsv/csv/jsonl), into the columns
`id, sentence1[, sentence2], label` with labels in the task's label order, so any split can be attacked.

Class ids of the `ag` file are not documented upstream: 0 = World, 1 = Sports, 2 = Business, 3 = Sci/Tech is
inferred (the first row, a baseball story, is label 1, which matches the published AG News class order) and is
unconfirmed; reading it logs a warning saying so.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any

from datasets import Dataset

from ..errors import InputError, MissingInputError
from .canonical import canonicalize
from .splits import read_split
from .tasks import TaskSpec, get_task

logger = logging.getLogger(__name__)

# TextFooler sample name -> (task, format): "label text" lines, or label/premise/hypothesis tab-separated lines.
TEXTFOOLER_SAMPLES = {
    "ag": ("ag_news", "label_text"),
    "imdb": ("imdb", "label_text"),
    "mnli_matched": ("mnli", "nli_tsv"),
    "mnli_mismatched": ("mnli", "nli_tsv"),
}
AG_ID_WARNING = (
    "TextFooler's ag sample: class ids read as 0=World, 1=Sports, 2=Business, 3=Sci/Tech (the published AG News "
    "order); TextFooler does not document its ids, and this mapping is inferred, not confirmed upstream."
)
DATA_EXTENSIONS = (".tsv", ".csv", ".jsonl", ".json")
_LABEL_TEXT = re.compile(r"^(?P<label>-?\d+) (?P<text>.*\S)\s*$")


def sample_format(path: str | os.PathLike) -> str | None:
    """The TextFooler format of a file, by its content: `"label_text"`, `"nli_tsv"` or None (a normal data file)."""
    if os.path.splitext(str(path))[1].lower() in DATA_EXTENSIONS:
        return None
    with open(path, encoding="utf-8") as f:
        first = next((line for line in f if line.strip()), "")
    fields = first.rstrip("\r\n").split("\t")
    if len(fields) == 3 and fields[0].strip().lower() in ("entailment", "neutral", "contradiction"):
        return "nli_tsv"
    if _LABEL_TEXT.match(first.rstrip("\r\n")):
        return "label_text"
    return None


def _unwrap(text: str) -> str:
    """TextFooler's `ag` lines sometimes hold a csv-quoted text (wrapped in `"`, inner quotes doubled, 737 of
    1,000 lines): unquote it. Other texts are kept as they are."""
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1].replace('""', '"').strip()
    return text


def _label_text_rows(path: str, name: str) -> list[dict[str, Any]]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            match = _LABEL_TEXT.match(line.rstrip("\r\n"))
            if match is None:
                raise InputError(
                    f"{name} line {line_no}: expected 'LABEL TEXT' (an integer class id, a space, the text), got "
                    f"{line[:60]!r}. Is this a TextFooler sample file? Other files need a .tsv/.csv/.jsonl name."
                )
            rows.append({"id": f"{os.path.basename(path)}-{line_no - 1}", "text": _unwrap(match["text"])})
            rows[-1]["label"] = int(match["label"])
    return rows


def _nli_rows(path: str, name: str) -> list[dict[str, Any]]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) != 3:
                raise InputError(
                    f"{name} line {line_no}: expected 3 tab-separated fields 'label<TAB>premise<TAB>hypothesis', "
                    f"got {len(fields)}"
                )
            rid = f"{os.path.basename(path)}-{line_no - 1}"
            rows.append({"id": rid, "premise": fields[1], "hypothesis": fields[2], "label": fields[0].strip()})
    return rows


def _check_task(fmt: str, task: TaskSpec, name: str) -> None:
    pair = len(task.text_fields) == 2 or task.name == "mnli"
    if (fmt == "nli_tsv") != pair:
        kind = "premise/hypothesis pairs" if fmt == "nli_tsv" else "single texts"
        raise InputError(
            f"{name}: the file holds {kind}, but task {task.name!r} has "
            f"{'text pairs' if pair else 'single texts'}; pass the task of the sample "
            f"({', '.join(f'{k} -> {v[0]}' for k, v in TEXTFOOLER_SAMPLES.items())})."
        )


def read_attack_sample(path: str | os.PathLike, task: str | TaskSpec) -> Dataset:
    """Read an attack sample (a TextFooler sample file, or any file of the task) into canonical columns.

    `task` is a task name or `TaskSpec`; labels come out as indices of `task.label_names`. Integer class ids of
    a `label text` file index the task's published labels (`TaskSpec.file_label_names`): AG News 0..3 =
    World/Sports/Business/Sci/Tech (inferred, see the module docstring), IMDB 0/1 = negative/positive. A file with
    a `.tsv`, `.csv`, `.jsonl` or `.json` name is read as a normal data file of the task (its `file_format`).
    Format errors (a line that is not `LABEL TEXT`, a wrong number of fields, pairs for a single-text task,
    an unknown label) raise `ValueError` naming the line.
    """
    spec = get_task(task) if isinstance(task, str) else task
    path = str(path)
    if not os.path.isfile(path):
        raise MissingInputError(f"Attack sample not found: {path}")
    name = f"attack sample {path}"
    fmt = sample_format(path)
    options: dict[str, Any] = {"aliases": spec.label_aliases, "text_fields": spec.text_fields}
    if spec.published_label_names:
        options |= {"id_label_names": spec.file_label_names, "excluded_labels": spec.excluded_label_names}
    if fmt is None and os.path.splitext(path)[1].lower() not in DATA_EXTENSIONS:
        raise InputError(
            f"{name}: neither a TextFooler sample ('LABEL TEXT' lines, or 'label<TAB>premise<TAB>hypothesis' with "
            f"label words) nor a data file named {'/'.join(DATA_EXTENSIONS)}; fix the first line or the file name."
        )
    if fmt is None:
        return read_split(spec, spec.label_names, name=name, file=path)
    _check_task(fmt, spec, name)
    if fmt == "label_text":
        rows = _label_text_rows(path, name)
        if spec.name == "ag_news":
            logger.warning(AG_ID_WARNING)
        rows = _rename_text(rows, spec)
        # Integer ids index the task's labels in their published order.
        options.setdefault("id_label_names", spec.file_label_names)
    else:
        rows = _nli_rows(path, name)
    return canonicalize(rows, spec.label_names, name=name, **options)


def _rename_text(rows: list[dict[str, Any]], task: TaskSpec) -> list[dict[str, Any]]:
    """Put the text under the task's first text field name, so `canonicalize` reads it by meaning."""
    column = task.text_fields[0][1][0] if task.text_fields else "text"
    return [{"id": r["id"], column: r["text"], "label": r["label"]} for r in rows]
