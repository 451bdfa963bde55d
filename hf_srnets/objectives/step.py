"""`StepObjective`: a training-step-level objective (several forward/backward passes) around an inner objective."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import torch
from accelerate.utils import DistributedType
from torch import nn

from .base import Objective

if TYPE_CHECKING:
    from transformers import Trainer


class StepObjective(Objective):
    """Wraps an inner objective (e.g. a `LossObjective` with `poe`) and owns the whole training step.

    For methods that need more than one forward/backward pass per batch, such as adversarial training on the
    input embeddings (FreeLB, Zhu et al. 2020: K ascent steps on a perturbation δ, the gradients of the K losses
    L(x + δ_k) averaged, −∇_θ (1/K) Σ_k L(x + δ_k)). Evaluation (`compute_loss`) uses the inner objective
    unchanged, so validation losses stay comparable.

    `training_step` does what `Trainer.training_step` does around the loss (train mode, optimizer train mode,
    device placement, the compute-loss context) and calls `step`, which subclasses implement: compute losses
    with `trainer.compute_loss(model, batch)` (the trainer logs the inner objective's components for every pass)
    and backpropagate each with `backward`. Subclasses set `name` and are registered with
    `hf_srnets.objectives.register_objective`; `build_objective(loss, step=name, step_options={...})` builds them
    as `cls(inner, **step_options)`. Their `get_config_dict` and `citations` add to the inner objective's.

    A step objective with settings declares them as `options_class`, a dataclass whose fields have a `help` and
    whose `__post_init__` checks them (as a pruning method's `PruningConfig`): `run_glue_sparse.py` gives each
    field as a flag of `--step_objective <name>`, and `SRNetTrainingArguments.step_objective_options` holds the values.
    """

    options_class: ClassVar[type | None] = None
    # how a model card names what the objective does around the loss ("under <card_words>"); the name by default
    card_words: ClassVar[str] = ""

    def __init__(self, inner: Objective) -> None:
        self.inner = inner

    @property
    def requires(self) -> tuple[str, ...]:
        return self.inner.requires

    @property
    def citations(self) -> tuple[str, ...]:
        return self.inner.citations

    def compute_loss(
        self, model: nn.Module, inputs: dict[str, Any], *, training: bool
    ) -> tuple[torch.Tensor, Any, dict[str, torch.Tensor]]:
        return self.inner.compute_loss(model, inputs, training=training)

    def training_step(
        self, trainer: Trainer, model: nn.Module, inputs: dict[str, Any], num_items_in_batch: Any
    ) -> torch.Tensor:
        model.train()
        if hasattr(trainer.optimizer, "train") and callable(trainer.optimizer.train):
            trainer.optimizer.train()
        inputs = trainer._prepare_inputs(inputs)
        with trainer.compute_loss_context_manager():
            return self.step(trainer, model, inputs).detach()

    def check_model(self, model: nn.Module) -> None:
        self.inner.check_model(model)

    def step(self, trainer: Trainer, model: nn.Module, inputs: dict[str, Any]) -> torch.Tensor:
        """Run the forward/backward passes of one batch; return the sum of what `backward` returned."""
        raise NotImplementedError

    @staticmethod
    def backward(trainer: Trainer, loss: torch.Tensor) -> torch.Tensor:
        """Backpropagate `loss` scaled as `Trainer.training_step` scales it; return the scaled loss, detached.

        The scaling: the mean over `DataParallel` replicas, then 1/(gradient accumulation steps) unless the trainer's
        `loss_is_scaled_for_ga`; DeepSpeed gets `scale_wrt_gas=False`, as in the Trainer.
        """
        if trainer.args.n_gpu > 1:
            loss = loss.mean()
        if not trainer.loss_is_scaled_for_ga:
            loss = loss / trainer.current_gradient_accumulation_steps
        kwargs = {"scale_wrt_gas": False} if trainer.accelerator.distributed_type == DistributedType.DEEPSPEED else {}
        trainer.accelerator.backward(loss, **kwargs)
        return loss.detach()

    def get_config_dict(self) -> dict[str, Any]:
        return {**self.inner.get_config_dict(), "step_objective": self.name}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"
