"""A step-level objective defined here, outside the package, composes with `poe` and trains through SRNetTrainer."""

import pytest
import torch
from conftest import tiny_model
from torch import nn
from training.helpers import cpu_args, synthetic_nli, tiny_tokenizer

from hf_srnets.objectives import OBJECTIVES, LossObjective, StepObjective, build_objective, register_objective
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer


class PerturbedEmbeddings(StepObjective):
    """Toy adversarial-style step: `passes` forward/backward passes on the word embeddings plus ε·N(0, 1) noise,
    each loss weighted 1/passes (FreeLB's averaged gradient without the ascent on δ)."""

    name = "test-perturbed-embeddings"

    def __init__(self, inner, epsilon: float = 0.0, passes: int = 2) -> None:
        super().__init__(inner)
        self.epsilon, self.passes, self.calls = epsilon, passes, 0

    def step(self, trainer, model, inputs):
        self.calls += 1
        rest = {k: v for k, v in inputs.items() if k != "input_ids"}
        total = torch.zeros(())
        for _ in range(self.passes):
            embeds = model.get_input_embeddings()(inputs["input_ids"])
            if self.epsilon:
                embeds = embeds + self.epsilon * torch.randn_like(embeds)
            loss = trainer.compute_loss(model, {**rest, "inputs_embeds": embeds})
            total = total + self.backward(trainer, loss / self.passes)
        return total

    def get_config_dict(self):
        return {**super().get_config_dict(), "epsilon": self.epsilon, "passes": self.passes}


@pytest.fixture
def registered():
    register_objective(PerturbedEmbeddings)
    yield PerturbedEmbeddings
    OBJECTIVES.pop(PerturbedEmbeddings.name)


def _model() -> nn.Module:
    model = tiny_model("bert")
    for module in model.modules():  # two passes must see the same network: no dropout
        if isinstance(module, nn.Dropout):
            module.p = 0.0
    return model


def _trainer(tmp_path, objective=None, **kwargs):
    tokenizer = tiny_tokenizer(tmp_path)
    data = synthetic_nli(tokenizer, n=64)
    return SRNetTrainer(
        model=_model(),
        args=cpu_args(tmp_path / "out", loss="poe", **kwargs),
        objective=objective,
        train_dataset=data,
        eval_dataset=data,
        data_collator=SRNetDataCollator(tokenizer),
    )


def test_registered_step_objective_wraps_poe(registered):
    objective = build_objective("poe", step=registered.name, step_options={"epsilon": 0.5, "passes": 3})
    assert isinstance(objective, registered) and isinstance(objective.inner, LossObjective)
    assert objective.inner.loss.name == "poe" and objective.requires == ("bias_probs",)
    assert objective.citations == ("winwin", "clark")
    assert objective.get_config_dict() == {
        "loss": "poe",
        "requires": ["bias_probs"],
        "step_objective": registered.name,
        "epsilon": 0.5,
        "passes": 3,
    }
    with pytest.raises(ValueError, match="already registered"):

        @register_objective
        class Other(StepObjective):
            name = registered.name

    with pytest.raises(TypeError, match="not a StepObjective"):
        register_objective(LossObjective)


def test_zero_perturbation_gives_the_plain_objective_gradients(tmp_path, registered):
    plain = _trainer(tmp_path)
    stepped = _trainer(tmp_path, objective=build_objective("poe", step=registered.name))
    batch = next(iter(plain.get_train_dataloader()))
    for trainer in (plain, stepped):
        trainer.current_gradient_accumulation_steps = 2  # the loss is scaled as in gradient accumulation
        loss = trainer.training_step(trainer.model, batch)
        trainer.reported = loss
    assert stepped.objective.calls == 1
    assert torch.allclose(stepped.reported, plain.reported, rtol=1e-6, atol=0)
    for (key, a), (_, b) in zip(plain.model.named_parameters(), stepped.model.named_parameters()):
        assert torch.allclose(a.grad, b.grad, rtol=1e-5, atol=1e-8), key
    assert plain.evaluate()["eval_loss"] == stepped.evaluate()["eval_loss"]  # evaluation uses the inner objective


def test_step_objective_trains_through_the_trainer(tmp_path, registered):
    plain = _trainer(tmp_path, max_steps=3, logging_steps=1)
    plain.train()
    zero = _trainer(tmp_path, build_objective("poe", step=registered.name), max_steps=3, logging_steps=1)
    zero.train()
    noisy = _trainer(tmp_path, build_objective("poe", step=registered.name, step_options={"epsilon": 1.0}), max_steps=3)
    noisy.train()
    assert zero.objective.calls == noisy.objective.calls == 3
    logs = [entry for entry in zero.state.log_history if "loss" in entry]
    assert len(logs) == 3 and all({"loss_poe", "loss_ce"} <= set(entry) for entry in logs)
    plain_logs = [entry for entry in plain.state.log_history if "loss" in entry]
    for mine, theirs in zip(logs, plain_logs):
        assert mine["loss"] == pytest.approx(theirs["loss"], rel=1e-5)
        assert mine["loss_poe"] == pytest.approx(theirs["loss_poe"], rel=1e-5)
    params = dict(plain.model.named_parameters())
    for key, value in zero.model.named_parameters():
        assert torch.allclose(value, params[key], rtol=1e-4, atol=1e-6), key
    moved = [not torch.allclose(v, params[k], rtol=1e-4, atol=1e-6) for k, v in noisy.model.named_parameters()]
    assert any(moved)  # the perturbation reaches the model
