"""After `resume_from_checkpoint`, `train_loss` is the whole run's mean, as an uninterrupted run reports it, and
`train_runtime` counts the training time before the resume too."""

import json
import time

import pytest
from conftest import tiny_model

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import ThresholdConfig
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.resumed_loss import STATE_KEY
from hf_srnets.training.trainer import SRNetTrainer

from .helpers import cpu_args, synthetic_nli, tiny_tokenizer


def _trainer(tmp_path, out, srnet):
    tokenizer = tiny_tokenizer(tmp_path)
    model = tiny_model("bert")
    if srnet:
        model = SRNetModel(model, ThresholdConfig(sparsity=0.5, threshold_update_interval=2))
    # logging every 3 steps, checkpoints every 4: the checkpoint at 8 holds 2 steps not yet logged
    args = cpu_args(out, max_steps=12, logging_steps=3, save_strategy="steps", save_steps=4, loss="ce")
    data = synthetic_nli(tokenizer, n=64, with_bias=False)
    return SRNetTrainer(model=model, args=args, train_dataset=data, data_collator=SRNetDataCollator(tokenizer))


@pytest.mark.parametrize("srnet", [False, True])
def test_train_loss_after_a_resume_is_the_whole_runs_mean(tmp_path, srnet):
    out = tmp_path / "out"
    full = _trainer(tmp_path, out, srnet).train()
    history = json.loads((out / "checkpoint-12" / "trainer_state.json").read_text())["log_history"]
    losses = [e["loss"] for e in history if "loss" in e]
    assert full.metrics["train_loss"] == pytest.approx(sum(losses) * 3 / 12, rel=1e-6)  # 4 logs of 3 steps each

    resumed_trainer = _trainer(tmp_path, tmp_path / "resumed", srnet)
    resumed = resumed_trainer.train(resume_from_checkpoint=str(out / "checkpoint-8"))
    assert resumed.global_step == 12
    assert resumed.metrics["train_loss"] == pytest.approx(full.metrics["train_loss"], rel=1e-6)
    assert resumed.training_loss == resumed.metrics["train_loss"]
    (final,) = [e for e in resumed_trainer.state.log_history if "train_loss" in e]
    assert final["train_loss"] == resumed.metrics["train_loss"]
    # the steps after the resume alone average differently: what train_loss reported before
    after = [e["loss"] for e in resumed_trainer.state.log_history if "loss" in e and e["step"] > 8]
    assert abs(sum(after) / len(after) - full.metrics["train_loss"]) > 1e-4
    state = json.loads((out / "checkpoint-8" / "trainer_state.json").read_text())
    assert state["stateful_callbacks"][STATE_KEY]["global_step"] == 8


def test_a_checkpoint_without_the_loss_record_says_what_the_mean_covers(tmp_path):
    out = tmp_path / "out"
    _trainer(tmp_path, out, False).train()
    path = out / "checkpoint-8" / "trainer_state.json"
    state = json.loads(path.read_text())
    state["stateful_callbacks"].pop(STATE_KEY)  # as an older hf_srnets wrote it
    path.write_text(json.dumps(state))
    trainer = _trainer(tmp_path, tmp_path / "resumed", False)
    resumed = trainer.train(resume_from_checkpoint=str(out / "checkpoint-8"))
    assert resumed.metrics["train_loss_from_step"] == 9
    # the mean over steps 9-12, from the logs at step 9 (step 9 alone) and 12 (steps 10-12), rounded to 4 digits
    logged = {e["step"]: e["loss"] for e in trainer.state.log_history if "loss" in e and e["step"] > 8}
    assert sorted(logged) == [9, 12]
    assert resumed.metrics["train_loss"] == pytest.approx((logged[9] + 3 * logged[12]) / 4, abs=2e-4)
    assert resumed.metrics["train_runtime_from_step"] == 9


def test_train_runtime_after_a_resume_adds_the_time_before_it(tmp_path):
    out = tmp_path / "out"
    start = time.monotonic()
    _trainer(tmp_path, out, False).train()
    first_call = time.monotonic() - start
    state = json.loads((out / "checkpoint-8" / "trainer_state.json").read_text())
    before = state["stateful_callbacks"][STATE_KEY]["runtime"]
    assert 0 < before < first_call  # measured inside the test's own clock reading of the first run
    state["stateful_callbacks"][STATE_KEY]["runtime"] = 1000.0  # as if the first 8 steps had taken 1000 s
    (out / "checkpoint-8" / "trainer_state.json").write_text(json.dumps(state))
    trainer = _trainer(tmp_path, tmp_path / "resumed", False)
    start = time.monotonic()
    resumed = trainer.train(resume_from_checkpoint=str(out / "checkpoint-8"))
    second_call = time.monotonic() - start
    assert 1000.0 < resumed.metrics["train_runtime"] <= 1000.0 + second_call + 1e-3  # Trainer rounds to 4 decimals
    assert "train_runtime_from_step" not in resumed.metrics
    (final,) = [e for e in trainer.state.log_history if "train_runtime" in e]
    assert final["train_runtime"] == resumed.metrics["train_runtime"]
    record = json.loads((tmp_path / "resumed" / "checkpoint-12" / "trainer_state.json").read_text())
    assert record["stateful_callbacks"][STATE_KEY]["runtime"] > 1000.0  # a checkpoint after the resume adds on
