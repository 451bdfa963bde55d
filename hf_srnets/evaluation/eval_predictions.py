"""Per-example predictions of a run's evaluation sets, `<output_dir>/eval_predictions/<set>.jsonl`, so that tables can
pair two runs example by example (paired bootstrap intervals, `hf_srnets.metrics.bootstrap`).

One JSON object per example, in the set's dataset order: `{"index": i, "id": "<example id>", "label": "<gold>",
"prediction": "<predicted>", "probabilities": {"<model label>": p, ...}}`; `id` is left out when the set has no id
column. `probabilities` is the softmax of the logits over the model's own labels, rounded to 4 digits (files written
before it existed lack it, and are read all the same). Labels are names in the set's own
label space: a set scored as HANS (entailment / non-entailment) gets the model's 3-way prediction collapsed as its
evaluator does (`hf_srnets.metrics.hans.collapse_nli_predictions`), every other set the model's label name. A
prediction is correct when `prediction == label`. The files are written from the logits the evaluation already
computed (`SRNetTrainer.eval_outputs`, in dataset order), not by a second pass.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data.tasks import EvalSet, TaskSpec
from ..errors import InputError, MissingInputError
from ..metrics.hans import HANS_LABELS, collapse_nli_predictions
from ..run_files import EVAL_PREDICTIONS_DIR, replaced_file

PREDICTIONS_DIR = EVAL_PREDICTIONS_DIR  # the run folder's per-example predictions (run_files)


COMMITTED_SUFFIX = ".jsonl.gz"  # a set's file among a results folder's per-example outputs (`<set>.jsonl.gz`)


def predictions_path(output_dir: str | os.PathLike, set_name: str) -> str:
    return os.path.join(output_dir, PREDICTIONS_DIR, f"{set_name}.jsonl")


def set_label_predictions(predicted: np.ndarray, model_labels: Sequence[str], set_labels: Sequence[str]) -> list[str]:
    """Predicted label ids of the model (in `model_labels`) as names of the set's labels: the same name when the
    set has the model's labels, HANS's entailment / non-entailment for a HANS-labelled set."""
    predicted = np.asarray(predicted)
    if set(model_labels) <= set(set_labels):
        return [model_labels[i] for i in predicted.tolist()]
    if tuple(set_labels) == HANS_LABELS:
        return [HANS_LABELS[i] for i in collapse_nli_predictions(predicted, model_labels).tolist()]
    raise ValueError(f"no mapping from the model's labels {list(model_labels)} to the set's {list(set_labels)}")


PROBABILITY_DIGITS = 4


def rounded_probabilities(logits: np.ndarray, model_labels: Sequence[str]) -> list[dict[str, float]]:
    """Per row of `logits` [n, labels], the softmax over `model_labels`, each value rounded to 4 digits."""
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probabilities = shifted / shifted.sum(axis=-1, keepdims=True)
    return [{name: round(float(p), PROBABILITY_DIGITS) for name, p in zip(model_labels, row)} for row in probabilities]


def prediction_rows(
    dataset: Any, logits: np.ndarray, model_labels: Sequence[str], set_labels: Sequence[str]
) -> list[dict[str, Any]]:
    """One row per example of `dataset` (a `datasets.Dataset` with `label` and maybe `id` columns) from its
    logits in dataset order (argmax = the prediction)."""
    logits = np.asarray(logits)
    if len(logits) != len(dataset):
        raise ValueError(f"{len(logits)} rows of logits for {len(dataset)} examples")
    predicted = set_label_predictions(logits.argmax(-1), model_labels, set_labels)
    probabilities = rounded_probabilities(logits.astype(float), model_labels)
    ids = [str(i) for i in dataset["id"]] if "id" in dataset.column_names else None
    rows = []
    for i, (gold, prediction) in enumerate(zip(dataset["label"], predicted)):
        row: dict[str, Any] = {"index": i, **({"id": ids[i]} if ids is not None else {})}
        rows.append(
            {**row, "label": set_labels[int(gold)], "prediction": prediction, "probabilities": probabilities[i]}
        )
    return rows


def write_eval_predictions(
    output_dir: str,
    outputs: Mapping[str, Any],
    task: TaskSpec,
    id_name: str,
    id_dataset: Any,
    ood: Sequence[tuple[EvalSet, Any]],
) -> list[str]:
    """Write `eval_predictions/<set>.jsonl` for the ID set and every OOD set whose evaluation output is in
    `outputs` (keyed by the evaluation's `metric_key_prefix`, `eval_<set>`); return the paths written. The folder
    holds this run's files only: `.jsonl` files an earlier run left there are removed first."""
    sets = [(id_name, task.label_names, id_dataset), *((s.name, s.label_names, d) for s, d in ood)]
    folder = os.path.join(output_dir, PREDICTIONS_DIR)
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        if name.endswith(".jsonl"):
            os.remove(os.path.join(folder, name))
    written = []
    for name, set_labels, dataset in sets:
        predictions = getattr(outputs.get(f"eval_{name}"), "predictions", None)
        if isinstance(predictions, tuple):
            predictions = predictions[0]
        if predictions is None:
            continue
        path = predictions_path(output_dir, name)
        os.makedirs(folder, exist_ok=True)
        with replaced_file(path) as f:  # a full disk: one line naming the file; a link at `path` is replaced
            for row in prediction_rows(dataset, predictions, task.label_names, set_labels):
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        written.append(path)
    return written


@dataclass(frozen=True)
class SetPredictions:
    """One run's predictions on one set: example keys (ids, else indices as strings), gold and predicted names."""

    keys: tuple[str, ...]
    labels: tuple[str, ...]
    predictions: tuple[str, ...]
    duplicate_id: str | None = None  # an id two rows share (the keys are then the rows' indices)

    @property
    def correct(self) -> np.ndarray:
        return np.array([p == y for p, y in zip(self.predictions, self.labels)], dtype=float)

    @functools.cached_property
    def coded_predictions(self) -> tuple[tuple[str, ...], np.ndarray]:
        """The distinct predicted names (sorted) and each example's index into them: `align` maps a run's few
        names instead of every example's (a report aligns each file with others thousands of times)."""
        names = tuple(sorted(set(self.predictions)))
        code = {name: i for i, name in enumerate(names)}
        return names, np.array([code[p] for p in self.predictions], dtype=np.int64)


def read_eval_predictions(path: str | os.PathLike) -> SetPredictions:
    """Read a predictions file (`.jsonl`, or gzipped `.jsonl.gz` as committed per-example outputs, whose rows
    have an id and no index); examples are keyed by id when every row has a distinct one, else by index.

    A file read before and unchanged since (same path, size and modification time) is not parsed again: a report
    reads each run's file once per table it appears in. A missing, cut or damaged file (a `.gz` cut short, a line
    that is not JSON) is an `InputError` naming it."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        raise MissingInputError(f"per-example predictions {path} not found: {_REWRITE}") from None
    try:
        return _read_file(os.fspath(path), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    except (EOFError, OSError, zlib.error, ValueError) as err:  # gzip.BadGzipFile is an OSError; JSON a ValueError
        if isinstance(err, InputError):
            raise
        raise InputError(f"per-example predictions {path} are cut or damaged ({err}): {_REWRITE}") from None


_REWRITE = (
    "restore the file, or write it again (a run's eval_predictions/ by running it again; a results folder's "
    "per_example/ with python -m hf_srnets.commands.report <experiment> --collect_from <sweep output_dir>)"
)


# a report holds every run's files of an experiment (cue_minilm_mnli: 375); the runs of one set share their keys and
# gold labels (`_shared`), so a cached file costs little more than its tuple of predictions
@functools.lru_cache(maxsize=4096)
def _read_file(path: str, device: int, inode: int, size: int, mtime_ns: int) -> SetPredictions:
    """`_read_unchanged` of the file this name reaches: a second name of one file (a link, another relative path)
    shares its entry there; this level saves resolving the name again on every read."""
    return _read_unchanged(os.path.realpath(path), size, mtime_ns)


@functools.lru_cache(maxsize=2048)
def _read_unchanged(path: str, size: int, mtime_ns: int) -> SetPredictions:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        lines = list(f)
    rows = _parsed_rows(lines)
    if rows is None:  # a line that is not one example: the line by line parse names it
        rows = [_parsed_row(path, line_no, line) for line_no, line in enumerate(lines, 1) if line.strip()]
    ids = [row.get("id") for row in rows]
    by_id = None not in ids and len(set(ids)) == len(ids)
    seen: set = set()
    duplicate = None if by_id or None in ids else next(str(i) for i in ids if i in seen or seen.add(i))
    keys = tuple(str(row["id"] if by_id else row.get("index", i)) for i, row in enumerate(rows))
    names: dict[str, str] = {}
    labels, predictions = (tuple(names.setdefault(str(r[field]), str(r[field])) for r in rows) for field in FIELDS)
    return SetPredictions(_shared(keys), _shared(labels), predictions, duplicate)


FIELDS = ("label", "prediction")
ROW_KEYS = {"label", "prediction"}


def _parsed_rows(lines: list[str]) -> list[dict] | None:
    """Every non-blank line's row in one JSON parse (a per-line `json.loads` is most of a report's reading time), or
    None when a line is not exactly one example row."""
    examples = [line for line in lines if line.strip()]
    try:
        rows = json.loads("[" + ",".join(examples) + "]")
    except ValueError:
        return None
    valid = len(rows) == len(examples) and all(
        isinstance(row, dict) and ROW_KEYS <= row.keys() and ("index" in row or "id" in row) for row in rows
    )
    return rows if valid else None


def _parsed_row(path: str, line_no: int, line: str) -> dict:
    row = json.loads(line)
    if not isinstance(row, dict) or not ROW_KEYS <= set(row) or not {"index", "id"} & set(row):
        raise InputError(f"{path}:{line_no}: expected {{'index', 'id', 'label', 'prediction'}}, got {line[:80]}")
    return row


@functools.lru_cache(maxsize=256)
def _shared(values: tuple[str, ...]) -> tuple[str, ...]:
    """The first tuple equal to `values` seen (a set's keys and gold labels are the same in every run's file)."""
    return values


@functools.lru_cache(maxsize=256)
def _coded_labels(labels: tuple[str, ...]) -> tuple[tuple[str, ...], np.ndarray]:
    """A set's gold labels as (sorted names, index of each), once per set (the runs share the tuple, `_shared`)."""
    names = tuple(sorted(set(labels)))
    code = {name: i for i, name in enumerate(names)}
    coded = np.array([code[y] for y in labels], dtype=np.int64)
    coded.setflags(write=False)
    return names, coded


def _mismatch(problem: str, runs: Sequence[SetPredictions]) -> str:
    """`problem`, or, when a file has an id twice (its rows then paired by position, so reordered rows no longer
    line up), what names the cause: the duplicate id."""
    duplicate = next((run.duplicate_id for run in runs if run.duplicate_id is not None), None)
    if duplicate is None:
        return problem
    return (
        f"a per-example file has the id {duplicate!r} on two rows, so its rows are paired by position, and the runs' "
        f"rows are not in one order ({problem}): give each example its own id, or write the files in dataset order"
    )


def align(runs: Sequence[SetPredictions]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Runs on the same examples as arrays: gold label ids [n] and predicted ids [runs, n] (indices into the
    returned label names), in the first run's example order. Raises ValueError when the runs' examples or gold
    labels differ (they were evaluated on different sets)."""
    if not runs:
        raise ValueError("no runs to align")
    first = runs[0]
    label_names, label_codes = _coded_labels(first.labels)
    names = sorted(set(label_names).union(*(run.coded_predictions[0] for run in runs)))
    code = {name: i for i, name in enumerate(names)}
    labels = np.array([code[name] for name in label_names], dtype=np.int64)[label_codes]
    predicted = np.empty((len(runs), len(first.keys)), dtype=np.int64)
    position: dict[str, int] | None = None
    for r, run in enumerate(runs):
        run_names, run_codes = run.coded_predictions
        coded = np.array([code[name] for name in run_names], dtype=np.int64)[run_codes]
        if run.keys == first.keys:  # the same examples in the same order: most runs, compared without a lookup
            if run.labels != first.labels:
                raise ValueError(_mismatch("the runs give the same examples different gold labels", runs))
            predicted[r] = coded
            continue
        position = position or {key: i for i, key in enumerate(first.keys)}
        if set(run.keys) != set(position) or len(run.keys) != len(position):
            raise ValueError(
                _mismatch(f"the runs evaluated different examples ({len(run.keys)} and {len(position)})", runs)
            )
        order = np.array([position[key] for key in run.keys])
        if any(first.labels[j] != y for j, y in zip(order.tolist(), run.labels)):
            raise ValueError(_mismatch("the runs give the same examples different gold labels", runs))
        predicted[r, order] = coded
    return labels, predicted, names
