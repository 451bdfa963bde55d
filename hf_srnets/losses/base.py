"""Base class and registry of the debiasing losses (Win-win §3.3, appendix A.2)."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from ..data.example_columns import EXAMPLE_COLUMNS
from ..errors import InputError, check_subclass_argument
from ..registry import register

PROB_EPS = 1e-12  # bias/teacher probabilities are clipped to this before the log


class DebiasingLoss(nn.Module):
    """A classification loss that may use the bias model's p_b and/or a teacher's p_t per example.

    Subclasses set `name` (the `--loss` value), `requires` (the dataset columns they need, among
    `"bias_probs"`, `"teacher_probs"` and `"difficulty"`, or a column of their own, registered with
    `hf_srnets.data.register_example_column` for its flag and join by id), `options_class` (None, or a
    dataclass of their settings, e.g. `DistillationOptions(distil_lambda=0.9)`: each field with a `help`, checked
    in its `__post_init__`; `run_glue_sparse.py` gives each field as a flag of `--loss <name>`) and `citations`
    (BibTeX keys of `hf_srnets.resources.citations.BIBTEX`: the papers that define the formula), and implement
    `forward(logits, labels, **columns)`, whose keyword arguments are exactly the names in `requires`
    (`forward(self, logits, labels, bias_probs)` for `poe`), returning the batch-mean loss and a dict of scalar
    components to log (the plain cross-entropy `ce` = −y·log p_m is added to them for every loss).
    Calling the loss checks that each required column is given with the right shape and passes only those to
    `forward`. The constructor takes the options: `Loss(options)` with an `options_class` instance,
    or `Loss(**fields)` (defaults for those not given); each field is also an attribute (`loss.distil_lambda`).
    Notation of Win-win §3.3: p_m the main model's softmax, y the one-hot gold label of class c, p_b the bias
    model's probabilities, β = p_b^c the bias degree, p_t a teacher's softmax; d_i the sample difficulty of RMC
    (Du et al. 2023, Eq. 1), one value per example.
    `hf_srnets.objectives.LossObjective` runs a loss inside the trainer.
    """

    name: ClassVar[str] = ""
    requires: ClassVar[tuple[str, ...]] = ()
    options_class: ClassVar[type | None] = None
    citations: ClassVar[tuple[str, ...]] = ("winwin",)

    def __init__(self, options: Any | None = None, /, **values: Any) -> None:
        super().__init__()
        settings = build_options(type(self), options, values)
        for option in option_names(type(self)):
            setattr(self, option, getattr(settings, option))

    def options(self) -> Any | None:
        """This loss's settings as its `options_class` (None for a loss without options)."""
        cls = type(self).options_class
        return None if cls is None else cls(**{option: getattr(self, option) for option in option_names(type(self))})

    def __call__(
        self, logits: torch.Tensor, labels: torch.Tensor, **columns: torch.Tensor | None
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        self._check(logits, **columns)
        # every loss computes in float32 whatever the model's precision: its logits and float columns cast once here
        given = {column: _as_float32(columns[column]) for column in self.requires}
        logits = _as_float32(logits)
        loss, components = super().__call__(logits, labels, **given)
        # every loss logs the plain cross-entropy −y·log p_m beside its own terms, to compare runs of other losses
        return loss, {**components, "ce": F.cross_entropy(logits.detach(), labels)}

    def forward(
        self, logits: torch.Tensor, labels: torch.Tensor, **columns: torch.Tensor
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        raise NotImplementedError

    def get_config_dict(self) -> dict[str, Any]:
        """What the model card records of this loss: its name, the columns it reads and its options' values."""
        config: dict[str, Any] = {"loss": self.name, "requires": list(self.requires)}
        config.update({option: getattr(self, option) for option in option_names(type(self))})
        return config

    def _check(self, logits: torch.Tensor, **columns: torch.Tensor | None) -> None:
        """Each column in `requires` is given, one value per example (a 1-D column, or a registered column that is
        not `per_label`, e.g. `difficulty`) or one row of the logits' shape per example; a `ValueError` names the
        column and the flag that gives it (`hf_srnets.data.example_columns`)."""
        for column in self.requires:
            value, registered = columns.get(column), EXAMPLE_COLUMNS.get(column)
            if value is None:
                given = f"pass --{registered.flag} FILE" if registered is not None else "add it to the dataset"
                raise ValueError(f"The {self.name!r} loss needs the {column!r} column; {given}.")
            if (registered is not None and not registered.per_label) or value.dim() == 1:
                if value.shape != logits.shape[:1]:
                    raise ValueError(f"{column} has shape {tuple(value.shape)}: one value per example expected")
                continue
            if value.shape != logits.shape:
                raise ValueError(
                    f"{column} has shape {tuple(value.shape)} but the logits have {tuple(logits.shape)}: "
                    "the predictions were made for a task with another number of labels."
                )


LOSSES: dict[str, type[DebiasingLoss]] = {}


def option_names(cls: type[DebiasingLoss]) -> tuple[str, ...]:
    """The fields of the loss class's `options_class`, in declaration order (none without one)."""
    return () if cls.options_class is None else tuple(f.name for f in dataclasses.fields(cls.options_class))


def build_options(cls: type[DebiasingLoss], options: Any | None, values: dict[str, Any]) -> Any | None:
    """The loss class's `options_class` instance: `options` itself, or built from the field `values` (checked
    by its `__post_init__`); a `TypeError` for options a loss without `options_class` cannot take."""
    if cls.options_class is None:
        if options is not None or values:
            given = sorted(values) or [type(options).__name__]
            raise TypeError(f"The {cls.name!r} loss takes no options, got {', '.join(given)}")
        return None
    if options is None:
        return cls.options_class(**values)
    if values or not isinstance(options, cls.options_class):
        raise TypeError(f"The {cls.name!r} loss takes one {cls.options_class.__name__} or its fields, not both")
    return options


def register_loss(cls: type[DebiasingLoss]) -> type[DebiasingLoss]:
    """Class decorator: make a loss available by its `name` (e.g. `--loss poe`)."""
    check_subclass_argument(cls, DebiasingLoss, "register_loss")
    if not cls.name:
        raise ValueError(f"{cls.__name__} needs a non-empty `name`")
    if cls.options_class is not None and not dataclasses.is_dataclass(cls.options_class):
        raise TypeError(f"{cls.__name__}.options_class must be a dataclass, got {cls.options_class!r}")
    return register(LOSSES, cls.name, cls, "loss")


def get_loss(name: str, **kwargs: Any) -> DebiasingLoss:
    """Instantiate a registered loss by name, with its options as keyword arguments."""
    if name not in LOSSES:
        raise InputError(f"Unknown loss {name!r}; available: {sorted(LOSSES)}")
    return LOSSES[name](**kwargs)


def _as_float32(value: torch.Tensor) -> torch.Tensor:
    """A floating tensor as float32 (fp16/bf16 logits under autocast, float64 columns); other tensors as they are."""
    return value.float() if value.is_floating_point() else value


def safe_log(probs: torch.Tensor) -> torch.Tensor:
    """log(max(p, PROB_EPS)): a zero probability in a predictions file gives a finite log."""
    return torch.log(probs.clamp_min(PROB_EPS))
