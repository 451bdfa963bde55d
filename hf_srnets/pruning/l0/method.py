"""`l0`: hard-concrete masks with an L0 penalty over frozen weights (Robust Tickets §3.2), the robust-ticket search."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import torch
from torch import nn

from ..base import CardContext, PruningMethod, register_pruning_method
from ..masked_model import MaskedModel
from ..schedule import linear_warmup
from ..sharding import whole
from ..units import unit_layer_groups
from ..wrapped import model_weights
from .config import L0Config
from .constraint import LagrangeMultipliers, lagrangian, target_sparsity_at
from .extract import extract_ticket, extract_unit_ticket
from .layer import HardConcreteLinear, deterministic_gate, expected_nonzero
from .units import HardConcreteUnitLinear, HardConcreteUnits


def lambda_at(step: int, max_steps: int, config: L0Config) -> float:
    """λ_t = λ · clip((t − a·T)/(b·T), 0, 1), the warm-up of the authors' released code (ruizheng20/robust_ticket).

    a = `l0_lambda_start_fraction`, b = `l0_lambda_warmup_fraction`, T = `max_steps` (a·T and b·T not rounded:
    `hf_srnets.pruning.schedule.linear_warmup`). b = 0 switches λ on at a·T; a = b = 0 is the constant λ of Eq. 8
    as printed.
    """
    start = config.l0_lambda_start_fraction * max_steps
    warmup = config.l0_lambda_warmup_fraction * max_steps
    return linear_warmup(step, start, warmup, config.l0_lambda)


def gate_tensors(layers: Iterable[HardConcreteLinear | HardConcreteUnitLinear]) -> list[tuple[torch.Tensor, int]]:
    """(log α, weights one gate covers) of each gate tensor of `layers`, once: an element layer's own log α (one
    weight a gate); a unit group's shared log α with the weights a unit covers in all its member matrices."""
    tensors: dict[int, list] = {}
    for layer in layers:
        if isinstance(layer, HardConcreteUnitLinear):
            tensors.setdefault(id(layer.units), [layer.log_alpha, 0])[1] += layer.unit_size
        else:
            tensors[id(layer)] = [layer.log_alpha, 1]
    return [(log_alpha, weights) for log_alpha, weights in tensors.values()]


def l0_penalty(layers: list[HardConcreteLinear | HardConcreteUnitLinear], temperature: float) -> torch.Tensor:
    """R(m) of Eq. 4 over all weights of θ_pr together: Σ_gates w_g·P(m_g ≠ 0) / Σ_gates w_g, w_g the weights a gate
    covers (1 for an element gate, a unit's weights for a structured one): the expected fraction of weights kept."""
    gates = gate_tensors(layers)
    total = sum(log_alpha.numel() * weights for log_alpha, weights in gates)
    # under FSDP the step's penalty is computed on the shards of log α (outside any forward): summed whole
    kept = sum(whole(expected_nonzero(log_alpha, temperature).sum()) * weights for log_alpha, weights in gates)
    return kept / total


@register_pruning_method
class L0Pruning(PruningMethod):
    """log α trains (the weights stay frozen, unless `train_weights`) under L_task + λ_t·R(m) (Eq. 8) or the Lagrangian
    constraint (CoFi); the saved ticket is ranked by log α.

    The run's directory holds both the packed ticket at `sparsity` (global ranking by default, §3.3) and the float
    log α of every layer (`search.<module>.log_alpha`), so `--mask_from` retrains the ticket, `from_pretrained`
    gives back the search model, and `run_extract_ticket.py` draws tickets of other sparsities.
    """

    name = "l0"
    config_class = L0Config
    layer_class = HardConcreteLinear
    trains_scores = True
    granularities = ("element", "block", "ffn", "head", "hybrid", "neuron")
    citations = ("zheng2022robust", "louizos2018learning")
    search_state_words = "the float log α of every gate (the search state `run_extract_ticket.py` ranks)"

    def __init__(self, config: L0Config) -> None:
        super().__init__(config)
        self.current_lambda = config.l0_lambda
        self.current_target = 0.0  # the Lagrangian's target t at the last step
        if config.structured or config.l0_constraint == "lagrangian":  # CoFi's unit gates or its constraint
            self.citations = (*type(self).citations, "xia2022structured")
        self._ticket: tuple[tuple, dict[str, torch.Tensor]] | None = None  # the last ranking and what it ranked

    def make_layer(self, base_layer: nn.Linear) -> HardConcreteLinear:
        """The layer over `base_layer`, at this config's temperature and initial gate."""
        return HardConcreteLinear(base_layer, self.config.l0_temperature, self.config.l0_init_keep)

    def make_unit_layer(self, base_layer: nn.Linear, units: Any, member: Any, owner: bool) -> HardConcreteUnitLinear:
        """At a unit granularity: the matrix gated by its group's shared hard-concrete units."""
        return HardConcreteUnitLinear(base_layer, units, member.tile, member.grid, owner=owner, stack=member.stack)

    def make_unit_scores(self, kind: str, shape: tuple[int, ...], device: torch.device | None) -> HardConcreteUnits:
        """One log α a unit, at this config's temperature and initial gate."""
        return HardConcreteUnits(kind, shape, self.config.l0_temperature, self.config.l0_init_keep, device)

    def initialize(self, srnet: MaskedModel) -> None:
        """The fingerprint of the starting weights; with `train_weights`, every weight trainable from here on; for
        `--l0_constraint lagrangian`, the multipliers λ_1 = λ_2 = 0, held by the first masked layer so that
        checkpoints carry them."""
        srnet.record_fingerprint()
        if self.config.train_weights:  # CoFi: the weights train with the gates
            for param in model_weights(srnet.base_model):
                param.requires_grad_(True)
        if self.config.l0_constraint == "lagrangian":
            first = next(iter(srnet.masked_layers().values()))
            first.l0_constraint = LagrangeMultipliers(device=first.weight.device)

    @staticmethod
    def multipliers(srnet: MaskedModel) -> LagrangeMultipliers | None:
        """The Lagrangian's λ_1, λ_2 (`initialize`), or None with the penalty."""
        first = next(iter(srnet.masked_layers().values()), None)
        return getattr(first, "l0_constraint", None)

    def score_parameters(self, srnet: MaskedModel) -> list[nn.Parameter]:
        """log α (each tensor once) and, for the Lagrangian, λ_1 and λ_2: `--mask_learning_rate` for all (CoFi's
        one `reg_learning_rate`) unless `--l0_lagrangian_learning_rate` gives the multipliers their own."""
        multipliers = self.multipliers(srnet)
        extra = [multipliers.lambda_1, multipliers.lambda_2] if multipliers is not None else []
        return [*srnet.masked_layers_scores(), *extra]

    def score_learning_rates(self, srnet: MaskedModel) -> list[tuple[list[nn.Parameter], float]]:
        """λ_1 and λ_2 at `--l0_lagrangian_learning_rate` when it is set."""
        multipliers = self.multipliers(srnet)
        rate = self.config.l0_lagrangian_learning_rate
        if multipliers is None or rate is None:
            return []
        return [([multipliers.lambda_1, multipliers.lambda_2], rate)]

    def before_forward(self, srnet: MaskedModel) -> None:
        """A training forward pass draws each unit's gate once, for all the matrices the unit spans (an evaluation
        pass uses Eq. 5 and no draw)."""
        if srnet.srnet_config.structured:
            for units, _ in unit_layer_groups(srnet.masked_layers().items()):
                units.new_draw()

    @staticmethod
    def searching_layers(srnet: MaskedModel) -> list[HardConcreteLinear | HardConcreteUnitLinear]:
        return [layer for layer in srnet.masked_layers().values() if not layer.fixed]

    def regularization(self, srnet: MaskedModel, step: int, max_steps: int) -> torch.Tensor | None:
        """λ_t · R(m) (Eq. 4 and 8), or the Lagrangian λ_1·(ŝ − t) + λ_2·(ŝ − t)² with ŝ = 1 − R(m) (CoFi); None for
        a fixed ticket or frozen gates."""
        layers = self.searching_layers(srnet)
        if not layers or not any(layer.log_alpha.requires_grad for layer in layers):
            return None
        density = l0_penalty(layers, self.config.l0_temperature)
        multipliers = self.multipliers(srnet)
        if multipliers is not None:
            self.current_target = target_sparsity_at(
                step, max_steps, self.config.sparsity, self.config.l0_target_warmup_fraction
            )
            return lagrangian(1.0 - density, self.current_target, multipliers)
        self.current_lambda = lambda_at(step, max_steps, self.config)
        return self.current_lambda * density

    @torch.no_grad()
    def log_metrics(self, srnet: MaskedModel) -> dict[str, float]:
        """E[density] = R(m) (Eq. 4), its complement, and the fractions of Eq. 5 gates exactly 0 and 1 (Fig. 1)."""
        layers = self.searching_layers(srnet)
        if not layers:
            return {}
        density = float(l0_penalty(layers, self.config.l0_temperature))
        gates = [(deterministic_gate(log_alpha), weights) for log_alpha, weights in gate_tensors(layers)]
        total = sum(gate.numel() * weights for gate, weights in gates)
        return {
            "l0_expected_density": density,
            "l0_expected_sparsity": 1.0 - density,
            "l0_gates_zero": sum(int((gate == 0).sum()) * weights for gate, weights in gates) / total,
            "l0_gates_one": sum(int((gate == 1).sum()) * weights for gate, weights in gates) / total,
            **self._constraint_metrics(srnet),
        }

    def _constraint_metrics(self, srnet: MaskedModel) -> dict[str, float]:
        multipliers = self.multipliers(srnet)
        if multipliers is None:
            return {"l0_lambda": self.current_lambda}
        return {
            "l0_target_sparsity": self.current_target,
            "l0_lambda_1": multipliers.lambda_1.item(),
            "l0_lambda_2": multipliers.lambda_2.item(),
        }

    @torch.no_grad()
    def saved_masks(self, srnet: MaskedModel) -> dict[str, torch.Tensor]:
        """The binary ticket a save writes: ranked from log α at `sparsity` and `sparsity_scope` while searching,
        the fixed ticket otherwise."""
        layers = srnet.masked_layers()
        if all(layer.fixed for layer in layers.values()):
            return {name: layer.binary_mask() for name, layer in layers.items()}
        # the end of a run asks for the ticket three times (save, results, card): rank once per content of log α.
        # Not per `_version`: the optimiser's steps leave it at 0, so a ticket ranked at a checkpoint was saved again
        # at the end of the run (issue 51's contract test)
        key = (self.config.sparsity, self.config.sparsity_scope, _digest(layer.log_alpha for layer in layers.values()))
        if self._ticket is None or self._ticket[0] != key:
            if srnet.srnet_config.structured:
                ticket = extract_unit_ticket(layers, self.config.sparsity, self.config.sparsity_scope)
            else:
                log_alphas = {name: layer.log_alpha.detach() for name, layer in layers.items()}
                ticket = extract_ticket(log_alphas, self.config.sparsity, self.config.sparsity_scope)
            self._ticket = (key, ticket)
        return self._ticket[1]

    @classmethod
    def card_settings(cls, config: L0Config, context: CardContext) -> dict[str, Any]:
        settings = {
            "sparsity": config.sparsity,
            **config.unit_settings(),
            "sparsity_scope": config.sparsity_scope,
            "l0_temperature": config.l0_temperature,
            "l0_init_keep": config.l0_init_keep,
            "train_weights": config.train_weights or None,
            "weight_learning_rate": config.weights_learning_rate,
            **(
                {
                    "l0_constraint": "lagrangian",
                    "l0_target_warmup_fraction": config.l0_target_warmup_fraction,
                    "l0_lagrangian_learning_rate": config.l0_lagrangian_learning_rate,
                }
                if config.l0_constraint == "lagrangian"
                else {
                    "l0_lambda": config.l0_lambda,
                    "l0_lambda_start_fraction": config.l0_lambda_start_fraction,
                    "l0_lambda_warmup_fraction": config.l0_lambda_warmup_fraction,
                }
            ),
            "mask_learning_rate": context.mask_learning_rate,
            "mask_weight_decay": context.mask_weight_decay,
        }
        return {key: value for key, value in settings.items() if value is not None}

    @classmethod
    def search_description(cls, config: L0Config, context: CardContext) -> str:
        """The gates, the penalty and its warm-up, and what the saved ticket is."""
        start, warmup = config.l0_lambda_start_fraction, config.l0_lambda_warmup_fraction
        ramp = f", warmed up from {start} to {start + warmup} of training" if warmup > 0 or start > 0 else ""
        gated = "weights" if not config.structured else f"{config.mask_granularity} units (one gate a unit)"
        gated = gated if config.train_weights else f"frozen {gated}"
        if config.train_weights:  # the masks alone no longer rebuild the model: the card must say so
            gated += ", the model's weights trained with them (CoFi)"
        others = (
            "search again for another sparsity" if config.structured else "extract others with `run_extract_ticket.py`"
        )
        objective = f"penalty λ·R(m) with λ = {config.l0_lambda}{ramp} (Eq. 8)"
        if config.l0_constraint == "lagrangian":
            objective = (
                f"Lagrangian constraint λ_1·(ŝ − t) + λ_2·(ŝ − t)² on the expected sparsity ŝ (CoFi), the target t "
                f"rising to {config.sparsity} over {config.l0_target_warmup_fraction} of training"
            )
        return (
            f"hard-concrete L0 gates over {gated} (Robust Tickets Eq. 1-5, β = {config.l0_temperature:.3g}), "
            f"{objective}; the results are the search model's with the "
            f"deterministic gates (Eq. 5); the saved ticket keeps the {1 - config.sparsity:.0%} largest log α "
            f"({config.sparsity_scope}): retrain it with `--mask_from`, {others}"
        )


def _digest(tensors: Iterable[torch.Tensor]) -> str:
    """A digest of the tensors' values (blake2b of their bytes: 0.52 s for 99M float32 values on a 2-core AMD EPYC,
    more than BERT-base's 85M log α; ranking them takes ~10 s)."""
    digest = hashlib.blake2b(digest_size=16)
    for tensor in tensors:
        digest.update(tensor.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()
