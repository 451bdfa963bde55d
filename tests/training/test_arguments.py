"""`SRNetTrainingArguments` refuses a learning rate or training length that cannot train, by name (issue 33,
round 4: `--learning_rate nan` was a torch traceback at the first step, `--num_train_epochs -1` trained 0 steps and
saved the untrained model as the run's result, `--mask_learning_rate nan` passed, and a batch size of 0 was a
torch traceback)."""

from __future__ import annotations

import pytest

from hf_srnets.errors import InputError
from hf_srnets.training.arguments import SRNetTrainingArguments


def _args(tmp_path, **options) -> SRNetTrainingArguments:
    return SRNetTrainingArguments(output_dir=str(tmp_path), use_cpu=True, report_to="none", **options)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"learning_rate": float("nan")}, r"--learning_rate must be a number >= 0, got nan: e\.g\. --learning_rate"),
        ({"learning_rate": -1e-5}, r"--learning_rate must be a number >= 0, got -1e-05"),
        ({"mask_learning_rate": float("nan")}, r"--mask_learning_rate must be > 0, got nan"),
        ({"num_train_epochs": -1.0, "do_train": True}, r"--num_train_epochs must be a number >= 0, got -1\.0"),
        ({"num_train_epochs": float("inf")}, r"--num_train_epochs must be a number >= 0, got inf"),
        ({"num_train_epochs": 0.0, "do_train": True}, r"--num_train_epochs 0 with --do_train trains no step"),
        # issue 50: max_steps 0 ran one step at learning rate 0 and the card said 1 training step
        ({"max_steps": 0, "num_train_epochs": 3.0, "do_train": True}, r"--max_steps 0 with --do_train trains no step"),
        ({"per_device_train_batch_size": 0}, r"--per_device_train_batch_size must be at least 1, got 0"),
        ({"per_device_eval_batch_size": -2}, r"--per_device_eval_batch_size must be at least 1, got -2"),
        ({"gradient_accumulation_steps": 0}, r"--gradient_accumulation_steps must be at least 1, got 0"),
    ],
)
def test_a_schedule_that_cannot_train_is_refused_by_name(tmp_path, options, expected):
    with pytest.raises(InputError, match=expected):
        _args(tmp_path, **options)


def test_a_schedule_that_trains_is_kept(tmp_path):
    assert _args(tmp_path, learning_rate=0.0, num_train_epochs=0.0).num_train_epochs == 0  # evaluation only
    assert _args(tmp_path, num_train_epochs=0.0, max_steps=5, do_train=True).max_steps == 5
    assert _args(tmp_path, num_train_epochs=0.5, do_train=True).num_train_epochs == 0.5
    assert _args(tmp_path, max_steps=0).max_steps == 0  # evaluation only
