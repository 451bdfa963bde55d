"""Changes to a task's data before a run reads it (`--data_transform NAME`), one registry, `DATA_TRANSFORMS`.

A transform (a `DataTransform` subclass registered with `register_data_transform`) takes the loaded training, ID
dev and OOD sets and returns them changed, adding evaluation sets of its own (`eval_sets`, named, scored like the
task's OOD sets and reported as `eval_<name>_*`). Its options are a dataclass (`options_class`, each field with a
`help`): `run_glue_sparse.py` gives each field as a flag of `--data_transform NAME`. The package's transform is the
controlled cue of `hf_srnets.data.cues`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from datasets import Dataset

from ..errors import InputError
from ..registry import register
from .tasks import DERIVED_SET_NAMES, EvalSet, TaskSpec

EvalSets = list[tuple[EvalSet, Dataset]]


class DataTransform:
    """A change to a run's data. Subclasses set `name`, `options_class` (a dataclass, or None), `citations` and
    implement `apply` and `eval_sets` (naming its sets in `set_names`); `description` says what was done, in words,
    for the card."""

    name: ClassVar[str] = ""
    options_class: ClassVar[type | None] = None
    citations: ClassVar[tuple[str, ...]] = ()
    # the names of the sets `eval_sets` makes -> their display names (results tables, plots)
    set_names: ClassVar[dict[str, str]] = {}

    def __init__(self, options: Any | None = None) -> None:
        cls = type(self)
        if options is None and cls.options_class is not None:
            options = cls.options_class()
        self.options = options

    def eval_sets(self, task: TaskSpec) -> tuple[EvalSet, ...]:
        """The evaluation sets the transform adds, before any data is read (sweeps name their metrics from them)."""
        return ()

    def apply(
        self, task: TaskSpec, train: Dataset, validation: Dataset, ood: EvalSets
    ) -> tuple[Dataset, Dataset, EvalSets]:
        """The training, dev and OOD sets changed, with `eval_sets(task)` added to the OOD sets."""
        raise NotImplementedError

    def check_tokenizer(self, task: TaskSpec, tokenizer: Any) -> None:
        """Refuse (`InputError`) settings the model's tokenizer would read otherwise than they were meant (the run
        calls it once the tokenizer is loaded, before training); default: nothing to check."""

    def description(self, task: TaskSpec) -> str:
        """What the transform did to the data, in one sentence (the card's data section)."""
        return f"data transform {self.name}"

    def settings(self) -> dict[str, Any]:
        """The options as plain values (results, cards, cache keys)."""
        return {} if self.options is None else dataclasses.asdict(self.options)


DATA_TRANSFORMS: dict[str, type[DataTransform]] = {}


def register_data_transform(cls: type[DataTransform]) -> type[DataTransform]:
    """Add a `DataTransform` subclass to `DATA_TRANSFORMS` under its `name` (a `--data_transform` value)."""
    if not (isinstance(cls, type) and issubclass(cls, DataTransform)) or not cls.name:
        raise TypeError(f"register_data_transform takes a named DataTransform subclass, got {cls!r}")
    register(DATA_TRANSFORMS, cls.name, cls, "data transform")
    DERIVED_SET_NAMES.update(cls.set_names)
    return cls


def get_data_transform(name: str, options: Any | None = None) -> DataTransform:
    """The registered transform `name` with `options`; an unknown name is an `InputError` listing the known ones."""
    if name not in DATA_TRANSFORMS:
        known = ", ".join(sorted(DATA_TRANSFORMS)) or "none registered"
        raise InputError(f"--data_transform {name!r} is not a data transform; the transforms are: {known}")
    return DATA_TRANSFORMS[name](options)
