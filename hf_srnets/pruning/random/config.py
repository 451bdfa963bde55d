"""Options of the random-ticket baseline (Robust Tickets §4.2, "Rand")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ..base import PruningConfig


@dataclass
class RandomConfig(PruningConfig):
    """Fixed random masks with, for every masked matrix, exactly the zeros of the same matrix in a given ticket.

    random_like: a saved hf_srnets mask directory (any method: an l0 ticket, mask training, IMP) whose
        per-matrix number of zeros the random masks copy; `sparsity` is then set to its overall sparsity.
    random_seed: seed of the random positions; `None`: the run's `--seed`.
    """

    _argument_group_name: ClassVar[str] = "Pruning method random (--pruning random, the Rand baseline)"

    random_like: str | None = field(
        default=None, metadata={"help": "random: the mask directory whose per-matrix sparsity to copy."}
    )
    random_seed: int | None = field(default=None, metadata={"help": "random: seed of the masks; default: --seed."})

    def unused_options(self) -> dict[str, str]:
        """The common options, and `sparsity` and `sparsity_scope`: the masks copy those of `random_like`."""
        return {
            **super().unused_options(),
            "sparsity": "--pruning random copies the per-matrix zeros (and so the sparsity) of --random_like",
            "sparsity_scope": "--pruning random copies --random_like",
        }
