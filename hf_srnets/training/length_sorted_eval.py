"""Evaluation in order of length: batches of similar lengths pad less, and outputs come back in dataset order.

`SRNetTrainer` evaluates through a `LengthSortedSampler` (`--eval_sort_by_length`, on by default) and restores the
dataset order of predictions, labels and `compute_metrics` inputs with `restore_order`, so results do not depend on
the batching.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow.compute as pc
from torch.utils.data import Sampler


class LengthSortedSampler(Sampler[int]):
    """The indices of an evaluation set from the longest example to the shortest, equal lengths in dataset order.

    `order[k]` is the dataset index of the k-th example the evaluation loop sees; `restore_order` puts outputs
    back in dataset order. With several processes, accelerate shards the batches of this order and
    `gather_for_metrics` concatenates them in the same order, so `order` describes the gathered outputs too.
    """

    def __init__(self, lengths: np.ndarray) -> None:
        lengths = np.asarray(lengths, dtype=np.int64)
        self.order = np.argsort(-lengths, kind="stable")

    def __iter__(self) -> Iterator[int]:
        return iter(self.order.tolist())

    def __len__(self) -> int:
        return len(self.order)


def example_lengths(dataset: Any, column: str, length_column: str = "length") -> np.ndarray | None:
    """Per-example lengths: the `length_column` if the dataset has one, else the length of each `column` list
    (tokenized without padding); None when neither can be read (e.g. already padded tensors)."""
    names = getattr(dataset, "column_names", None)
    if names is not None:  # a `datasets.Dataset`: read the lengths from Arrow, without decoding the rows
        if length_column in names:
            return np.asarray(dataset[length_column], dtype=np.int64)
        if column not in names:
            return None
        return pc.list_value_length(dataset.with_format("arrow")[column]).to_numpy(zero_copy_only=False)
    first = dataset[0] if len(dataset) else None
    if not isinstance(first, dict) or not hasattr(first.get(column), "__len__"):
        return None
    return np.asarray([len(dataset[i][column]) for i in range(len(dataset))], dtype=np.int64)


def restore_order(values: Any, order: np.ndarray) -> Any:
    """Outputs in dataset order from outputs in evaluation order: row k of `values` is example `order[k]`, so
    example i is row `inverse[i]` with `inverse[order[k]] = k`. Tuples, lists and dicts (several model outputs)
    are restored element by element; None stays None."""
    if values is None:
        return None
    if isinstance(values, (tuple, list)):
        return type(values)(restore_order(v, order) for v in values)
    if isinstance(values, dict):
        return {k: restore_order(v, order) for k, v in values.items()}
    if len(values) != len(order):
        raise ValueError(
            f"An evaluation output has {len(values)} rows for {len(order)} examples: cannot restore the dataset "
            "order of a length-sorted evaluation. Set --eval_sort_by_length false."
        )
    inverse = np.empty_like(order)
    inverse[order] = np.arange(len(order))
    return values[inverse]


def restore_if_per_example(losses: Any, order: np.ndarray) -> Any:
    """`include_for_metrics` losses: one per example (each its batch's mean) are restored; other shapes kept."""
    if isinstance(losses, np.ndarray) and losses.ndim >= 1 and len(losses) == len(order):
        return restore_order(losses, order)
    return losses


def find_sorted_sampler(dataloader: Any) -> LengthSortedSampler | None:
    """The `LengthSortedSampler` under a (prepared, possibly sharded) evaluation dataloader, if any."""
    queue, seen = [dataloader], set()
    while queue:
        obj = queue.pop()
        if isinstance(obj, LengthSortedSampler):
            return obj
        if obj is None or id(obj) in seen:
            continue
        seen.add(id(obj))
        queue.extend(getattr(obj, name, None) for name in ("batch_sampler", "sampler", "base_dataloader"))
    return None
