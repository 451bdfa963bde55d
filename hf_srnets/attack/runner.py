"""Attack a dataset with one recipe: pick the examples, attack each one, append its result to the JSONL file
(`hf_srnets.attack.results`, resumed on a re-run), and summarise (`hf_srnets.attack.metrics`).

The sample is deterministic: the first `num_examples` rows in file order, or with `seed`, a uniform sample of
`num_examples` rows drawn with `random.Random(seed)` and attacked in file order.

With `num_workers` > 1 the examples are attacked by that many forked processes at once, each with its own copy of
the recipe and the victim (shared copy-on-write), and the results are written in example order as they come. An
example's result does not depend on the number of workers: every attack starts from the victim's reset (count and
prediction cache emptied), TextBugger's random edits are seeded per word, not per run, and the sentence encoder's
cache only holds embeddings (each computed once per process). Workers need a victim on the CPU (CUDA cannot be
forked); on a GPU the batched queries of one process are the way to go faster.
"""

from __future__ import annotations

import logging
import multiprocessing
import random
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from datasets import Dataset
from tqdm.auto import tqdm

from ..errors import InputError
from .base import AttackRecipe, Classifier, Text
from .metrics import attack_summary, running_postfix
from .results import ResultRecord, append_record, open_results

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Example:
    """One example to attack: its row in the set (`index`), its id, its texts and its gold label (task order)."""

    index: int
    id: str
    text: Text
    label: int


def select_indices(size: int, num_examples: int | None, seed: int | None = None) -> list[int]:
    """Rows to attack: all, the first `num_examples`, or (with `seed`) a seeded sample of them in row order."""
    if num_examples is not None and num_examples < 1:
        raise InputError(f"--num_examples must be >= 1, got {num_examples}; omit it to attack every example")
    if num_examples is None or num_examples >= size:
        return list(range(size))
    if seed is None:
        return list(range(num_examples))
    return sorted(random.Random(seed).sample(range(size), num_examples))


def dataset_examples(dataset: Dataset, indices: Sequence[int]) -> list[Example]:
    """Examples of a canonical dataset (`sentence1`[, `sentence2`], `label`, `id`) at `indices`."""
    text_columns = [c for c in ("sentence1", "sentence2") if c in dataset.column_names]
    if not text_columns or "label" not in dataset.column_names:
        raise InputError(f"cannot attack a set with columns {dataset.column_names}: need sentence1 and label")
    rows = dataset.select(indices)
    ids = rows["id"] if "id" in rows.column_names else [str(i) for i in indices]
    out = []
    for i, row, ex_id in zip(indices, rows, ids):
        if row["label"] < 0:
            raise InputError(f"example {ex_id} (row {i}) has no gold label: an attack needs labelled examples")
        out.append(Example(i, str(ex_id), tuple(row[c] for c in text_columns), int(row["label"])))
    return out


def _check_resumed(records: list[ResultRecord], examples: list[Example], path: str) -> dict[int, ResultRecord]:
    by_index = {e.index: e for e in examples}
    done: dict[int, ResultRecord] = {}
    for record in records:
        example = by_index.get(record.index)
        if example is None or example.text != record.result.original or example.id != record.id:
            raise InputError(
                f"{path}: result of row {record.index} (id {record.id}) does not match this run's example there "
                "(the data changed?); pass --overwrite_output_dir to attack again"
            )
        done[record.index] = record
    return done


def attack_examples(
    recipe: AttackRecipe,
    classifier: Classifier,
    examples: list[Example],
    path: str,
    settings: dict[str, Any],
    *,
    overwrite: bool = False,
    disable_tqdm: bool = False,
    num_workers: int = 1,
) -> list[ResultRecord]:
    """Attack `examples` not yet in `path` (`num_workers` processes at once), appending each result in example
    order; return all records in example order."""
    check_num_workers(num_workers, classifier)
    f, records = open_results(path, settings, overwrite=overwrite)
    try:
        done = _check_resumed(records, examples, path)
        if done:
            logger.info(f"{path}: resuming after {len(done)} of {len(examples)} examples already attacked")
        counts = Counter(r.result.outcome for r in done.values())
        bar = tqdm(total=len(examples), initial=len(done), desc=f"attack {recipe.name}", disable=disable_tqdm)
        todo = [e for e in examples if e.index not in done]
        for record in _attacked(recipe, classifier, todo, num_workers):
            append_record(f, record)
            done[record.index] = record
            counts[record.result.outcome] += 1
            bar.set_postfix(running_postfix(counts), refresh=False)
            bar.update(1)
        bar.close()
    finally:
        f.close()
    return [done[e.index] for e in examples]


def check_num_workers(num_workers: int, classifier: Classifier) -> None:
    """Refuse a worker count below 1, and workers for a victim on a GPU (a CUDA context cannot be forked)."""
    if num_workers < 1:
        raise InputError(f"--num_workers must be >= 1, got {num_workers}; 1 attacks the examples one by one")
    device = getattr(getattr(classifier, "device", None), "type", "cpu")
    if num_workers > 1 and device != "cpu":
        raise InputError(
            f"--num_workers {num_workers} needs the victim on the CPU (it is on {device}, which forked processes "
            "cannot share); pass --num_workers 1 on a GPU"
        )


def _attack_one(recipe: AttackRecipe, classifier: Classifier, example: Example) -> ResultRecord:
    if hasattr(classifier, "reset"):
        classifier.reset()
    else:
        classifier.num_queries = 0
    start = time.perf_counter()
    result = recipe.attack(example.text, example.label, classifier)
    seconds = round(time.perf_counter() - start, 4)  # as written to the file
    return ResultRecord(example.index, example.id, recipe.name, result, seconds)


_FORKED: tuple[AttackRecipe, Classifier] | None = None  # what forked workers attack with (set before the fork)


def _one_thread_per_worker() -> None:
    """A forked worker runs torch on one thread: the OpenMP thread pool the parent had does not survive the fork,
    and a child that enters a parallel region with it waits forever (the suite hung there with 2 torch threads)."""
    torch.set_num_threads(1)


def _attack_in_worker(example: Example) -> ResultRecord:
    assert _FORKED is not None, "a worker without a recipe: _attacked sets it before forking"
    return _attack_one(*_FORKED, example)


def _attacked(
    recipe: AttackRecipe, classifier: Classifier, examples: list[Example], num_workers: int
) -> Iterator[ResultRecord]:
    """The records of `examples` in their order, attacked here or by `num_workers` forked processes."""
    if num_workers == 1 or len(examples) < 2:
        yield from (_attack_one(recipe, classifier, e) for e in examples)
        return
    global _FORKED
    _FORKED = (recipe, classifier)
    try:
        context = multiprocessing.get_context("fork")
        with context.Pool(min(num_workers, len(examples)), initializer=_one_thread_per_worker) as pool:
            yield from pool.imap(_attack_in_worker, examples, chunksize=1)
    finally:
        _FORKED = None


def summarize_records(records: list[ResultRecord]) -> dict[str, Any]:
    """`attack_summary` of the records, with examples/minute from the seconds each attack took (so a resumed
    file counts the time of every run that wrote it)."""
    seconds = sum(r.seconds for r in records)
    return attack_summary([r.result for r in records], elapsed_seconds=seconds)
