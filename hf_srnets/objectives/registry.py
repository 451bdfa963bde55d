"""Registry of step-level objectives and `build_objective`, the objective of a `--loss` (and later a step) value."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import check_subclass_argument
from ..losses import LOSSES, DebiasingLoss, get_loss
from ..registry import register
from ..resources.citations import PACKAGE_CITATION
from .base import Objective
from .loss import LossObjective
from .step import StepObjective

OBJECTIVES: dict[str, type[StepObjective]] = {}


def register_objective(cls: type[StepObjective]) -> type[StepObjective]:
    """Class decorator: make a step-level objective available by its `name` (`build_objective(..., step=name)`)."""
    if isinstance(cls, type) and not issubclass(cls, StepObjective):
        raise TypeError(f"{cls.__name__} is not a StepObjective: register losses with hf_srnets.losses.register_loss")
    check_subclass_argument(cls, StepObjective, "register_objective")
    if not cls.name:
        raise ValueError(f"{cls.__name__} needs a non-empty `name`")
    return register(OBJECTIVES, cls.name, cls, "step objective")


def build_objective(
    loss: str, *, step: str | None = None, step_options: Mapping[str, Any] | None = None, **loss_options: Any
) -> Objective:
    """The objective for the registered loss `loss` (built with `loss_options`), wrapped in the registered
    step-level objective `step` (built with `step_options`) when one is named."""
    objective: Objective = LossObjective(get_loss(loss, **loss_options))
    if step is None:
        if step_options:
            raise ValueError(f"step_options {dict(step_options)} given without a step objective")
        return objective
    if step not in OBJECTIVES:
        raise ValueError(f"Unknown step objective {step!r}; available: {sorted(OBJECTIVES)}")
    return OBJECTIVES[step](objective, **dict(step_options or {}))


def citations_for(objective: Objective | DebiasingLoss | str | None, step: str | None = None) -> list[str]:
    """The BibTeX keys a card cites for a run trained with `objective` (an objective, a loss or a loss name):
    the package's paper, then the objective's own, then those of the registered step objective `step` (e.g.
    `--step_objective freelb`; None or "none" for none), each once, in order. An unknown loss name (a loss registered
    by another package and not imported here) gets the package's paper only."""
    if isinstance(objective, str):
        objective = LOSSES.get(objective)
    own = getattr(objective, "citations", ()) if objective is not None else ()
    step_own = getattr(OBJECTIVES.get(step or "none"), "step_citations", ())
    return list(dict.fromkeys([PACKAGE_CITATION, *own, *step_own]))
