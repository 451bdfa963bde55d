"""Two runs of the same mask search give the same masks, scores and files, byte for byte."""

import hashlib
import os

import pytest
import torch
from conftest import tiny_model

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import CONFIG_NAME, MASKS_NAME, ThresholdConfig
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer

from .helpers import cpu_args, synthetic_nli, tiny_tokenizer


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _search(tmp_path, out, mask_init):
    srnet = SRNetModel(
        tiny_model("bert"), ThresholdConfig(sparsity=0.5, mask_init=mask_init, threshold_update_interval=3)
    )
    tokenizer = tiny_tokenizer(tmp_path)
    lr = 0.05 if mask_init == "hard" else 2e-3
    args = cpu_args(
        out, per_device_train_batch_size=16, max_steps=9, mask_learning_rate=lr, loss="poe", logging_steps=3
    )
    trainer = SRNetTrainer(
        model=srnet,
        args=args,
        train_dataset=synthetic_nli(tokenizer, n=96),
        data_collator=SRNetDataCollator(tokenizer),
    )
    trainer.train()
    trainer.save_model()
    return srnet


@pytest.mark.parametrize("mask_init", ["hard", "soft"])
def test_two_runs_of_the_same_search_are_bit_identical(tmp_path, mask_init):
    first = _search(tmp_path, tmp_path / "first", mask_init)
    second = _search(tmp_path, tmp_path / "second", mask_init)
    for (name, a), b in zip(first.masked_layers().items(), second.masked_layers().values()):
        assert torch.equal(a.mask_scores, b.mask_scores), name
        assert torch.equal(a.threshold, b.threshold) and torch.equal(a.tie_index, b.tie_index), name
        assert torch.equal(a.binary_mask(), b.binary_mask()), name
    for name in (MASKS_NAME, CONFIG_NAME):  # what is shared: the same files, so their hashes can be compared
        assert _digest(tmp_path / "first" / name) == _digest(tmp_path / "second" / name), name


def test_saving_the_same_masks_gives_the_same_bytes(tmp_path):
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5, trainable_classifier=True))
    digests = set()
    for i in range(8):  # the safetensors metadata map is written in a random order: more than one key showed it
        srnet.save_pretrained(tmp_path / str(i))
        digests.add((_digest(tmp_path / str(i) / MASKS_NAME), _digest(tmp_path / str(i) / CONFIG_NAME)))
    assert len(digests) == 1
    assert os.path.getsize(tmp_path / "0" / MASKS_NAME) > 0
