"""Options of the l0 search: hard-concrete masks with an L0 penalty (Robust Tickets §3.2, Eq. 1-5 and 8; Table 6)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from ...errors import InputError
from ..base import PruningConfig

_EXAMPLE_RATES = {"weight_learning_rate": "3e-5", "l0_lagrangian_learning_rate": "0.5"}


@dataclass
class L0Config(PruningConfig):
    """Hard-concrete gates over the frozen weights (or units) of θ_pr, trained with a penalty or a constraint
    (`--pruning l0`).

    With the penalty λ_t·R(m) (`l0_constraint="penalty"`, the paper's) the search is not constrained to a sparsity:
    λ decides how sparse the gates get (§3.2.2); with `"lagrangian"` (CoFi's constraint,
    `hf_srnets.pruning.l0.constraint`) the expected sparsity is driven to s. `sparsity` s is the sparsity of the
    *ticket* the run saves, extracted from log α at the end by ranking (§3.3), over all of θ_pr
    (`sparsity_scope="global"`, the paper's setting and this method's default) or per matrix (`"local"`). Other
    sparsities are extracted later from the same element search without training (`run_extract_ticket.py`).

        l0_lambda: λ of Eq. 8 (Table 6: 0.5 for SST-2, AG News, IMDB; 0.1 for QQP, QNLI, MNLI).
        l0_temperature: β of Eq. 2 and 4 (2/3, as in the authors' released code and Louizos et al. 2018).
        l0_init_keep: p, the deterministic gate (Eq. 5) every weight starts at: log α = logit((p − γ)/(ζ − γ))
            (0.9, the authors' `mask_p`).
        l0_lambda_start_fraction / l0_lambda_warmup_fraction: a, b of the warm-up form of the authors' code,
            λ_t = λ · clip((t − a·T)/(b·T), 0, 1) with T the run's optimisation steps; both 0 give a constant λ
            (Eq. 8 as printed). Their code counts 3 per step (the input tensors of a batch, not examples), so its
            timing as run is a = 0.0333, b = 0.1.
        l0_constraint: `penalty` (λ_t·R(m), Eq. 8) or `lagrangian` (λ_1·(ŝ − t) + λ_2·(ŝ − t)², ŝ the expected
            sparsity, t the target; the multipliers train by gradient ascent: CoFi, Xia et al. 2022).
        l0_target_warmup_fraction: f of the Lagrangian's target t_k = s·min(1, k/(f·T)) (0.1: CoFi's MNLI recipe,
            2 of 20 epochs).
        l0_lagrangian_learning_rate: the multipliers' own learning rate (None: `mask_learning_rate`, CoFi's one
            `reg_learning_rate` for log α and λ). A unit's share of ŝ is tiny (~1e-4 of MiniLM's masked weights), so
            in a search of hundreds of steps λ must grow faster than log α moves for L_c to outweigh the task.
        train_weights / weight_learning_rate: train every weight with the gates (CoFi trains them jointly; the
            paper's search keeps them frozen), as mask training's options of the same names; the saved masks then
            carry the trained weights and `--step_objective dense_distil` needs `--teacher_model`.
        ticket_source: for a ticket extracted by `run_extract_ticket.py`, the search directory it came from.
    """

    _argument_group_name: ClassVar[str] = "Pruning method l0 (--pruning l0, Robust Tickets §3.2)"

    sparsity: float = field(
        default=0.5,
        metadata={
            "help": "l0: sparsity of the ticket the run saves (extracted from log α at the end); the search itself "
            "is not constrained to it."
        },
    )
    sparsity_scope: Literal["local", "global"] = field(
        default="global", metadata={"help": "l0: ticket ranking over all of θ_pr (global, the paper) or per matrix."}
    )
    l0_lambda: float = field(
        default=0.5,
        metadata={
            "help": "l0: λ of the L0 penalty, Eq. 8 (Table 6: 0.1-0.5); λ, not --sparsity, sets how sparse the "
            "search gets. With l0, --sparsity is the sparsity of the ticket the run saves (ranked from log α at the "
            "end, --sparsity_scope global by default); run_extract_ticket.py draws others."
        },
    )
    l0_temperature: float = field(default=2 / 3, metadata={"help": "l0: temperature β of the hard concrete (2/3)."})
    l0_init_keep: float = field(
        default=0.9, metadata={"help": "l0: initial deterministic gate p of every weight (0.9, the authors' code)."}
    )
    l0_lambda_start_fraction: float = field(
        default=0.1, metadata={"help": "l0: λ is 0 until this fraction of training (authors' warm-up; 0 = none)."}
    )
    l0_lambda_warmup_fraction: float = field(
        default=0.3, metadata={"help": "l0: then rises linearly to λ over this fraction (0 = at once)."}
    )
    l0_constraint: Literal["penalty", "lagrangian"] = field(
        default="penalty",
        metadata={
            "help": "l0: penalty (λ·R(m), Robust Tickets Eq. 8: λ sets the sparsity reached) or lagrangian (CoFi: "
            "λ_1·(ŝ − t) + λ_2·(ŝ − t)² with learned multipliers drives the expected sparsity ŝ to --sparsity)."
        },
    )
    l0_target_warmup_fraction: float = field(
        default=0.1,
        metadata={
            "help": "l0 lagrangian: the target sparsity grows linearly from 0 to --sparsity over this fraction of "
            "training (0.1: CoFi's MNLI recipe, 2 of 20 epochs; 0 = at once)."
        },
    )
    l0_lagrangian_learning_rate: float | None = field(
        default=None,
        metadata={
            "help": "l0 lagrangian: learning rate of the multipliers λ_1, λ_2 (default: --mask_learning_rate, as "
            "CoFi's one reg_learning_rate); short searches need them faster than the gates (docs/structured.md)."
        },
    )
    train_weights: bool = field(
        default=False,
        metadata={
            "help": "l0: train the model's weights together with the gates (CoFi); default: frozen weights (Robust "
            "Tickets). Saved masks then carry the trained weights; dense_distil needs --teacher_model."
        },
    )
    weight_learning_rate: float | None = field(
        default=None,
        metadata={"help": "Learning rate of the weights with --train_weights; default: --learning_rate."},
    )
    ticket_source: str | None = field(
        default=None, metadata={"cli": False, "help": "The l0 search directory a ticket was extracted from."}
    )

    @property
    def trains_weights(self) -> bool:
        return self.train_weights

    @property
    def weights_learning_rate(self) -> float | None:
        return self.weight_learning_rate if self.train_weights else None

    def validate(self) -> None:
        super().validate()
        if self.l0_lambda < 0:
            raise InputError(f"l0_lambda must be >= 0, got {self.l0_lambda}: pass e.g. --l0_lambda 0.5 (Table 6).")
        if self.l0_temperature <= 0:
            raise InputError(f"l0_temperature must be > 0, got {self.l0_temperature}: the paper uses 2/3.")
        if not 0.0 < self.l0_init_keep < 1.0:
            raise InputError(f"l0_init_keep must be in (0, 1), got {self.l0_init_keep}: e.g. --l0_init_keep 0.9.")
        start, warmup = self.l0_lambda_start_fraction, self.l0_lambda_warmup_fraction
        if not (0.0 <= start <= 1.0 and 0.0 <= warmup <= 1.0):
            raise InputError(
                "l0_lambda_start_fraction and l0_lambda_warmup_fraction are fractions of the training steps in "
                f"[0, 1], got {start} and {warmup}; pass 0 and 0 for a constant λ."
            )
        for name in ("weight_learning_rate", "l0_lagrangian_learning_rate"):
            rate = getattr(self, name)
            if rate is not None and not (math.isfinite(rate) and rate > 0):
                raise InputError(f"{name} must be > 0, got {rate}: e.g. --{name} {_EXAMPLE_RATES[name]}.")
        if self.l0_constraint not in ("penalty", "lagrangian"):
            raise InputError(f"l0_constraint must be penalty or lagrangian, got {self.l0_constraint!r}.")
        if not 0.0 <= self.l0_target_warmup_fraction <= 1.0:
            raise InputError(
                f"l0_target_warmup_fraction is a fraction of the training steps in [0, 1], got "
                f"{self.l0_target_warmup_fraction}: e.g. --l0_target_warmup_fraction 0.1."
            )

    def unused_options(self) -> dict[str, str]:
        unused = super().unused_options()
        if self.l0_constraint == "lagrangian":
            why = "--l0_constraint lagrangian learns its multipliers instead of the penalty's λ"
            unused.update(dict.fromkeys(("l0_lambda", "l0_lambda_start_fraction", "l0_lambda_warmup_fraction"), why))
        else:
            why = "it belongs to --l0_constraint lagrangian"
            unused.update(dict.fromkeys(("l0_target_warmup_fraction", "l0_lagrangian_learning_rate"), why))
        if not self.train_weights:
            unused["weight_learning_rate"] = "the weights stay frozen without --train_weights"
        return unused
