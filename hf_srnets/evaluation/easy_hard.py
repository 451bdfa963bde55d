"""Easy and hard examples of the ID dev set (Du et al., "Robustness Challenges in Model Distillation and Pruning
for Natural Language Understanding", EACL 2023, §4 and appendix F; Table 6).

For the easy (shortcut) part E and the hard part H of the dev set the evaluation reports the accuracy, the mean
confidence c̄ = (1/|S|) Σ_{i∈S} max_k p_k(x_i) (the max softmax probability; observation 2: compressed models are
overconfident on easy examples), the example counts, and the gap Acc(E) − Acc(H) (Table 6's "Gap (E-H)").
Results keys: `eval_<id>_{easy,hard}_{accuracy,confidence,examples}` and `eval_<id>_easy_hard_gap`.

Which examples are hard, by example id (`hard_flags`), from the first of:
1. `--hard_subset FILE`: JSON lines `{"id", "hard"}` (`run_sample_difficulty.py`'s `difficulty_validation.jsonl`,
   the loss-variance split of §4.1/§6.1), or a CSV/TSV with an id column (`id`, `idx` or `pairID`) and a `hard` or
   `hardness` column (the published `mnli_validation_matched_hardness.csv`: `idx,pairID,hardness`);
2. the dev set's own `hard` column (the local MNLI `dev_matched.tsv` has one);
3. the task's published split under `--data_dir` (`TaskSpec.hard_subset`; MNLI: Gururangan et al. 2018), for the
   task's own dev set (not a `--validation_file`);
4. none: no easy/hard metrics.
Every evaluated dev id needs a flag; a file may hold more ids (the run evaluates a subset of the dev set). A JSON-lines
file whose rows record their texts (`text_digest`, as `run_sample_difficulty.py` writes them) must be of this dev set:
a flag made for another file with the same ids is refused (`hf_srnets.data.text_digests`).
"""

from __future__ import annotations

import csv
import json
import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..data.tasks import TaskSpec
from ..data.text_digests import check_texts, read_text_digests
from ..errors import InputError, MissingInputError
from ..metrics import accuracy, softmax
from ..run_files import DIFFICULTY_VALIDATION_NAME
from .base import Evaluator, register_evaluator

logger = logging.getLogger(__name__)

HARD_COLUMN = "hard"
HARD_VALUE_COLUMNS = ("hard", "hardness")
HARD_ID_COLUMNS = ("id", "idx", "pairID")
PARTS = ("easy", "hard")
_TRUE = {"1", "1.0", "true", "hard", "yes"}
_FALSE = {"0", "0.0", "false", "easy", "no"}


def parse_hard(value: Any, where: str) -> int:
    """A hard flag as 1 (hard) or 0 (easy): a bool, 0/1, or the strings 0/1/true/false/hard/easy."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and value in (0, 1):
        return int(value)
    text = str(value).strip().lower() if value is not None else ""
    if text in _TRUE:
        return 1
    if text in _FALSE:
        return 0
    raise InputError(f"{where}: hard flag {value!r} is not one of 0/1, true/false, hard/easy")


def _read_json_lines(path: str) -> dict[str, dict[str, int]]:
    flags: dict[str, int] = {}
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            value_key = next((k for k in HARD_VALUE_COLUMNS if isinstance(row, dict) and k in row), None)
            if not isinstance(row, dict) or "id" not in row or value_key is None:
                raise InputError(
                    f'{path}:{line_no}: expected {{"id": ..., "hard": true|false}}, got {line.strip()[:80]}. '
                    f"run_sample_difficulty.py writes such a file for the dev set ({DIFFICULTY_VALIDATION_NAME})"
                )
            flags[str(row["id"])] = parse_hard(row[value_key], f"{path}:{line_no}")
    return {"id": flags}


def _read_table(path: str, delimiter: str) -> dict[str, dict[str, int]]:
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter=delimiter)
        columns = reader.fieldnames or []
        id_columns = [c for c in HARD_ID_COLUMNS if c in columns]
        value_column = next((c for c in HARD_VALUE_COLUMNS if c in columns), None)
        if not id_columns or value_column is None:
            raise InputError(
                f"{path}: needs an id column ({'/'.join(HARD_ID_COLUMNS)}) and a {'/'.join(HARD_VALUE_COLUMNS)} "
                f"column; its header is {columns}"
            )
        tables: dict[str, dict[str, int]] = {c: {} for c in id_columns}
        for line_no, row in enumerate(reader, 2):
            flag = parse_hard(row[value_column], f"{path}:{line_no}")
            for column in id_columns:
                tables[column][str(row[column])] = flag
    return tables


def read_hard_flags(path: str | os.PathLike) -> dict[str, dict[str, int]]:
    """The hard flags of a file, id column -> example id -> 1 (hard) or 0 (easy).

    JSON lines (`.jsonl`/`.json`, or a first character `{`) give the `id` column; a CSV (`,`) or TSV (tab) gives
    each of its id columns (`id`, `idx`, `pairID`) so the dev set can be joined on whichever its ids are.
    """
    path = str(path)
    if not os.path.isfile(path):
        raise MissingInputError(f"easy/hard split file not found: {path} (--hard_subset)")
    if _is_json_lines(path):
        tables = _read_json_lines(path)
    else:
        tables = _read_table(path, "\t" if path.endswith(".tsv") else ",")
    if not any(tables.values()):
        raise InputError(f"{path} holds no hard flags")
    return tables


def _is_json_lines(path: str) -> bool:
    with open(path, encoding="utf-8") as f:
        first = f.read(1)
    return path.endswith((".jsonl", ".json")) or first == "{"


def check_flagged_texts(dataset: Any, ids: Sequence[str], path: str) -> None:
    """Refuse `--hard_subset` flags made for other texts under `dataset`'s ids: a JSON-lines file that records
    `text_digest`s is checked row by row (`text_digests.check_texts`); other files (the published CSV) are not."""
    if not _is_json_lines(path):
        return
    digests = read_text_digests(path)
    if digests:
        fix = f"give --hard_subset the {DIFFICULTY_VALIDATION_NAME} run_sample_difficulty.py wrote for this dev set"
        check_texts(dataset, [(path, i) for i in ids], {path: digests}, fix=fix)


def flags_for_ids(
    tables: Mapping[str, Mapping[str, int]], ids: Sequence[str], source: str, id_column: str | None = None
) -> list[int]:
    """The flag of every id in `ids`, joined on `id_column` (default: the first of the file's id columns that has
    every id). A missing id is an error naming the file, the id and the fix."""
    columns = [id_column] if id_column is not None else list(tables)
    if id_column is not None and id_column not in tables:
        raise InputError(f"{source}: no id column {id_column!r}; its id columns are {list(tables)}")
    for column in columns:
        if all(i in tables[column] for i in ids):
            return [tables[column][i] for i in ids]
    column = max(columns, key=lambda c: sum(i in tables[c] for i in ids))
    missing = [i for i in ids if i not in tables[column]]
    raise InputError(
        f"{source}: no hard flag for dev example id {missing[0]!r} ({len(missing)} of {len(ids)} evaluated ids "
        f"missing, joined on column {column!r}). Give --hard_subset a file that flags every evaluated dev example "
        f"(e.g. run_sample_difficulty.py's {DIFFICULTY_VALIDATION_NAME} for this dev set)"
    )


def hard_flags(
    dataset: Any, task: TaskSpec, hard_subset: str | None, data_dir: str | None, own_dev_set: bool = True
) -> tuple[list[int] | None, str | None]:
    """The hard flag of each row of the ID dev set `dataset` and where they came from (the module docstring's
    order: `--hard_subset`, the set's `hard` column, the task's published split), or (None, None)."""
    ids = [str(i) for i in dataset["id"]]
    if hard_subset:
        flags = flags_for_ids(read_hard_flags(hard_subset), ids, hard_subset)
        check_flagged_texts(dataset, ids, hard_subset)
        return flags, f"`{os.path.basename(hard_subset)}` (--hard_subset)"
    if HARD_COLUMN in dataset.column_names:
        values = dataset[HARD_COLUMN]
        flags = [parse_hard(v, f"the dev set's `hard` column, id {i!r}") for i, v in zip(ids, values)]
        whose = f" ({task.hard_subset.description})" if own_dev_set and task.hard_subset is not None else ""
        return flags, f"the dev set's own `hard` column{whose}"
    split = task.hard_subset
    if own_dev_set and split is not None and data_dir and os.path.isfile(os.path.join(data_dir, split.local_path)):
        path = os.path.join(data_dir, split.local_path)
        flags = flags_for_ids(read_hard_flags(path), ids, path, split.id_column)
        return flags, f"`{split.local_path}` under --data_dir" + (f", {split.description}" if split.description else "")
    logger.info("No easy/hard split of the dev set (--hard_subset, a `hard` column, the task's): no easy/hard metrics")
    return None, None


def easy_hard_scores(
    predictions: np.ndarray, labels: np.ndarray, hard: Sequence[int], confidence: np.ndarray
) -> dict[str, float]:
    """Accuracy, mean confidence and count of the easy and the hard examples, and the gap Acc(E) − Acc(H).

    A part without examples has a count of 0 and no accuracy or confidence; the gap needs both parts.
    """
    hard_mask = np.asarray(hard, dtype=bool)
    if not len(hard_mask) == len(predictions) == len(labels) == len(confidence):
        raise ValueError(
            f"easy/hard scores need one hard flag per example: {len(hard_mask)} flags, {len(predictions)} predictions"
        )
    out: dict[str, float] = {}
    for part, mask in zip(PARTS, (~hard_mask, hard_mask)):
        out[f"{part}_examples"] = int(mask.sum())
        if mask.any():
            out[f"{part}_accuracy"] = accuracy(predictions[mask], labels[mask])
            out[f"{part}_confidence"] = float(np.mean(confidence[mask]))
    if "easy_accuracy" in out and "hard_accuracy" in out:
        out["easy_hard_gap"] = out["easy_accuracy"] - out["hard_accuracy"]
    return out


@register_evaluator
class EasyHardEvaluator(Evaluator):
    """Accuracy, mean max-softmax confidence and counts on the easy and hard parts of the ID dev set (Table 6),
    read from the dataset's `hard` column (`hard_flags`)."""

    name = "easy_hard"
    columns = (HARD_COLUMN,)

    @property
    def primary_metric(self) -> str:
        return "easy_hard_gap"

    def __call__(self, logits: np.ndarray, labels: np.ndarray, dataset: Any = None) -> dict[str, float]:
        probs = softmax(np.asarray(logits, dtype=np.float64))
        predictions = probs.argmax(-1)
        return self.score(predictions, np.asarray(labels), confidence=probs.max(-1), **self.read_columns(dataset))

    def score(
        self,
        predictions: np.ndarray,
        labels: np.ndarray,
        hard: Sequence[int] | None = None,
        confidence: np.ndarray | None = None,
        **columns: Any,
    ) -> dict[str, float]:
        if hard is None:
            raise ValueError("the easy/hard evaluation needs the dev set's `hard` column (see hard_flags)")
        if confidence is None:  # predicted label ids only: confidence unknown
            raise ValueError("the easy/hard evaluation needs the model's logits (call the evaluator, not score)")
        return easy_hard_scores(predictions, labels, hard, confidence)


def easy_hard_table(results: Mapping[str, Any], id_name: str) -> str:
    """A markdown table of the easy/hard results of `id_name`, then the gap; "" when the run has none."""
    prefix = f"eval_{id_name}_"
    if f"{prefix}easy_examples" not in results:
        return ""
    lines = ["| subset | examples | accuracy | mean confidence |", "|---|---|---|---|"]
    for part in PARTS:
        acc, conf = results.get(f"{prefix}{part}_accuracy"), results.get(f"{prefix}{part}_confidence")
        cells = [f"{100 * v:.2f}" if v is not None else "n/a" for v in (acc, conf)]
        lines.append(f"| {part} | {results[f'{prefix}{part}_examples']:,} | {cells[0]} | {cells[1]} |")
    gap = results.get(f"{prefix}easy_hard_gap")
    text = "\n".join(lines)
    return text + (f"\n\nGap E − H: {100 * gap:+.2f} points of accuracy." if gap is not None else "")
