"""Options of iterative magnitude pruning (Win-win §3.2.1, appendix A.1.1, Algorithm 1, Table 4)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ..base import PruningConfig


@dataclass
class MagnitudeConfig(PruningConfig):
    """IMP: every Δt prune Δs more of each matrix by |W| until s = k·Δs (`--pruning imp`, `imp-rw`).

    imp_prune_ratio: Δs, the fraction of each matrix pruned per round (Table 4: 10%).
    imp_interval: Δt, the training between rounds as a fraction of t_max (0.1).
    rewind: After the k-th round, rewind the weights to θ_0, the run's starting weights (`imp-rw`, the lottery
        ticket setting); otherwise train Δt more at the target sparsity (`imp`).
    """

    _argument_group_name: ClassVar[str] = "Pruning method magnitude (--pruning magnitude, imp or imp-rw)"

    imp_prune_ratio: float = field(default=0.1, metadata={"help": "IMP: Δs pruned per round (Table 4: 10%%)."})
    imp_interval: float = field(default=0.1, metadata={"help": "IMP: Δt between rounds, fraction of t_max (0.1)."})
    rewind: bool = field(
        default=False, metadata={"help": "IMP: rewind the weights to the starting ones after the last round (imp-rw)."}
    )
