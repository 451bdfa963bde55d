"""Length-sorted evaluation: batches go longest first, outputs and metrics come back in dataset order.

Also runnable as the worker of the two-process test: `torchrun --nproc_per_node 2 test_eval_order.py OUT`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.utils.data import SequentialSampler

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conftest import tiny_model

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import ThresholdConfig
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.length_sorted_eval import LengthSortedSampler, example_lengths, restore_order
from hf_srnets.training.trainer import SRNetTrainer
from training.helpers import cpu_args, end_process_group, synthetic_nli, tiny_tokenizer


def _trainer(out: Path, tokenizer, sort: bool, compute_metrics=None, **kwargs) -> SRNetTrainer:
    torch.manual_seed(0)
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5))
    args = cpu_args(out, eval_sort_by_length=sort, per_device_eval_batch_size=4, **kwargs)
    return SRNetTrainer(
        model=srnet, args=args, data_collator=SRNetDataCollator(tokenizer), compute_metrics=compute_metrics
    )


def test_restore_order_inverts_the_permutation():
    order = np.array([2, 0, 3, 1])
    sorted_rows = np.array([[20], [0], [30], [10]])  # row k is example order[k]
    assert restore_order(sorted_rows, order).ravel().tolist() == [0, 10, 20, 30]
    logits, labels = restore_order((sorted_rows, np.array([2, 0, 3, 1])), order)
    assert labels.tolist() == [0, 1, 2, 3] and logits.ravel().tolist() == [0, 10, 20, 30]
    assert restore_order(None, order) is None
    with pytest.raises(ValueError, match="eval_sort_by_length"):
        restore_order(np.zeros(3), order)


def test_sampler_is_longest_first_and_stable():
    sampler = LengthSortedSampler(np.array([3, 7, 3, 9, 7]))
    assert list(sampler) == [3, 1, 4, 0, 2] and len(sampler) == 5


def test_lengths_from_arrow_match_python(tmp_path):
    data = synthetic_nli(tiny_tokenizer(tmp_path), n=20).shuffle(seed=1)  # an indices mapping over the table
    expected = [len(ids) for ids in data["input_ids"]]
    assert example_lengths(data, "input_ids").tolist() == expected
    assert example_lengths(data.add_column("length", [1] * 20), "input_ids").tolist() == [1] * 20
    assert example_lengths(data.remove_columns("input_ids"), "input_ids") is None


def test_eval_batches_are_sorted_and_less_padded(tmp_path):
    tokenizer = tiny_tokenizer(tmp_path)
    data = synthetic_nli(tokenizer, n=40)
    widths = {}
    for sort in (True, False):
        trainer = _trainer(tmp_path / str(sort), tokenizer, sort)
        loader = trainer.get_eval_dataloader(data)
        widths[sort] = [batch["input_ids"].shape[1] for batch in loader]
    assert widths[True] == sorted(widths[True], reverse=True)
    assert widths[False] != sorted(widths[False], reverse=True)  # the data is not already in length order
    assert sum(widths[True]) < sum(widths[False])  # fewer padded positions
    unsorted = _trainer(tmp_path / "plain", tokenizer, False)
    assert isinstance(unsorted._get_eval_sampler(data), SequentialSampler)


def test_predict_evaluate_and_metrics_in_dataset_order(tmp_path):
    tokenizer = tiny_tokenizer(tmp_path)
    data = synthetic_nli(tokenizer, n=41)  # 41: a last batch of 1
    seen = {}

    def compute_metrics(pred):  # reads labels by position, as an evaluator reading dataset columns would
        seen.setdefault("labels", []).append(pred.label_ids.copy())
        first = float(pred.predictions[0, 0])
        return {"accuracy": float((pred.predictions.argmax(-1) == pred.label_ids).mean()), "first_logit": first}

    outputs, metrics = {}, {}
    for sort in (True, False):
        trainer = _trainer(tmp_path / str(sort), tokenizer, sort, compute_metrics)
        outputs[sort] = trainer.predict(data)
        metrics[sort] = trainer.evaluate(data)
        assert np.array_equal(trainer.last_eval_output.predictions, outputs[sort].predictions)
    assert all(np.array_equal(labels, np.asarray(data["label"])) for labels in seen["labels"])
    np.testing.assert_allclose(outputs[True].predictions, outputs[False].predictions, atol=1e-5)
    assert np.array_equal(outputs[True].label_ids, np.asarray(data["label"]))
    for key in ("test_accuracy", "test_first_logit"):
        assert outputs[True].metrics[key] == pytest.approx(outputs[False].metrics[key], abs=1e-5)
    for key in ("eval_accuracy", "eval_first_logit", "eval_loss"):
        assert metrics[True][key] == pytest.approx(metrics[False][key], abs=1e-5)


def test_no_sorting_when_outputs_are_not_one_row_per_example(tmp_path):
    tokenizer = tiny_tokenizer(tmp_path)
    data = synthetic_nli(tokenizer, n=10)
    trainer = _trainer(tmp_path, tokenizer, True, dataloader_drop_last=True)
    assert not isinstance(trainer._get_eval_sampler(data), LengthSortedSampler)


# -- two processes ------------------------------------------------------------------------------------------
def _worker(out: str) -> None:
    """Predict on 37 examples (odd: accelerate pads the last round of batches) and save rank R's predictions."""
    rank = int(os.environ.get("RANK", 0))
    tokenizer = tiny_tokenizer(Path(out) / f"tok{rank}")
    data = synthetic_nli(tokenizer, n=37)
    trainer = _trainer(Path(out) / f"run{rank}", tokenizer, True, ddp_backend="gloo")
    assert trainer.args.world_size == 2
    output = trainer.predict(data)
    torch.save({"predictions": output.predictions, "labels": output.label_ids}, Path(out) / f"rank{rank}.pt")
    end_process_group()


@pytest.mark.slow
def test_two_processes_restore_the_dataset_order(tmp_path):
    (tmp_path / "tok0").mkdir()
    (tmp_path / "tok1").mkdir()
    from training.ddp_helpers import launch

    launch(Path(__file__), 2, tmp_path, timeout=300)
    tokenizer = tiny_tokenizer(tmp_path)
    data = synthetic_nli(tokenizer, n=37)
    single = _trainer(tmp_path / "single", tokenizer, False).predict(data)
    for rank in (0, 1):
        saved = torch.load(tmp_path / f"rank{rank}.pt", weights_only=False)
        assert np.array_equal(saved["labels"], np.asarray(data["label"]))
        np.testing.assert_allclose(saved["predictions"], single.predictions, atol=1e-5)


if __name__ == "__main__":
    _worker(sys.argv[1])
