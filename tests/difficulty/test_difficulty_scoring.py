"""Per-example losses of a saved model (RMC §5.1's l_it): equal to F.cross_entropy computed by hand, one example at a
time, whatever the checkpoint's label order; and the measured sparsity of a model."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import tiny_model
from datasets import Dataset
from transformers import BertTokenizerFast

from hf_srnets.data.tasks import get_task
from hf_srnets.difficulty import example_losses, load_scoring_model, measured_sparsity

WORDS = [f"w{i}" for i in range(90)]
TASK_ORDER = ("entailment", "neutral", "contradiction")  # MNLI's
MODEL_ORDER = ("contradiction", "entailment", "neutral")  # a checkpoint fine-tuned elsewhere


def word_tokenizer() -> BertTokenizerFast:
    return BertTokenizerFast(vocab={w: i for i, w in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS])})


def save_classifier(path, order=MODEL_ORDER, seed=0):
    model = tiny_model("bert", num_labels=3, seed=seed)
    model.config.id2label = dict(enumerate(order))
    model.config.label2id = {name: i for i, name in enumerate(order)}
    model.config.architectures = ["BertForSequenceClassification"]
    model.save_pretrained(path)
    word_tokenizer().save_pretrained(path)
    return model


def pairs(tokenizer, n=7) -> Dataset:
    rng = np.random.default_rng(0)
    rows = {"id": [], "label": [], "input_ids": [], "attention_mask": [], "token_type_ids": []}
    for i in range(n):
        premise = " ".join(rng.choice(WORDS, size=rng.integers(2, 9)))
        hypothesis = " ".join(rng.choice(WORDS, size=rng.integers(1, 5)))
        enc = tokenizer(premise, hypothesis)
        rows["id"].append(str(i))
        rows["label"].append(i % 3)
        for key in ("input_ids", "attention_mask", "token_type_ids"):
            rows[key].append(enc[key])
    return Dataset.from_dict(rows)


def by_hand(model, dataset):
    """Each example alone (no padding): the gold label's id in the model's order, F.cross_entropy, argmax."""
    losses, preds = [], []
    with torch.no_grad():
        for row in dataset:
            enc = {k: torch.tensor([row[k]]) for k in ("input_ids", "attention_mask", "token_type_ids")}
            logits = model.eval()(**enc).logits
            gold = MODEL_ORDER.index(TASK_ORDER[row["label"]])
            losses.append(F.cross_entropy(logits, torch.tensor([gold])).item())
            preds.append(TASK_ORDER.index(MODEL_ORDER[int(logits.argmax())]))
    return np.array(losses), np.array(preds)


@pytest.mark.parametrize("batch_size", [1, 3, 64])
def test_losses_equal_cross_entropy_by_hand_with_another_label_order(tmp_path, batch_size):
    model = save_classifier(tmp_path / "m")
    tokenizer = word_tokenizer()
    data = pairs(tokenizer)
    expected, expected_preds = by_hand(model, data)
    scores = example_losses(
        model, data, tokenizer, label_order=MODEL_ORDER, task_labels=TASK_ORDER, batch_size=batch_size
    )
    assert scores.losses == pytest.approx(expected, abs=1e-5)
    assert scores.predictions.tolist() == expected_preds.tolist()
    accuracy = np.mean(expected_preds == np.array(data["label"]))
    assert scores.summary(np.array(data["label"]))["accuracy"] == pytest.approx(accuracy)
    # without aligning the order the losses are other numbers: the alignment is what the test checks
    plain = example_losses(model, data, tokenizer, batch_size=batch_size)
    assert not np.allclose(plain.losses, expected, atol=1e-3)


def test_a_saved_checkpoint_is_loaded_with_its_label_order(tmp_path):
    model = save_classifier(tmp_path / "m")
    loaded, tokenizer, order = load_scoring_model(str(tmp_path / "m"), get_task("mnli"))
    assert order == MODEL_ORDER and tokenizer.get_vocab() == word_tokenizer().get_vocab()
    data = pairs(tokenizer)
    scores = example_losses(loaded, data, tokenizer, label_order=order, task_labels=get_task("mnli").label_names)
    assert scores.losses == pytest.approx(by_hand(model, data)[0], abs=1e-5)


def test_unlabelled_rows_are_refused(tmp_path):
    tokenizer = word_tokenizer()
    data = pairs(tokenizer).map(lambda row: {"label": -1})
    with pytest.raises(ValueError, match="unlabelled"):
        example_losses(tiny_model("bert"), data, tokenizer)


def test_measured_sparsity_from_the_run_or_the_weights(tmp_path):
    model = tiny_model("bert")
    with torch.no_grad():
        # 2 layers × (4 attention matrices 32×32 + 2 FFN 32×64) = 2 × (4096 + 4096) = 16384 weights
        model.bert.encoder.layer[0].attention.self.query.weight.zero_()  # 1024 of them
        model.classifier.weight.zero_()  # not an encoder layer: not counted
    sparsity, source = measured_sparsity(model, str(tmp_path))
    assert sparsity == pytest.approx(1024 / 16384) and source == "zero weights of the encoder's linear layers"
    (tmp_path / "all_results.json").write_text(json.dumps({"sparsity": 0.4}))
    assert measured_sparsity(model, str(tmp_path)) == (0.4, "all_results.json")
