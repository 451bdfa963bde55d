"""`DenseDistillation`: distillation from the dense model during a pruning search, around any debiasing loss.

    L = (1 − α)·L_debias + α·T²·KL(softmax(z_t / T) ‖ softmax(z_s / T)) + β·L_hidden

z_s are the (masked) student's logits, z_t the teacher's, T the temperature and α the weight of the soft term;
T² keeps the soft term's gradients on the scale of the hard one's as T changes (Hinton et al. 2015, §2).
L_hidden is intermediate-layer distillation, off by default (β = `distil_hidden_weight` = 0): the mean over the
L transformer layers of the mean squared error between the student's and the teacher's hidden states on the real
tokens (attention mask 1), (1/L)·Σ_l Σ_{t real} ‖h_s^l(t) − h_t^l(t)‖² / (d·#real tokens). Student and teacher have
the same width (masks remove units inside a layer, never the hidden size), so no projection is learned; TinyBERT
(Jiao et al. 2020, Eq. 8) and CoFi (Xia et al. 2022, §3.2) distil hidden states the same way, with a learned map
where the sizes differ. A shallower student (`--student_layers`, with `--teacher_model`) faces the teacher's layers
by TinyBERT's uniform mapping g(m) = ⌊m·L_t/L_s⌋ (`layer_map`); a student of another hidden size is refused.
L_debias is the inner objective (`--loss`: ce, poe, reweight, confreg, ...), so distillation composes with every
debiasing loss. Distilling from the dense model while pruning it is DistilBERT's teacher signal (Sanh et al.
2019) applied as in nn_pruning's structured (hybrid head/FFN) pruning (Lagunas et al. 2021), which pairs it with
a gradual (cubic) sparsity schedule.

The teacher is the dense starting model. With masks over frozen weights (mask training), the base weights *are*
that model: its logits come from the same module with the masks off (`hf_srnets.pruning.unmasked`), in eval mode
and without gradients, so no second copy is held. When the weights train (IMP, fixed masks, a trainable
classifier) they drift from the starting model, and a `teacher_model` directory must be given instead; it is
loaded once with `hf_srnets.load_pretrained_model` (compact checkpoints included). Evaluation reports the inner
objective alone, so validation losses stay comparable with runs without distillation.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from ..compact.loading import load_pretrained_model
from ..errors import InputError
from ..pruning import unmasked
from ..pruning.wrapped import model_weights
from .base import Objective
from .loss import split_batch
from .registry import register_objective
from .step import StepObjective

if TYPE_CHECKING:
    from transformers import Trainer


@dataclass
class DenseDistillationOptions:
    """The settings of `--step_objective dense_distil`, each a flag of `run_glue_sparse.py`."""

    distil_alpha: float = field(
        default=0.5,
        metadata={"help": "dense_distil: α, the weight of the distillation term: (1-α)·L_loss + α·T²·KL; in [0, 1]."},
    )
    distil_temperature: float = field(
        default=2.0, metadata={"help": "dense_distil: T, the softmax temperature of teacher and student; > 0."}
    )
    distil_hidden_weight: float = field(
        default=0.0,
        metadata={
            "help": "dense_distil: β, the weight of intermediate-layer distillation (the mean over layers of the "
            "hidden states' MSE on real tokens); 0 (default) distils the logits only; >= 0."
        },
    )
    teacher_model: str | None = field(
        default=None,
        metadata={
            "help": "dense_distil: a model dir whose logits teach; default: the masked model itself with its masks "
            "off (the dense starting model, while its weights stay frozen)."
        },
    )

    def __post_init__(self) -> None:
        if not 0.0 <= self.distil_alpha <= 1.0:
            raise ValueError(f"--distil_alpha must be in [0, 1], got {self.distil_alpha!r}: e.g. --distil_alpha 0.5")
        if not self.distil_temperature > 0:
            raise ValueError(f"--distil_temperature must be > 0, got {self.distil_temperature!r}: e.g. 2.0")
        if not self.distil_hidden_weight >= 0:
            raise ValueError(
                f"--distil_hidden_weight must be >= 0, got {self.distil_hidden_weight!r}: e.g. 1.0 (0: the logits only)"
            )


def soft_distillation(student: torch.Tensor, teacher: torch.Tensor, temperature: float) -> torch.Tensor:
    """T²·KL(softmax(z_t/T) ‖ softmax(z_s/T)) per example, in float32; the teacher gets no gradient."""
    log_student = F.log_softmax(student.float() / temperature, dim=-1)
    log_teacher = F.log_softmax(teacher.detach().float() / temperature, dim=-1)
    kl = (log_teacher.exp() * (log_teacher - log_student)).sum(-1)
    return temperature**2 * kl


def layer_map(student_layers: int, teacher_layers: int) -> list[int]:
    """The teacher layer g(m) each student layer m = 1..L_s is distilled towards (1-based, as in the
    `output_hidden_states` tuples): g(m) = ⌊m·L_t/L_s⌋, TinyBERT's uniform mapping (Jiao et al. 2020, §3.1, n = g(m));
    the identity for equal depths, and the student's last layer always faces the teacher's last. A student of
    `--student_layers 3` from 6 layers (its layers the teacher's 0, 2, 4) is distilled towards the teacher's outputs
    after layers 2, 4 and 6."""
    if not 1 <= student_layers <= teacher_layers:
        raise ValueError(
            f"--distil_hidden_weight maps each student layer to a teacher layer: the student has {student_layers} "
            f"layers, the teacher {teacher_layers}; use a teacher at least as deep, or --distil_hidden_weight 0"
        )
    return [m * teacher_layers // student_layers for m in range(1, student_layers + 1)]


def hidden_state_distillation(
    student: tuple[torch.Tensor, ...], teacher: tuple[torch.Tensor, ...], attention_mask: torch.Tensor | None
) -> torch.Tensor:
    """(1/L_s)·Σ_m MSE(h_s^m, h_t^{g(m)}) over the real tokens, in float32, from `output_hidden_states` tuples (the
    embeddings first, then one per layer; the embeddings are left out), g the uniform `layer_map` (the identity
    when the depths are equal). The teacher gets no gradient."""
    if student[-1].shape[-1] != teacher[-1].shape[-1]:
        raise ValueError(
            f"--distil_hidden_weight compares hidden states of one width: the student's are {student[-1].shape[-1]}, "
            f"the teacher's {teacher[-1].shape[-1]}; use a teacher of the student's hidden size, or "
            "--distil_hidden_weight 0"
        )
    mapped = [teacher[g] for g in layer_map(len(student) - 1, len(teacher) - 1)]
    real = None if attention_mask is None else attention_mask.unsqueeze(-1).float()
    per_layer = []
    for h_s, h_t in zip(student[1:], mapped):
        squared = (h_s.float() - h_t.detach().float()) ** 2
        if real is None:
            per_layer.append(squared.mean())
        else:
            per_layer.append((squared * real).sum() / (real.sum() * squared.shape[-1]))
    return torch.stack(per_layer).mean()


GENERIC_LABEL = re.compile(r"^LABEL_\d+$")  # transformers' names for labels a config does not name


def teacher_label_order(teacher: Any, student: Any, where: str) -> list[int] | None:
    """For `--teacher_model`: the teacher's logit index of each of the student's labels, matched by name (as the data
    and checkpoints are), or None when the order is the same. `InputError` before training when the two read other
    vocabularies, or their labels differ in number or in name (a teacher without label names, LABEL_k, is taken in
    index order if it has as many)."""
    if getattr(teacher, "vocab_size", None) != getattr(student, "vocab_size", None):
        raise InputError(
            f"--teacher_model {where} reads a vocabulary of {teacher.vocab_size} tokens and the student one of "
            f"{student.vocab_size}: distillation feeds both the same token ids; give a teacher of the student's "
            "tokenizer"
        )
    names = [teacher.id2label[i] for i in range(teacher.num_labels)]
    wanted = [student.id2label[i] for i in range(student.num_labels)]
    if len(names) != len(wanted):
        raise InputError(
            f"--teacher_model {where} has {len(names)} labels {names}, the run {len(wanted)} {wanted}: give a teacher "
            "fine-tuned on this task"
        )
    if all(GENERIC_LABEL.match(str(n)) for n in names) or names == wanted:
        return None
    if sorted(map(str, names)) != sorted(map(str, wanted)):
        raise InputError(
            f"--teacher_model {where} has the labels {names}, the run {wanted}: give a teacher fine-tuned on this task"
        )
    return [names.index(label) for label in wanted]


def _weights_train(model: nn.Module) -> bool:
    """Whether any parameter besides the masks' own trains (the base weights then leave the dense model)."""
    return any(param.requires_grad for param in model_weights(model))


@register_objective
class DenseDistillation(StepObjective):
    """Distillation from the dense model around `inner` (module docstring): α, T and an optional teacher dir.

    Example:
        >>> objective = build_objective("poe", step="dense_distil", step_options={"distil_alpha": 0.5})
    """

    name = "dense_distil"
    options_class = DenseDistillationOptions
    card_words = "**distillation from the dense model** (dense_distil)"
    step_citations: ClassVar[tuple[str, ...]] = ("hinton", "sanh2019distilbert", "lagunas2021block")

    def __init__(self, inner: Objective, **options: Any) -> None:
        super().__init__(inner)
        self.settings = DenseDistillationOptions(**options)
        self._teacher: nn.Module | None = None
        self._teacher_order: list[int] | None = None  # teacher logit index of each student label, when they differ

    @property
    def citations(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*self.inner.citations, *self.step_citations]))

    def training_step(
        self, trainer: Trainer, model: nn.Module, inputs: dict[str, Any], num_items_in_batch: Any
    ) -> torch.Tensor | None:
        return None  # one forward and backward: the Trainer's own step, through `compute_loss`

    def compute_loss(
        self, model: nn.Module, inputs: dict[str, Any], *, training: bool
    ) -> tuple[torch.Tensor, Any, dict[str, torch.Tensor]]:
        alpha, beta = self.settings.distil_alpha, self.settings.distil_hidden_weight
        hidden = training and beta > 0
        if hidden:
            inputs = {**inputs, "output_hidden_states": True}
        loss, outputs, components = self.inner.compute_loss(model, inputs, training=training)
        if not training or (alpha == 0.0 and beta == 0.0):
            return loss, outputs, components
        student = outputs["logits"] if isinstance(outputs, dict) else outputs[0]
        model_inputs = split_batch(inputs, self.inner.requires)[0]
        teacher_outputs = self.teacher_outputs(model, model_inputs)
        teacher = teacher_outputs["logits"] if isinstance(teacher_outputs, dict) else teacher_outputs[0]
        if teacher.shape != student.shape:
            raise ValueError(
                f"--teacher_model gives logits of shape {tuple(teacher.shape)} for a student with "
                f"{tuple(student.shape)}: use a teacher fine-tuned on the same task and labels."
            )
        soft = soft_distillation(student, teacher, self.settings.distil_temperature).mean()
        total = (1.0 - alpha) * loss + alpha * soft
        logged = {"dense_kl": soft.detach()}
        if hidden:
            matched = hidden_state_distillation(
                outputs["hidden_states"], teacher_outputs["hidden_states"], model_inputs.get("attention_mask")
            )
            total = total + beta * matched
            logged["dense_hidden_mse"] = matched.detach()
        return total, outputs, {**components, **logged, "dense_distil": total.detach()}

    @torch.no_grad()
    def teacher_outputs(self, model: nn.Module, inputs: dict[str, Any]) -> Any:
        """The `teacher_model`'s outputs, else `model`'s with its masks off, both in eval mode (with hidden states
        when `inputs` asks for them)."""
        teacher = self._teacher_model(model)
        if teacher is not None:
            outputs = teacher(**inputs)
            if self._teacher_order is not None:  # the teacher's labels in the student's order (by name)
                outputs["logits"] = outputs["logits"][..., self._teacher_order]
            return outputs
        self.check_model(model)
        was_training = model.training
        model.eval()
        try:
            with unmasked(model):
                return model(**inputs)
        finally:
            model.train(was_training)

    def check_model(self, model: nn.Module) -> None:
        """Without `teacher_model`, refuse a run whose weights train: its masks-off model is no longer the dense one.
        A classifier head new to the checkpoint (`newly initialized`) trains, so it needs `teacher_model` too."""
        super().check_model(model)
        if self.settings.teacher_model is not None:
            self._teacher_model(model)  # loaded and checked against the student before the first step
        if self.settings.teacher_model is None and _weights_train(model):
            raise InputError(
                "--step_objective dense_distil takes the dense model from the frozen base weights, but this run trains "
                "weights (IMP, fixed masks, --train_weights, or a classifier head the checkpoint lacks): pass "
                "--teacher_model DIR (a dense model fine-tuned on this task), or start from such a model."
            )

    def _teacher_model(self, model: nn.Module) -> nn.Module | None:
        """The `teacher_model` loaded once (eval mode, frozen, on the student's device), or None."""
        if self.settings.teacher_model is None:
            return None
        if self._teacher is None:
            device = next(model.parameters()).device
            teacher = load_pretrained_model(self.settings.teacher_model).to(device).eval().requires_grad_(False)
            self._teacher_order = teacher_label_order(teacher.config, model.config, self.settings.teacher_model)
            self._teacher = teacher
        return self._teacher

    def get_config_dict(self) -> dict[str, Any]:
        return {**super().get_config_dict(), **asdict(self.settings)}

    def __repr__(self) -> str:
        options = ", ".join(f"{k}={v!r}" for k, v in asdict(self.settings).items())
        return f"DenseDistillation({self.inner!r}, {options})"
