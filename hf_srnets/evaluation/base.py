"""The evaluator interface and its registry: an evaluation is a class named by the task's sets.

A task names the evaluator of its ID dev set (`TaskSpec.evaluator`) and each OOD set names its own
(`EvalSet.kind`); `build_evaluator` turns a name into an evaluator for the task. A new evaluation is a new
module with a `@register_evaluator` class and its name in a task (`hf_srnets/data/tasks.py`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np

from ..data.tasks import EvalSet, TaskSpec
from ..errors import check_subclass_argument
from ..registry import register

EVALUATORS: dict[str, type[Evaluator]] = {}

E = TypeVar("E", bound="type[Evaluator]")


def register_evaluator(cls: E) -> E:
    """Class decorator: make an `Evaluator` subclass available under its `name` (a taken name is refused)."""
    check_subclass_argument(cls, Evaluator, "register_evaluator")
    return register(EVALUATORS, cls.name, cls, "evaluator")


class Evaluator(ABC):
    """Scores a model's predictions on one evaluation set of `task`.

    `__call__(logits, labels, dataset)` takes the logits of every example (argmax = the prediction), the gold
    label ids and the evaluated dataset (for the extra `columns` an evaluator reads, e.g. HANS heuristics), and
    returns metric name -> value; the results keys are `eval_<set>_<metric>`. `primary_metric` is the one a
    card, a sweep or model selection reports for the set.
    """

    name: ClassVar[str]
    columns: ClassVar[tuple[str, ...]] = ()  # dataset columns `score` reads, passed by name when present

    def __init__(self, task: TaskSpec) -> None:
        self.task = task

    @property
    @abstractmethod
    def primary_metric(self) -> str:
        """The metric this evaluation reports first."""

    @abstractmethod
    def score(self, predictions: np.ndarray, labels: np.ndarray, **columns: Any) -> dict[str, float]:
        """Metrics of predicted label ids against gold label ids; `columns` as named in `columns`."""

    def __call__(
        self, logits: np.ndarray, labels: np.ndarray, dataset: Mapping[str, Sequence] | Any = None
    ) -> dict[str, float]:
        predictions = np.asarray(logits).argmax(-1)
        return self.score(predictions, np.asarray(labels), **self.read_columns(dataset))

    def read_columns(self, dataset: Mapping[str, Sequence] | Any) -> dict[str, Any]:
        """The evaluator's `columns` that `dataset` (a `datasets.Dataset` or a mapping of columns) has."""
        if dataset is None:
            return {}
        names = dataset.column_names if hasattr(dataset, "column_names") else list(dataset)
        return {column: dataset[column] for column in self.columns if column in names}


def build_evaluator(name: str, task: TaskSpec) -> Evaluator:
    """The evaluator registered as `name`, for `task`; a ValueError lists the known names."""
    if name not in EVALUATORS:
        raise ValueError(f"unknown evaluator {name!r}; known evaluators: {sorted(EVALUATORS)}")
    return EVALUATORS[name](task)


def evaluator_for(task: TaskSpec, eval_set: EvalSet | None = None) -> Evaluator:
    """The evaluator of `eval_set` (its `kind`), or of the task's ID dev set when `eval_set` is None."""
    return build_evaluator(task.evaluator if eval_set is None else eval_set.kind, task)
