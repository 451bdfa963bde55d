"""SRNetTrainer with the compression losses (Du et al. 2023): the teacher and difficulty columns reach the loss, the
loss falls and its components are logged, with a plain model and with an SRNetModel under IMP."""

import math

import pytest
import torch
from conftest import tiny_model

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import MagnitudeConfig, ThresholdConfig
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer

from .helpers import cpu_args, synthetic_nli, tiny_tokenizer


def _train_set(tokenizer, n=64):
    """The synthetic pairs with a teacher that is 70% sure of the gold label (wrong on every fifth example) and
    difficulties alternating between 0.5 (easy) and 1 (hard)."""
    data = synthetic_nli(tokenizer, n=n, with_bias=False)
    teacher, difficulty = [], []
    for i, label in enumerate(data["label"]):
        top = (label + 1) % 3 if i % 5 == 4 else label
        probs = [0.15, 0.15, 0.15]
        probs[top] = 0.7
        teacher.append(probs)
        difficulty.append(0.5 if i % 2 else 1.0)
    return data.add_column("teacher_probs", teacher).add_column("difficulty", difficulty)


def _trainer(tmp_path, model, loss, **kwargs):
    tokenizer = tiny_tokenizer(tmp_path)
    train = _train_set(tokenizer)
    return SRNetTrainer(
        model=model,
        args=cpu_args(tmp_path / "out", loss=loss, **kwargs),
        train_dataset=train,
        eval_dataset=train,
        data_collator=SRNetDataCollator(tokenizer),
    )


def _loss_logs(trainer):
    return [entry for entry in trainer.state.log_history if "loss" in entry]


@pytest.mark.parametrize(
    ("loss", "components"),
    [
        ("rmc", {"loss_rmc", "loss_ce", "loss_kl", "loss_difficulty"}),
        ("jtt", {"loss_jtt", "loss_ce", "loss_error_fraction"}),
        ("focal", {"loss_focal", "loss_ce", "loss_max_weight"}),
    ],
)
def test_compression_loss_trains_and_logs_its_components(tmp_path, loss, components):
    trainer = _trainer(tmp_path, tiny_model("bert"), loss)
    batch = next(iter(trainer.get_train_dataloader()))
    assert batch["teacher_probs"].shape == (8, 3) and batch["difficulty"].shape == (8,)
    trainer.train()
    logs = _loss_logs(trainer)
    assert len(logs) == 3 and all(components <= set(entry) for entry in logs)
    assert all(math.isfinite(entry["loss"]) for entry in logs)
    assert logs[-1]["loss"] < logs[0]["loss"]
    if loss == "rmc":
        assert all(entry["loss_difficulty"] == pytest.approx(0.75) for entry in logs)
    if loss == "jtt":  # every fifth example is an ERM error
        assert 0.0 < sum(entry["loss_error_fraction"] for entry in logs) / 3 < 0.5
    assert math.isfinite(trainer.evaluate()["eval_loss"])  # the eval set has the columns: the loss itself


def test_rmc_under_imp_prunes_and_trains(tmp_path):
    config = MagnitudeConfig(sparsity=0.4, imp_prune_ratio=0.2, imp_interval=0.25)
    srnet = SRNetModel(tiny_model("bert"), config)
    trainer = _trainer(tmp_path, srnet, "rmc", logging_steps=6)
    trainer.train()
    logs = _loss_logs(trainer)
    assert logs and all({"loss_rmc", "loss_kl", "sparsity"} <= set(entry) for entry in logs)
    assert logs[-1]["sparsity"] == pytest.approx(0.4, abs=0.01)
    assert all(math.isfinite(entry["loss"]) for entry in logs)
    for name, layer in srnet.masked_layers().items():
        zeros = int((~layer.binary_mask()).sum())
        assert zeros == math.floor(0.4 * layer.binary_mask().numel()), name


def test_rmc_searches_a_mask_with_frozen_weights(tmp_path):
    model = tiny_model("bert")
    before = {k: v.clone() for k, v in model.state_dict().items()}
    srnet = SRNetModel(model, ThresholdConfig(sparsity=0.5, threshold_update_interval=3))
    scores = {n: m.mask_scores.detach().clone() for n, m in srnet.masked_layers().items()}
    trainer = _trainer(tmp_path, srnet, "rmc", mask_learning_rate=0.05, max_steps=6, logging_steps=3)
    trainer.train()
    assert all({"loss_rmc", "loss_kl", "loss_difficulty"} <= set(entry) for entry in _loss_logs(trainer))
    for name, layer in srnet.masked_layers().items():
        assert torch.equal(layer.base_layer.weight, before[f"{name}.weight"]), name
        assert not torch.equal(layer.mask_scores, scores[name]), name


def test_rmc_smoothing_changes_the_update(tmp_path):
    """The difficulty column is used: all d_i = 1 (distillation on p_t) trains to other weights than d_i = 0.5/1."""
    tokenizer = tiny_tokenizer(tmp_path)
    weights = []
    for difficulty in (None, 1.0):
        train = _train_set(tokenizer)
        if difficulty is not None:
            train = train.remove_columns("difficulty").add_column("difficulty", [difficulty] * len(train))
        model = tiny_model("bert")
        args = cpu_args(tmp_path / f"out{difficulty}", loss="rmc", max_steps=2)
        SRNetTrainer(model=model, args=args, train_dataset=train, data_collator=SRNetDataCollator(tokenizer)).train()
        weights.append(model.classifier.weight.detach().clone())
    assert not torch.allclose(weights[0], weights[1])
