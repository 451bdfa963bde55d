"""Two-way FEVER end to end on files in the published formats: bias model, PoE mask search, both symmetric sets.

Training and dev sets are TSV (`idx, evidence, claim, label`, NLI-style FEVER); the OOD sets are the
FEVER-Symmetric v0.1 (`claim`, `evidence_sentence`) and v0.2 (`evid` lists, `sentence1` = evidence) JSONL fixtures
read through `--data_dir` as the task's default OOD sets.
"""

import csv
import json
import os
import sys
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from hf_srnets.commands import bias_model as bias_model_cli
from hf_srnets.masking import SRNetModel

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
from test_checkpoint_labels_and_implied_training import _checkpoint

import run_glue_sparse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"
TWO_WAY = ["--task", "fever", "--task_labels", "SUPPORTS,REFUTES"]
SYMMETRIC = {
    "fever_symmetric_v1": "fever_symmetric_generated.jsonl",
    "fever_symmetric_v2": "fever_symmetric_test.jsonl",
}


def _training_tsv(path: Path, copies: int = 8) -> str:
    """An NLI-style FEVER TSV (the fixture's format) built from the fixture claims, each pair `copies` times."""
    rows = []
    for name in ("fever.train.jsonl", "fever.dev.jsonl"):
        rows += [json.loads(line) for line in (FIXTURES / "fever" / name).read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["gold_label"] in ("SUPPORTS", "REFUTES")]
    with open(path, "w", newline="") as f:
        writer = csv.writer(f, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar="\\")
        writer.writerow(["idx", "evidence", "claim", "label"])
        for k in range(copies):
            for i, row in enumerate(rows):
                writer.writerow([f"{k}-{i}", row["evidence"], row["claim"], row["gold_label"]])
    return str(path)


@pytest.mark.slow
def test_two_way_fever_bias_model_search_and_both_symmetric_sets(minilm, tmp_path):
    train = _training_tsv(tmp_path / "train.tsv")
    dev = str(FIXTURES / "fever" / "fever_nli_dev.tsv")
    bias = tmp_path / "bias"
    symmetric = [f"{name}={FIXTURES / 'fever' / file}" for name, file in SYMMETRIC.items()]
    bias_model_cli.main(
        [*TWO_WAY, "--train_file", train, "--ood_file", f"dev={dev}", *symmetric, "--output_dir", str(bias)]
    )
    report = json.loads((bias / "bias_report.json").read_text())
    assert report["label_names"] == ["SUPPORTS", "REFUTES"]
    assert {"fever_symmetric_v1", "fever_symmetric_v2"} <= set(report["splits"])

    model = _checkpoint(minilm, tmp_path / "ckpt", {0: "REFUTES", 1: "SUPPORTS"})  # its own label order
    out = tmp_path / "srnet"
    results = run_glue_sparse.main(
        [*TWO_WAY, "--model_name_or_path", model, "--data_dir", str(FIXTURES), "--train_file", train]
        + ["--validation_file", dev, "--pruning", "mask", "--loss", "poe", "--sparsity", "0.5"]
        + ["--bias_predictions", str(bias / "bias_train.jsonl"), "--threshold_update_interval", "1"]
        + ["--per_device_train_batch_size", "16", "--num_train_epochs", "1", "--logging_steps", "1"]
        + ["--output_dir", str(out)]
        + ["--report_to", "none", "--save_strategy", "no", "--disable_tqdm", "true", "--use_cpu", "true"]
    )
    saved = json.loads((out / "all_results.json").read_text())
    for key in ("eval_fever_accuracy", "eval_fever_symmetric_v1_accuracy", "eval_fever_symmetric_v2_accuracy"):
        assert saved[key] == results[key]
    assert saved["sparsity"] == pytest.approx(0.5, abs=1e-3)
    assert (out / "srnet_masks.safetensors").is_file()
    log = json.loads((out / "trainer_state.json").read_text())["log_history"]
    assert [e for e in log if "loss" in e] and all("loss_poe" in e for e in log if "loss" in e)
    # the reported dev and v1 accuracies are the saved SRNet's, recomputed by hand on the files, the model's own
    # label order (REFUTES, SUPPORTS) mapped by name
    base = AutoModelForSequenceClassification.from_pretrained(model)
    merged = SRNetModel.from_pretrained(base, out).merge_and_unload().eval()
    tokenizer = AutoTokenizer.from_pretrained(model)
    with open(dev, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    pairs = [(r["evidence"], r["claim"], r["label"]) for r in rows]
    assert saved["eval_fever_accuracy"] == pytest.approx(accuracy_by_name(merged, tokenizer, pairs))
    v1 = [json.loads(line) for line in (FIXTURES / "fever" / SYMMETRIC["fever_symmetric_v1"]).read_text().splitlines()]
    pairs = [(r["evidence_sentence"], r["claim"], r["label"]) for r in v1 if r]
    assert saved["eval_fever_symmetric_v1_accuracy"] == pytest.approx(accuracy_by_name(merged, tokenizer, pairs))


def accuracy_by_name(model, tokenizer, pairs) -> float:
    """Share of (evidence, claim, gold label name) pairs whose arg-max label name (the model's id2label) is gold."""
    batch = tokenizer([p[0] for p in pairs], [p[1] for p in pairs], padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        predicted = model(**batch).logits.argmax(-1).tolist()
    return sum(model.config.id2label[i] == gold for i, (_, _, gold) in zip(predicted, pairs)) / len(pairs)
