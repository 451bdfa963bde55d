"""FreeLB (Zhu et al. 2020; Robust Tickets Eq. 6-7): a plain step for K=1, ε₀=0; the ascent, the accumulated
gradient and the projections checked against a computation by hand; the penalty of a pruning method added once."""

from __future__ import annotations

import contextlib
import math

import pytest
import torch
import torch.nn.functional as F
from conftest import tiny_model
from torch import nn
from training.helpers import cpu_args, synthetic_nli, tiny_tokenizer
from transformers import Trainer

from hf_srnets.masking import SRNetModel
from hf_srnets.objectives import OBJECTIVES, FreeLB, LossObjective, build_objective
from hf_srnets.objectives.freelb import ascent_step, initial_delta
from hf_srnets.pruning import ThresholdConfig, ThresholdPruning, register_pruning_method, unregister_pruning_method
from hf_srnets.training.arguments import SRNetTrainingArguments
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer


def _no_dropout(model: nn.Module) -> nn.Module:
    for module in model.modules():
        if isinstance(module, nn.Dropout):
            module.p = 0.0
    return model


def _trainer(tmp_path, model=None, objective=None, with_bias=True, **kwargs) -> SRNetTrainer:
    tmp_path.mkdir(parents=True, exist_ok=True)
    tokenizer = tiny_tokenizer(tmp_path)
    data = synthetic_nli(tokenizer, n=32, with_bias=with_bias)
    trainer = SRNetTrainer(
        model=_no_dropout(tiny_model("bert")) if model is None else model,
        args=cpu_args(tmp_path / "out", **kwargs),
        objective=objective,
        train_dataset=data,
        data_collator=SRNetDataCollator(tokenizer),
    )
    trainer.current_gradient_accumulation_steps = 1  # set by the training loop
    return trainer


def _batch(trainer: Trainer) -> dict[str, torch.Tensor]:
    return next(iter(trainer.get_train_dataloader()))


class Recorder:
    """Wraps `trainer.compute_loss`: keeps the `inputs_embeds` of every pass and the loss it returned."""

    def __init__(self, trainer: SRNetTrainer) -> None:
        self.embeds: list[torch.Tensor] = []
        self.losses: list[torch.Tensor] = []
        self.compute_loss = trainer.compute_loss
        trainer.compute_loss = self

    def __call__(self, model, inputs, *args, **kwargs):
        self.embeds.append(inputs["inputs_embeds"].detach().clone())
        assert "input_ids" not in inputs
        loss = self.compute_loss(model, inputs, *args, **kwargs)
        self.losses.append(loss.detach())
        return loss


# -- K = 1, ε₀ = 0 is a plain training step -------------------------------------------------------------------
def _plain_and_freelb(tmp_path) -> tuple[Trainer, SRNetTrainer]:
    tokenizer = tiny_tokenizer(tmp_path)
    data = synthetic_nli(tokenizer, n=32, with_bias=False)
    common = dict(max_steps=1, learning_rate=1e-2)
    plain = Trainer(
        model=tiny_model("bert").train(),
        args=cpu_args(tmp_path / "plain", **common),
        train_dataset=data,
        data_collator=SRNetDataCollator(tokenizer),
    )
    free = SRNetTrainer(
        model=tiny_model("bert").train(),
        args=cpu_args(tmp_path / "free", **common),
        objective=build_objective("ce", step="freelb", step_options={"adv_steps": 1, "adv_init_mag": 0.0}),
        train_dataset=data,
        data_collator=SRNetDataCollator(tokenizer),
    )
    return plain, free


def test_one_pass_without_initial_perturbation_is_a_plain_trainer_step(tmp_path):
    """Same loss, gradients and updated parameters as `transformers.Trainer` (the model's own cross-entropy),
    dropout on (the two runs draw the same dropout masks: FreeLB with ε₀ = 0 draws nothing else)."""
    plain, free = _plain_and_freelb(tmp_path)
    batch = _batch(plain)
    for trainer in (plain, free):
        trainer.current_gradient_accumulation_steps = 1  # set by the training loop
        torch.manual_seed(3)
        trainer.reported = trainer.training_step(trainer.model, batch)
    assert torch.equal(free.reported, plain.reported)
    for (key, a), (_, b) in zip(plain.model.named_parameters(), free.model.named_parameters()):
        assert torch.allclose(a.grad, b.grad, rtol=1e-6, atol=1e-9), key

    plain, free = _plain_and_freelb(tmp_path)  # a whole run of one optimiser step
    for trainer in (plain, free):
        torch.manual_seed(4)  # the Trainer seeds when it is built, not when it trains
        trainer.train()
    assert free.state.log_history[-1]["train_loss"] == plain.state.log_history[-1]["train_loss"]
    updated = dict(plain.model.named_parameters())
    moved = 0
    for key, value in free.model.named_parameters():
        assert torch.allclose(value, updated[key], rtol=1e-6, atol=1e-8), key
        moved += not torch.equal(value, tiny_model("bert").get_parameter(key))
    assert moved > 10


# -- K = 2 by hand ----------------------------------------------------------------------------------------
def _by_hand(model: nn.Module, batch: dict, delta0: torch.Tensor, lr: float, steps: int, norm: str = "l2"):
    """The FreeLB step written out: pass k on e + δ_{k-1}, δ_k = δ_{k-1} + η g/||g|| (Eq. 7), parameter gradients
    the mean over the passes (Eq. 6). Returns (mean loss, the δ of each pass, {name: expected gradient})."""
    model = _no_dropout(model).train()
    params = [p for p in model.parameters() if p.requires_grad]
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    mask = batch["attention_mask"].unsqueeze(-1).float()
    inputs = {k: batch[k] for k in ("attention_mask", "token_type_ids")}
    delta, deltas, losses, grads = delta0.clone(), [], [], [torch.zeros_like(p) for p in params]
    for _ in range(steps):
        delta.requires_grad_(True)
        embeds = model.get_input_embeddings()(batch["input_ids"])
        loss = F.cross_entropy(model(inputs_embeds=embeds + delta, **inputs).logits, batch["labels"])
        *param_grads, g = torch.autograd.grad(loss, [*params, delta], allow_unused=True)
        grads = [acc + (pg if pg is not None else 0) / steps for acc, pg in zip(grads, param_grads)]
        deltas.append(delta.detach().clone())
        losses.append(loss.detach())
        flat = (g * mask).reshape(g.size(0), -1)
        size = flat.norm(dim=1) if norm == "l2" else flat.abs().amax(dim=1)
        delta = (delta + lr * (g * mask) / size.view(-1, 1, 1)).detach()
    return torch.stack(losses).mean(), deltas, dict(zip(names, grads))


@pytest.mark.parametrize("norm", ["l2", "linf"])
def test_two_passes_follow_eq_7_and_average_the_gradients(tmp_path, norm):
    options = {"adv_steps": 2, "adv_lr": 0.3, "adv_init_mag": 0.5, "adv_norm_type": norm}
    trainer = _trainer(tmp_path, objective=build_objective("ce", step="freelb", step_options=options))
    recorder = Recorder(trainer)
    batch = _batch(trainer)
    reference = _no_dropout(tiny_model("bert"))
    embeds = reference.get_input_embeddings()(batch["input_ids"]).detach()
    mask = batch["attention_mask"].unsqueeze(-1).float()
    torch.manual_seed(5)
    reported = trainer.training_step(trainer.model, batch)
    torch.manual_seed(5)  # δ_0 drawn as the module docstring states
    if norm == "l2":
        lengths = batch["attention_mask"].sum(1).float()
        scale = (0.5 / torch.sqrt(lengths * embeds.size(-1))).view(-1, 1, 1)
        delta0 = torch.empty_like(embeds).uniform_(-1, 1) * mask * scale
    else:
        delta0 = torch.empty_like(embeds).uniform_(-0.5, 0.5) * mask
    loss, deltas, grads = _by_hand(reference, batch, delta0, lr=0.3, steps=2, norm=norm)

    assert len(recorder.embeds) == 2
    for k in range(2):
        assert torch.allclose(recorder.embeds[k] - embeds, deltas[k], atol=1e-6), k
    assert torch.equal(deltas[1] * (1 - mask), torch.zeros_like(embeds))  # δ lives on the real tokens only
    step = deltas[1] - deltas[0]
    sizes = step.reshape(step.size(0), -1).norm(dim=1) if norm == "l2" else step.abs().amax(dim=(1, 2))
    assert torch.allclose(sizes, torch.full_like(sizes, 0.3), rtol=1e-4)  # ||δ_1 − δ_0|| = η per example
    assert torch.allclose(reported, loss, rtol=1e-5)
    assert not torch.allclose(recorder.losses[0], recorder.losses[1])  # the ascent changed the loss...
    assert recorder.losses[1] > recorder.losses[0]  # ...upwards
    for name, param in trainer.model.named_parameters():
        assert torch.allclose(param.grad, grads[name], rtol=1e-4, atol=1e-7), name


def test_gradient_accumulation_scales_every_pass(tmp_path):
    objective = build_objective("ce", step="freelb", step_options={"adv_steps": 3, "adv_init_mag": 0.0})
    one, two = (_trainer(tmp_path, objective=objective) for _ in range(2))
    two.current_gradient_accumulation_steps = 2
    batch = _batch(one)
    losses = [trainer.training_step(trainer.model, batch) for trainer in (one, two)]
    assert torch.allclose(losses[1], losses[0] / 2)
    for (key, a), (_, b) in zip(one.model.named_parameters(), two.model.named_parameters()):
        assert torch.allclose(b.grad, a.grad / 2, rtol=1e-5, atol=1e-9), key


# -- the ascent step and δ_0 ------------------------------------------------------------------------------------
def test_max_norm_projection_l2_and_linf():
    gen = torch.Generator().manual_seed(0)
    delta = torch.randn(4, 6, 8, generator=gen) * torch.tensor([0.01, 0.01, 1.0, 3.0]).view(-1, 1, 1)
    grad = torch.randn(4, 6, 8, generator=gen)
    mask = torch.ones(4, 6, dtype=torch.long)
    mask[1, 4:] = 0
    free = ascent_step(delta, grad, mask, lr=0.05, max_norm=0.0, norm_type="l2")
    bounded = ascent_step(delta, grad, mask, lr=0.05, max_norm=1.0, norm_type="l2")
    norms = free.reshape(4, -1).norm(dim=1)
    assert norms[0] < 1 and norms[3] > 1
    assert torch.allclose(bounded[:2], free[:2])  # inside the ball: unchanged
    assert torch.allclose(bounded.reshape(4, -1).norm(dim=1)[2:], torch.ones(2), atol=1e-6)  # projected on it
    assert torch.allclose(bounded[3] / bounded[3].norm(), free[3] / free[3].norm(), atol=1e-6)  # same direction
    assert torch.equal(free[1, 4:], delta[1, 4:])  # no step on padding
    linf = ascent_step(delta, grad, mask, lr=0.05, max_norm=0.5, norm_type="linf")
    unclipped = delta + 0.05 * grad / grad.abs().amax(dim=(1, 2), keepdim=True) * mask.unsqueeze(-1)
    unclipped[1] = delta[1] + 0.05 * (grad[1] * mask[1].unsqueeze(-1)) / grad[1, :4].abs().amax()
    assert torch.allclose(linf, unclipped.clamp(-0.5, 0.5), atol=1e-6)
    assert linf.abs().amax() <= 0.5 and not linf.requires_grad


def test_initial_delta_magnitude_and_padding():
    embeds = torch.zeros(3, 10, 16)
    mask = torch.ones(3, 10, dtype=torch.long)
    mask[0, 3:] = 0
    assert torch.equal(initial_delta(embeds, mask, 0.0, "l2"), embeds)
    torch.manual_seed(0)
    l2 = initial_delta(embeds, mask, 0.05, "l2")
    assert torch.equal(l2[0, 3:], torch.zeros(7, 16))
    bound = 0.05 / math.sqrt(3 * 16)  # |δ| ≤ ε₀/√(L·d) elementwise, so ||δ||₂ ≤ ε₀
    assert l2[0].abs().max() <= bound and l2[0].abs().max() > bound / 2
    assert (l2.reshape(3, -1).norm(dim=1) <= 0.05).all()
    linf = initial_delta(embeds, mask, 0.05, "linf")
    assert linf.abs().max() <= 0.05 and torch.equal(linf[0, 3:], torch.zeros(7, 16))


def test_linf_training_respects_the_bound(tmp_path):
    options = {"adv_steps": 4, "adv_lr": 0.2, "adv_init_mag": 0.05, "adv_max_norm": 0.1, "adv_norm_type": "linf"}
    trainer = _trainer(tmp_path, objective=build_objective("ce", step="freelb", step_options=options))
    recorder = Recorder(trainer)
    batch = _batch(trainer)
    trainer.training_step(trainer.model, batch)
    embeds = trainer.model.get_input_embeddings()(batch["input_ids"]).detach()
    deltas = [e - embeds for e in recorder.embeds]
    assert len(deltas) == 4 and all(d.abs().max() <= 0.1 + 1e-6 for d in deltas)
    assert deltas[-1].abs().max() == pytest.approx(0.1, abs=1e-6)  # 3 steps of 0.2 reach the bound


# -- the pruning penalty enters once; DDP; errors --------------------------------------------------------------
class PenalizedThreshold(ThresholdPruning):
    """Mask training with a known penalty: c·Σ m̂ (its gradient on every score is c)."""

    name = "test-penalized-threshold"
    config_class = type("PenalizedConfig", (ThresholdConfig,), {})
    weight = 0.25

    def regularization(self, srnet, step, max_steps):
        return self.weight * sum(p.sum() for p in srnet.score_parameters())


@pytest.fixture
def penalized():
    register_pruning_method(PenalizedThreshold)
    yield PenalizedThreshold
    unregister_pruning_method(PenalizedThreshold.name)


@pytest.mark.parametrize("steps", [1, 3])
def test_penalty_of_the_pruning_method_is_added_once(tmp_path, penalized, steps):
    options = {"adv_steps": steps, "adv_init_mag": 0.0, "adv_lr": 0.1}
    grads, losses = {}, {}
    for method in ("threshold", penalized.name):
        config = (ThresholdConfig if method == "threshold" else penalized.config_class)(sparsity=0.5)
        srnet = SRNetModel(_no_dropout(tiny_model("bert")), config)
        trainer = _trainer(tmp_path, srnet, build_objective("ce", step="freelb", step_options=options))
        losses[method] = trainer.training_step(srnet, _batch(trainer))
        grads[method] = [p.grad.clone() for p in srnet.score_parameters()]
        penalty = penalized.weight * sum(p.sum() for p in srnet.score_parameters()).detach()
        if method != "threshold":
            assert trainer._loss_metrics["loss_penalty"] and len(trainer._loss_metrics["loss_penalty"]) == steps
    assert torch.allclose(losses[penalized.name] - losses["threshold"], penalty, rtol=1e-5)
    for plain, with_penalty in zip(grads["threshold"], grads[penalized.name]):
        assert torch.allclose(with_penalty - plain, torch.full_like(plain, penalized.weight), atol=1e-6)


def test_first_passes_do_not_synchronise_gradients(tmp_path, monkeypatch):
    trainer = _trainer(tmp_path, objective=build_objective("ce", step="freelb", step_options={"adv_steps": 3}))
    events = []

    @contextlib.contextmanager
    def no_sync(model):
        events.append("enter")
        yield
        events.append("exit")

    backward = trainer.accelerator.backward
    monkeypatch.setattr(trainer.accelerator, "no_sync", no_sync)
    monkeypatch.setattr(trainer.accelerator, "backward", lambda loss, **kw: (events.append("backward"), backward(loss)))
    trainer.training_step(trainer.model, _batch(trainer))
    assert events == ["enter", "backward", "exit", "enter", "backward", "exit", "backward"]


def test_errors_name_the_problem(tmp_path):
    inner = LossObjective.__new__(LossObjective)
    for bad, match in [
        ({"adv_steps": 0}, "--adv_steps"),
        ({"adv_lr": -0.1}, "--adv_lr"),
        ({"adv_init_mag": float("nan")}, "--adv_init_mag"),
        ({"adv_max_norm": -1.0}, "--adv_max_norm"),
        ({"adv_norm_type": "l1"}, r"--adv_norm_type must be one of \['l2', 'linf'\]"),
    ]:
        with pytest.raises(ValueError, match=match):
            FreeLB(inner, **bad)
        with pytest.raises(ValueError, match=match):
            SRNetTrainingArguments(output_dir=str(tmp_path), step_objective="freelb", step_objective_options=bad)
    with pytest.raises(ValueError, match=r"--step_objective 'pgd' is unknown; choose none or one of \[.*'freelb'"):
        SRNetTrainingArguments(output_dir=str(tmp_path), step_objective="pgd")
    with pytest.raises(ValueError, match=r"--step_objective freelb has no option adv_step; its options: \['adv_steps'"):
        SRNetTrainingArguments(
            output_dir=str(tmp_path), step_objective="freelb", step_objective_options={"adv_step": 3}
        )
    with pytest.raises(ValueError, match="set --step_objective too"):
        SRNetTrainingArguments(output_dir=str(tmp_path), step_objective_options={"adv_steps": 3})
    args = SRNetTrainingArguments(
        output_dir=str(tmp_path),
        step_objective="freelb",
        step_objective_options='{"adv_steps": 3, "adv_norm_type": "linf"}',
    )
    assert args.step_objective_settings() == (
        "freelb",
        {"adv_steps": 3, "adv_lr": 0.03, "adv_init_mag": 0.05, "adv_max_norm": 0.0, "adv_norm_type": "linf"},
    )
    assert "freelb" in OBJECTIVES and OBJECTIVES["freelb"] is FreeLB


class NoEmbedsClassifier(nn.Module):
    """A model whose forward takes token ids only."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(100, 8)
        self.head = nn.Linear(8, 3)

    def get_input_embeddings(self) -> nn.Module:
        return self.embed

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, labels=None):
        return {"logits": self.head(self.embed(input_ids).mean(1))}


def test_a_model_without_inputs_embeds_is_refused(tmp_path):
    objective = build_objective("ce", step="freelb")
    trainer = _trainer(tmp_path, NoEmbedsClassifier(), objective, with_bias=False)
    with pytest.raises(ValueError, match=r"forward takes `inputs_embeds`; NoEmbedsClassifier\.forward does not"):
        trainer.training_step(trainer.model, _batch(trainer))


def test_card_settings_and_citations():
    objective = build_objective("poe", step="freelb", step_options={"adv_steps": 3, "adv_lr": 0.1, "adv_max_norm": 1.0})
    assert objective.get_config_dict() == {
        "loss": "poe",
        "requires": ["bias_probs"],
        "step_objective": "freelb",
        "adv_steps": 3,
        "adv_lr": 0.1,
        "adv_init_mag": 0.05,
        "adv_max_norm": 1.0,
        "adv_norm_type": "l2",
    }
    assert objective.citations == ("winwin", "clark", "zhu2020freelb") and objective.requires == ("bias_probs",)
    assert "FreeLB(LossObjective('poe'), adv_steps=3" in repr(objective)


def test_gradient_accumulation_through_the_training_loop(tmp_path):
    """With gradient accumulation (2 micro-batches per update, the first under the loop's no_sync), FreeLB with
    K = 1 and ε₀ = 0 trains exactly as the plain step; with K = 2 it trains differently.

    Why equality holds on every machine: `cpu_args` runs on the CPU also where a GPU is present, and both paths do
    the same float operations in the same order (embeddings looked up once, δ = 0 added, the loss scaled by 1/K = 1
    and by 1/2 for the accumulation, both exact in float32): bitwise equal on this AVX2 CPU with 1 or 2 threads;
    rtol 1e-5 is room for CPU kernels that split sums by thread count. Under transformers 5.17 (issue 34's H200 run)
    it failed because the plain step summed the two micro-batches' gradients (see `SRNetTrainer.__init__`)."""
    runs = {}
    for name, options in (
        ("plain", None),
        ("k1", {"adv_steps": 1, "adv_init_mag": 0.0}),
        ("k2", {"adv_steps": 2, "adv_init_mag": 0.0, "adv_lr": 0.5}),
    ):
        objective = None if options is None else build_objective("ce", step="freelb", step_options=options)
        trainer = _trainer(tmp_path / name, objective=objective, max_steps=2, gradient_accumulation_steps=2)
        torch.manual_seed(0)
        trainer.train()
        runs[name] = dict(trainer.model.named_parameters())
    for key, value in runs["plain"].items():
        assert torch.allclose(runs["k1"][key], value, rtol=1e-5, atol=1e-7), key
    assert any(not torch.allclose(runs["k2"][key], value, rtol=1e-5, atol=1e-7) for key, value in runs["plain"].items())
