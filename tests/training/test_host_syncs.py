"""A training step of hf_srnets reads nothing back from the device that the plain `transformers.Trainer` does not:
between logging steps, cross-entropy training and mask training with PoE make exactly the plain Trainer's
tensor-to-host reads (`.item()`, `bool()`, `float()`, `int()`, `.tolist()`, `.cpu()`, `.numpy()`), each of which
waits for the GPU. Counted on the CPU by wrapping those methods of `torch.Tensor`; on CUDA each would be a sync."""

from __future__ import annotations

import sys
from collections import Counter

import pytest
import torch
from conftest import tiny_model
from transformers import DataCollatorWithPadding, Trainer, TrainerCallback

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import ThresholdConfig
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer

from .helpers import cpu_args, synthetic_nli, tiny_tokenizer

READS = ("item", "__bool__", "__float__", "__int__", "tolist", "cpu", "numpy")
FIRST, LAST = 2, 7  # the counted steps: after the first optimizer steps, before the threshold update at step 8


class CountReads(TrainerCallback):
    """Counts the tensor reads made from the start of step FIRST + 1 to the end of step LAST."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.counts: Counter[str] = Counter()
        self.on = False
        for name in READS:
            monkeypatch.setattr(torch.Tensor, name, self.wrap(name, getattr(torch.Tensor, name)))

    def wrap(self, name, original):
        def read(tensor, *args, **kwargs):
            # torch's own optimizer is left out: before torch 2.8 its CPU (single-tensor) Adam reads each
            # parameter's step count, so the count follows the number of trained tensors, not hf_srnets' code
            if self.on and "torch/optim/" not in sys._getframe(1).f_code.co_filename.replace("\\", "/"):
                self.counts[name] += 1
            return original(tensor, *args, **kwargs)

        return read

    def on_step_begin(self, args, state, control, **kwargs):
        self.on = FIRST <= state.global_step < LAST

    def on_step_end(self, args, state, control, **kwargs):
        self.on = False


def reads_per_window(variant: str, tmp_path, monkeypatch) -> Counter[str]:
    tokenizer = tiny_tokenizer(tmp_path)
    data = synthetic_nli(tokenizer, n=64, with_bias=True)
    counter = CountReads(monkeypatch)
    # logging only at step 8 (outside the window); thresholds updated at step 8 (every 8 steps)
    args = dict(max_steps=8, logging_steps=8, per_device_train_batch_size=8)
    if variant == "plain":
        plain = data.remove_columns(["bias_probs", "id"])
        trainer = Trainer(
            model=tiny_model("bert"), args=cpu_args(tmp_path / variant, **args), train_dataset=plain,
            data_collator=DataCollatorWithPadding(tokenizer), callbacks=[counter],
        )  # fmt: skip
    else:
        model = tiny_model("bert")
        if variant == "mask-poe":
            model = SRNetModel(model, ThresholdConfig(sparsity=0.5, threshold_update_interval=8))
        trainer = SRNetTrainer(
            model=model, args=cpu_args(tmp_path / variant, loss="poe" if variant == "mask-poe" else "ce", **args),
            train_dataset=data, data_collator=SRNetDataCollator(tokenizer), callbacks=[counter],
        )  # fmt: skip
    trainer.train()
    return counter.counts


def test_srnet_steps_read_back_what_the_plain_trainer_reads(tmp_path, monkeypatch):
    plain = reads_per_window("plain", tmp_path, monkeypatch)
    assert plain["__bool__"] > 0, "the counter must see the plain Trainer's own reads (its NaN/inf loss filter)"
    assert reads_per_window("full-ce", tmp_path, monkeypatch) == plain
    assert reads_per_window("mask-poe", tmp_path, monkeypatch) == plain
