"""`FreeLB`: adversarial training on the input word embeddings (Zhu et al. 2020), around any inner objective.

Robust Tickets §3.2.1 (Zheng et al. 2022) search the masks under the FreeLB objective

    min_θ  E_(x,y) [ (1/K) Σ_{k=1..K} L(f(e(x) + δ_{k-1}; θ), y) ]                     (Eq. 6)

with the perturbation of the word embeddings e(x) updated by K−1 normalised gradient-ascent steps

    g_k = ∇_δ L(f(e(x) + δ_{k-1}; θ), y),   δ_k = Π_{||δ|| ≤ ε}( δ_{k-1} + η g_k / ||g_k|| )   (Eq. 7)

(the norm per example; Π the projection on the ball of radius ε = `adv_max_norm`, none when ε = 0, the paper's
setting). δ_0 = 0 when ε₀ = `adv_init_mag` is 0; otherwise, for the l2 norm, U(−1, 1) on the real tokens scaled
by ε₀/√(L·d) (L real tokens, d the embedding size), for linf U(−ε₀, ε₀) on the real tokens. The parameter
gradients of the K passes accumulate ("free" adversarial training): one optimiser step follows with the gradient
of Eq. 6. L is the inner objective (`--loss`: ce, poe, reweight or confreg) and, with a pruning method that has one,
its penalty (l0: λ·R(m), Eq. 8) enters every pass with weight 1/K, so exactly once.
"""

from __future__ import annotations

import contextlib
import inspect
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import torch
from torch import nn

from .base import Objective
from .registry import register_objective
from .step import StepObjective

if TYPE_CHECKING:
    from transformers import Trainer

NORM_TYPES = ("l2", "linf")


def check_adversarial_options(
    adv_steps: int, adv_lr: float, adv_init_mag: float, adv_max_norm: float, adv_norm_type: str
) -> None:
    """Raise a `ValueError` naming the flag for FreeLB settings outside their domain."""
    if not isinstance(adv_steps, int) or adv_steps < 1:
        raise ValueError(f"--adv_steps (FreeLB ascent steps K) must be an integer >= 1, got {adv_steps!r}; e.g. 2")
    for flag, value in (("adv_lr", adv_lr), ("adv_init_mag", adv_init_mag), ("adv_max_norm", adv_max_norm)):
        if not value >= 0:  # also refuses NaN
            raise ValueError(f"--{flag} must be >= 0, got {value!r}")
    if adv_norm_type not in NORM_TYPES:
        raise ValueError(f"--adv_norm_type must be one of {list(NORM_TYPES)}, got {adv_norm_type!r}")


@dataclass
class FreeLBOptions:
    """FreeLB's settings (Robust Tickets §3.2.1, Table 6), each a flag of `run_glue_sparse.py --step_objective
    freelb`."""

    adv_steps: int = field(
        default=2,
        metadata={"help": "FreeLB passes K per batch (K-1 ascent steps on the perturbation; Table 6: 2-5); >= 1."},
    )
    adv_lr: float = field(
        default=0.03,
        metadata={"help": "FreeLB ascent step size η of the normalised gradient step (Eq. 7; Table 6: 0.03-0.2)."},
    )
    adv_init_mag: float = field(
        default=0.05,
        metadata={"help": "FreeLB initial perturbation magnitude ε₀ (Table 6: 0.05); 0 starts at δ = 0."},
    )
    adv_max_norm: float = field(
        default=0.0,
        metadata={"help": "FreeLB bound on the perturbation's norm per example; 0 = unbounded, as in the paper."},
    )
    adv_norm_type: str = field(
        default="l2",
        metadata={
            "help": f"FreeLB norm of the ascent step, the initial perturbation and the bound: {list(NORM_TYPES)}."
        },
    )

    def __post_init__(self) -> None:
        check_adversarial_options(self.adv_steps, self.adv_lr, self.adv_init_mag, self.adv_max_norm, self.adv_norm_type)


def _per_example_norm(x: torch.Tensor, norm_type: str) -> torch.Tensor:
    """||x_i|| of each example (l2 or linf over all its tokens and dimensions), shaped (batch, 1, 1)."""
    flat = x.reshape(x.size(0), -1).float()
    norms = flat.norm(p=2, dim=1) if norm_type == "l2" else flat.abs().amax(dim=1)
    return norms.view(-1, 1, 1)


def initial_delta(embeds: torch.Tensor, mask: torch.Tensor, init_mag: float, norm_type: str) -> torch.Tensor:
    """δ_0: zeros if ε₀ = 0; l2: U(−1, 1)·ε₀/√(L·d) on the real tokens; linf: U(−ε₀, ε₀) on the real tokens."""
    if init_mag == 0:
        return torch.zeros_like(embeds)
    mask = mask.to(embeds.dtype).unsqueeze(-1)
    if norm_type == "l2":
        dims = mask.sum(dim=(1, 2)) * embeds.size(-1)
        scale = init_mag / dims.clamp(min=1).sqrt()
        return torch.empty_like(embeds).uniform_(-1, 1) * mask * scale.view(-1, 1, 1)
    return torch.empty_like(embeds).uniform_(-init_mag, init_mag) * mask


def ascent_step(
    delta: torch.Tensor, grad: torch.Tensor, mask: torch.Tensor, lr: float, max_norm: float, norm_type: str
) -> torch.Tensor:
    """Eq. 7: δ + η·g/||g|| (per example, on the real tokens), projected to ||δ|| ≤ `max_norm` when it is > 0
    (l2: rescaled onto the sphere; linf: clipped elementwise). Returns a new detached leaf."""
    grad = grad * mask.to(grad.dtype).unsqueeze(-1)
    step = grad / _per_example_norm(grad, norm_type).clamp(min=1e-8).to(grad.dtype)
    delta = delta.detach() + lr * step
    if max_norm > 0:
        if norm_type == "l2":
            norms = _per_example_norm(delta, "l2")
            delta = delta * torch.where(norms > max_norm, max_norm / norms, torch.ones_like(norms)).to(delta.dtype)
        else:
            delta = delta.clamp(-max_norm, max_norm)
    return delta.detach()


def _embedding_model(trainer: Trainer, model: nn.Module) -> nn.Module:
    """The transformers model under DDP/compile wrappers and an `SRNetModel` (its `get_base_model()`)."""
    unwrapped = trainer.accelerator.unwrap_model(model) if hasattr(trainer, "accelerator") else model
    return unwrapped.get_base_model() if hasattr(unwrapped, "get_base_model") else unwrapped


def word_embeddings(trainer: Trainer, model: nn.Module) -> nn.Module:
    """The model's word-embedding layer; a `ValueError` if it has none or its forward takes no `inputs_embeds`."""
    base = _embedding_model(trainer, model)
    kind = type(base).__name__
    layer = base.get_input_embeddings() if hasattr(base, "get_input_embeddings") else None
    if layer is None:
        raise ValueError(
            f"--step_objective freelb perturbs the word embeddings, but {kind} has no get_input_embeddings()"
        )
    if "inputs_embeds" not in inspect.signature(base.forward).parameters:
        raise ValueError(
            f"--step_objective freelb needs a model whose forward takes `inputs_embeds`; {kind}.forward does not. "
            "Use a transformers encoder (BERT, RoBERTa, ELECTRA, DeBERTa, DistilBERT, ...) or --step_objective none."
        )
    return layer


@register_objective
class FreeLB(StepObjective):
    """FreeLB (Zhu et al. 2020) as in Robust Tickets Eq. 6–7 (see the module docstring), around `inner`.

    Args:
        inner: the objective L of each pass (a `LossObjective` of `--loss`), called through
            `trainer.compute_loss`, so its components and a pruning method's penalty are logged and added.
        **options: the fields of `FreeLBOptions` (its defaults for those not given):
            adv_steps: K, the number of passes (K−1 ascent steps on δ). K = 1 with ε₀ = 0 is a plain step.
            adv_lr: η, the step size of the normalised ascent step.
            adv_init_mag: ε₀, the magnitude of the random δ_0 (0: δ_0 = 0).
            adv_max_norm: ε, the bound on ||δ|| per example; 0 leaves δ unbounded (the paper).
            adv_norm_type: `l2` or `linf`, the norm of the ascent step, of δ_0 and of the bound.

    Under several processes the first K−1 backward passes run in `accelerator.no_sync` (gradients all-reduced
    once, after the last pass). Evaluation uses the inner objective unchanged.

    Example:
        >>> objective = build_objective("poe", step="freelb", step_options={"adv_steps": 3, "adv_lr": 0.1})
    """

    name = "freelb"
    options_class = FreeLBOptions
    card_words = "**freelb** adversarial training"
    step_citations: ClassVar[tuple[str, ...]] = ("zhu2020freelb",)  # added to the inner objective's

    def __init__(self, inner: Objective, **options: Any) -> None:
        super().__init__(inner)
        settings = FreeLBOptions(**options)
        self.adv_steps, self.adv_lr, self.adv_init_mag = settings.adv_steps, settings.adv_lr, settings.adv_init_mag
        self.adv_max_norm, self.adv_norm_type = settings.adv_max_norm, settings.adv_norm_type

    @property
    def citations(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*self.inner.citations, *self.step_citations]))

    def step(self, trainer: Trainer, model: nn.Module, inputs: dict[str, Any]) -> torch.Tensor:
        if inputs.get("input_ids") is None:
            raise ValueError(
                "--step_objective freelb needs `input_ids` in the training batch: it perturbs their embeddings"
            )
        embedding = word_embeddings(trainer, model)
        input_ids = inputs["input_ids"]
        rest = {key: value for key, value in inputs.items() if key != "input_ids"}
        mask = inputs.get("attention_mask")
        mask = torch.ones_like(input_ids) if mask is None else mask
        embeds = embedding(input_ids)
        delta = initial_delta(embeds.detach(), mask, self.adv_init_mag, self.adv_norm_type)
        total = torch.zeros((), device=embeds.device)
        for k in range(self.adv_steps):
            last = k == self.adv_steps - 1
            delta.requires_grad_(not last)
            sync = contextlib.nullcontext() if last else trainer.accelerator.no_sync(model)
            with sync:
                loss = trainer.compute_loss(model, {**rest, "inputs_embeds": embeds + delta})
                total = total + self.backward(trainer, loss / self.adv_steps)
            if last:
                break
            delta = ascent_step(delta, delta.grad, mask, self.adv_lr, self.adv_max_norm, self.adv_norm_type)
            embeds = embedding(input_ids)  # a new graph: the embedding weights get the gradient of every pass
        return total

    def options(self) -> FreeLBOptions:
        return FreeLBOptions(self.adv_steps, self.adv_lr, self.adv_init_mag, self.adv_max_norm, self.adv_norm_type)

    def get_config_dict(self) -> dict[str, Any]:
        return {**super().get_config_dict(), **asdict(self.options())}

    def __repr__(self) -> str:
        return (
            f"FreeLB({self.inner!r}, adv_steps={self.adv_steps}, adv_lr={self.adv_lr}, "
            f"adv_init_mag={self.adv_init_mag}, adv_max_norm={self.adv_max_norm}, adv_norm_type={self.adv_norm_type!r})"
        )
