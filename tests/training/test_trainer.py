"""SRNetTrainer: mask search end to end on a tiny model, columns, logging, best-checkpoint window, resume."""

import math
import os

import pytest
import torch
from conftest import tiny_model
from transformers import TrainerCallback

from hf_srnets.errors import InputError
from hf_srnets.losses import get_loss
from hf_srnets.masking import SRNetModel
from hf_srnets.objectives import build_objective
from hf_srnets.pruning import ThresholdConfig
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer

from .helpers import cpu_args, synthetic_nli, tiny_tokenizer


def _args(tmp_path, **kwargs):
    return cpu_args(kwargs.pop("output_dir", tmp_path / "out"), **kwargs)


def _trainer(tmp_path, model, **kwargs):
    tokenizer = tiny_tokenizer(tmp_path)
    train = synthetic_nli(tokenizer, n=64)
    return SRNetTrainer(
        model=model,
        args=_args(tmp_path, **kwargs),
        train_dataset=train,
        eval_dataset=train,
        data_collator=SRNetDataCollator(tokenizer),
        processing_class=tokenizer,
    )


def test_mask_training_keeps_weights_frozen_and_sparsity_exact(tmp_path):
    model = tiny_model("bert")
    before = {k: v.clone() for k, v in model.state_dict().items()}
    srnet = SRNetModel(model, ThresholdConfig(sparsity=0.5, threshold_update_interval=3))
    scores_before = {n: m.mask_scores.detach().clone() for n, m in srnet.masked_layers().items()}
    trainer = _trainer(tmp_path, srnet, loss="poe", mask_learning_rate=0.05)
    trainer.train()
    for name, layer in srnet.masked_layers().items():
        assert torch.equal(layer.base_layer.weight, before[f"{name}.weight"]), name
        assert not torch.equal(layer.mask_scores, scores_before[name]), name
        assert int((~layer.binary_mask()).sum()) == math.floor(0.5 * layer.mask_scores.numel())
    for key, value in model.state_dict().items():
        if key in before:
            assert torch.equal(value, before[key]), key
    logs = [entry for entry in trainer.state.log_history if "loss" in entry]
    assert logs and all({"loss_poe", "loss_ce", "sparsity", "target_sparsity"} <= set(entry) for entry in logs)


def test_threshold_interval_longer_than_the_run_is_warned(tmp_path, caplog):
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5, threshold_update_interval=1000))
    trainer = _trainer(tmp_path, srnet, max_steps=2)
    with caplog.at_level("WARNING", logger="hf_srnets.pruning.threshold.controller"):
        trainer.train()
    assert "threshold_update_interval = 1000 steps is not shorter than the run's 2 steps" in caplog.text
    caplog.clear()
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5, threshold_update_interval=1))
    with caplog.at_level("WARNING", logger="hf_srnets.pruning.threshold.controller"):
        _trainer(tmp_path, srnet, max_steps=2).train()
    assert "threshold_update_interval" not in caplog.text


def test_bias_column_survives_column_pruning(tmp_path):
    trainer = _trainer(tmp_path, tiny_model("bert"), loss="poe")
    batch = next(iter(trainer.get_train_dataloader()))
    assert "bias_probs" in batch and batch["bias_probs"].shape == (8, 3)
    assert "id" not in batch


def test_debiasing_loss_without_bias_column_is_a_clear_error(tmp_path):
    tokenizer = tiny_tokenizer(tmp_path)
    train = synthetic_nli(tokenizer, n=16, with_bias=False)
    trainer = SRNetTrainer(
        model=tiny_model("bert"),
        args=_args(tmp_path, loss="reweight", max_steps=1),
        train_dataset=train,
        data_collator=SRNetDataCollator(tokenizer),
    )
    with pytest.raises(ValueError, match="needs the 'bias_probs' column"):
        trainer.train()


def test_objective_comes_from_loss_objective_or_args(tmp_path):
    args = _args(tmp_path, loss="reweight")
    assert SRNetTrainer(model=tiny_model("bert"), args=args).objective.loss.name == "reweight"
    poe = get_loss("poe")
    assert SRNetTrainer(model=tiny_model("bert"), args=args, loss=poe).objective.loss is poe
    objective = build_objective("confreg")
    assert SRNetTrainer(model=tiny_model("bert"), args=args, objective=objective).objective is objective
    with pytest.raises(ValueError, match="not both"):
        SRNetTrainer(model=tiny_model("bert"), args=args, loss=poe, objective=objective)


def test_full_finetuning_with_poe_updates_weights(tmp_path):
    model = tiny_model("bert")
    before = model.classifier.weight.detach().clone()
    trainer = _trainer(tmp_path, model, loss="poe", max_steps=3)
    trainer.train()
    assert not torch.equal(model.classifier.weight, before)
    metrics = trainer.evaluate()
    assert math.isfinite(metrics["eval_loss"])


def test_cubic_schedule_reaches_final_sparsity(tmp_path):
    config = ThresholdConfig(
        sparsity=0.9,
        initial_sparsity=0.7,
        sparsity_schedule="cubic",
        mask_init="soft",
        schedule_end=0.5,
        threshold_update_interval=1,
    )
    srnet = SRNetModel(tiny_model("bert"), config)
    assert srnet.sparsity_report()["sparsity"] == pytest.approx(0.7, abs=0.01)
    trainer = _trainer(tmp_path, srnet, max_steps=8, logging_steps=1)
    trainer.train()
    targets = [e["target_sparsity"] for e in trainer.state.log_history if "loss" in e]
    assert targets[0] > 0.7 and targets[-1] == pytest.approx(0.9)
    assert all(a <= b for a, b in zip(targets, targets[1:]))
    for mask in srnet.binary_masks().values():
        assert int((~mask).sum()) == math.floor(0.9 * mask.numel())


def test_select_best_after_ignores_early_checkpoints(tmp_path):
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.3, threshold_update_interval=2))
    trainer = _trainer(
        tmp_path,
        srnet,
        max_steps=10,
        eval_strategy="steps",
        eval_steps=2,
        save_strategy="steps",
        save_steps=2,
        metric_for_best_model="loss",
        greater_is_better=False,
        select_best_after=0.7,
        load_best_model_at_end=True,
        mask_learning_rate=0.05,
    )
    trainer.train()
    best_step = int(trainer.state.best_model_checkpoint.rsplit("-", 1)[1])
    assert best_step >= 7
    assert trainer.best_selection_start_step() == 7


def test_checkpoints_hold_masks_not_base_weights(tmp_path):
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5, threshold_update_interval=2))
    trainer = _trainer(tmp_path, srnet, max_steps=4, save_strategy="steps", save_steps=2)
    trainer.train()
    trainer.save_model()
    files = set(os.listdir(tmp_path / "out" / "checkpoint-2"))
    assert {"srnet_config.json", "srnet_masks.safetensors", "srnet_training_state.safetensors"} <= files
    assert "model.safetensors" not in files
    final = set(os.listdir(tmp_path / "out"))
    assert "srnet_masks.safetensors" in final and "srnet_training_state.safetensors" not in final


def test_resume_ends_with_the_same_masks(tmp_path):
    class StopAt(TrainerCallback):  # as if the job were killed right after the step-6 checkpoint
        def on_step_end(self, args, state, control, **kwargs):
            control.should_training_stop = state.global_step == 6
            return control

    def run(out):
        torch.manual_seed(0)
        srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5, threshold_update_interval=4))
        trainer = _trainer(
            tmp_path,
            srnet,
            output_dir=str(out),
            mask_learning_rate=0.05,
            max_steps=12,
            save_strategy="steps",
            save_steps=6,
        )
        return srnet, trainer

    full, trainer = run(tmp_path / "full")
    trainer.train()
    _, trainer = run(tmp_path / "resumed")
    trainer.add_callback(StopAt())
    trainer.train()
    assert trainer.state.global_step == 6
    resumed, trainer = run(tmp_path / "resumed")
    trainer.train(resume_from_checkpoint=str(tmp_path / "resumed" / "checkpoint-6"))
    for name, mask in full.binary_masks().items():
        assert torch.equal(resumed.binary_masks()[name], mask), name
    for (name, a), b in zip(full.masked_layers().items(), resumed.masked_layers().values()):
        assert torch.allclose(a.mask_scores, b.mask_scores, atol=1e-6), name


def test_resume_refuses_a_checkpoint_of_a_search_with_other_settings(tmp_path):
    """Issue 33: resuming a 50% search's checkpoint with --sparsity 0.7 used to restore the 50% scores and report a
    70% run; now each differing setting is named (values from the two configs written here)."""

    def trainer_for(config: ThresholdConfig):
        torch.manual_seed(0)
        srnet = SRNetModel(tiny_model("bert"), config)
        return _trainer(tmp_path, srnet, max_steps=4, save_strategy="steps", save_steps=2)

    trainer_for(ThresholdConfig(sparsity=0.5, threshold_update_interval=2)).train()
    checkpoint = str(tmp_path / "out" / "checkpoint-2")
    other = trainer_for(ThresholdConfig(sparsity=0.7, threshold_update_interval=3))
    with pytest.raises(InputError) as err:
        other.train(resume_from_checkpoint=checkpoint)
    message = str(err.value)
    assert "sparsity: 0.5 -> 0.7" in message and "threshold_update_interval: 2 -> 3" in message
    assert "--resume_from_checkpoint" in message and "\n" not in message
    same = trainer_for(ThresholdConfig(sparsity=0.5, threshold_update_interval=2))
    same.train(resume_from_checkpoint=checkpoint)  # the same settings resume
    assert same.state.global_step == 4
