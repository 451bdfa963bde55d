"""run_glue_sparse.py on checkpoints made elsewhere: their own label order, and a search without --do_train."""

import json
import os
import sys

import pytest
import torch
from conftest import mnli_run_args
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

from hf_srnets.data import get_task, load_file
from hf_srnets.training.trainer import SRNetTrainer

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import run_glue_sparse

OWN_ORDER = {0: "contradiction", 1: "neutral", 2: "entailment"}  # not the task's (entailment, neutral, contradiction)


def _checkpoint(minilm, path, id2label, always=None):
    """A tiny BERT classifier with the MiniLM tokenizer; with `always`, it predicts that label id for any input."""
    config = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64
    )
    config.id2label, config.label2id = id2label, {v: k for k, v in id2label.items()}
    torch.manual_seed(0)
    model = BertForSequenceClassification(config)
    if always is not None:
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.bias.copy_(torch.tensor([10.0 if i == always else 0.0 for i in range(len(id2label))]))
    model.save_pretrained(path)
    AutoTokenizer.from_pretrained(minilm).save_pretrained(path)
    return str(path)


def _args(model, data_dir, out, *extra):
    return mnli_run_args(model, data_dir, out, "--num_train_epochs", "1", *extra, train=32, eval=60, ood=60, batch=16)


def test_a_checkpoints_own_label_order_is_kept(minilm, data_dir, tmp_path):
    """A classifier that always answers its own "entailment" (id 2) is right on every HANS entailment pair."""
    model = _checkpoint(minilm, tmp_path / "ckpt", OWN_ORDER, always=2)
    results = run_glue_sparse.main(_args(model, data_dir, tmp_path / "out"))
    assert results["eval_hans_entailment_accuracy"] == 1.0
    assert results["eval_hans_non-entailment_accuracy"] == 0.0
    task = get_task("mnli")
    gold = load_file(str(data_dir / "mnli" / "dev_matched.tsv"), task.label_names, aliases=task.label_aliases)
    share = sum(label == 0 for label in gold["label"][:60]) / 60  # task id 0 = entailment
    assert results["eval_mnli_accuracy"] == pytest.approx(share)


def test_bias_predictions_follow_the_checkpoints_label_order(minilm, data_dir, tmp_path):
    """p_b files are in the task's order; the run moves them to the checkpoint's, with the gold ids."""
    model = _checkpoint(minilm, tmp_path / "ckpt", OWN_ORDER)
    task = get_task("mnli")
    train = load_file(str(data_dir / "mnli" / "dev_mismatched.tsv"), task.label_names, aliases=task.label_aliases)
    bias = tmp_path / "bias.jsonl"
    with open(bias, "w") as f:
        for ex_id, label in zip(train["id"][:32], train["label"][:32]):
            probs = [0.1, 0.1, 0.1]
            probs[label] = 0.8  # task order: the gold label gets 0.8
            f.write(json.dumps({"id": ex_id, "probs": probs}) + "\n")
    captured = {}
    original = SRNetTrainer.__init__

    def spy(self, *args, **kwargs):
        captured["train"] = kwargs.get("train_dataset")
        original(self, *args, **kwargs)

    SRNetTrainer.__init__ = spy
    try:
        run_glue_sparse.main(
            _args(model, data_dir, tmp_path / "out", "--do_train", "--loss", "poe", "--bias_predictions", str(bias))
            + ["--max_steps", "1"]
        )
    finally:
        SRNetTrainer.__init__ = original
    rows = captured["train"]
    assert len(rows) == 32
    for label, probs in zip(rows["label"], rows["bias_probs"]):
        assert probs[label] == pytest.approx(0.8)  # still on the gold label, now in the checkpoint's ids
    names = [OWN_ORDER[label] for label in rows["label"]]
    assert names == [task.label_names[label] for label in train["label"][:32]]


def test_a_checkpoint_with_other_label_names_is_refused(minilm, data_dir, tmp_path):
    model = _checkpoint(minilm, tmp_path / "ckpt", {0: "negative", 1: "neutral", 2: "positive"})
    with pytest.raises(ValueError, match="do not match task 'mnli'"):
        run_glue_sparse.main(_args(model, data_dir, tmp_path / "out"))


def test_pruning_without_do_train_searches(minilm, data_dir, tmp_path):
    """The design card's command has no --do_train: a mask search must still search and save its masks."""
    model = _checkpoint(minilm, tmp_path / "ckpt", {0: "entailment", 1: "neutral", 2: "contradiction"})
    out = tmp_path / "out"
    results = run_glue_sparse.main(
        _args(model, data_dir, out, "--pruning", "mask", "--sparsity", "0.5", "--threshold_update_interval", "1")
    )
    assert results["train_steps"] == 2
    assert (out / "srnet_masks.safetensors").is_file()
    assert results["sparsity"] == pytest.approx(0.5, abs=1e-3)
