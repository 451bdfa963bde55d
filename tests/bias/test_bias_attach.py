"""attach_probabilities: the p_b cache is keyed by the data, not the folder; the task's bias model is fitted
when no predictions are given; --extra_train rows get p_b too. On real MNLI/HANS/SST-2 files in their published
formats (copied in part into tmp_path)."""

import json
import logging
import os
import re
from pathlib import Path

import numpy as np
import pytest

from hf_srnets.arguments.model_data_arguments import DataArguments
from hf_srnets.bias import compute_bias_predictions
from hf_srnets.data import BIAS_COLUMN, custom_task, get_task, load_file, read_predictions
from hf_srnets.data.splits import add_extra_training_data
from hf_srnets.runner.columns import attach_probabilities
from hf_srnets.runner.data import split_files
from hf_srnets.training.arguments import SRNetTrainingArguments

MNLI = get_task("mnli")


def head(src: Path, dst: Path, rows: int, skip: int = 0) -> str:
    """The header and `rows` data lines (after `skip`) of a published TSV, every column kept."""
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    dst.write_text(lines[0] + "".join(lines[1 + skip : 1 + skip + rows]), encoding="utf-8")
    return str(dst)


def mnli(path: str):
    return load_file(path, MNLI.label_names, aliases=MNLI.label_aliases)


def run_args(out: Path, loss: str = "poe") -> SRNetTrainingArguments:
    return SRNetTrainingArguments(output_dir=str(out), loss=loss, seed=42, report_to=[])


def probs(dataset) -> np.ndarray:
    return np.asarray(dataset[BIAS_COLUMN])


@pytest.fixture
def two_files(data_dir, tmp_path):
    """File A (MNLI dev_matched rows) and file B (other dev_mismatched rows under the same ids)."""
    a = mnli(head(data_dir / "mnli" / "dev_matched.tsv", tmp_path / "a.tsv", 400))
    b = mnli(head(data_dir / "mnli" / "dev_mismatched.tsv", tmp_path / "b.tsv", 400))
    b = b.remove_columns("id").add_column("id", a["id"])
    return a, b


def test_reused_output_dir_refits_on_other_data_and_says_so(two_files, tmp_path):
    a, b = two_files
    out, data_args = tmp_path / "run", DataArguments(task="mnli", bias_model="overlap")
    _, desc_a = attach_probabilities(a, a, MNLI, data_args, run_args(out), {})
    with_b, desc_b = attach_probabilities(b, b, MNLI, data_args, run_args(out), {})
    fresh, _ = compute_bias_predictions(MNLI, b, {}, cache_dir=str(tmp_path / "fresh"), seed=42)
    np.testing.assert_allclose(probs(with_b), [fresh["train"][i] for i in b["id"]], atol=1e-9)
    assert "fitted in this run" in desc_a and "fitted in this run" in desc_b and desc_b != desc_a
    # the same data again is loaded from its cache entry, and the description says so
    again, desc_again = attach_probabilities(b, b, MNLI, data_args, run_args(out), {})
    np.testing.assert_array_equal(probs(again), probs(with_b))
    assert "loaded from the cache" in desc_again and desc_b.split("`")[1] in desc_again  # same key
    entries = sorted(p.name for p in (out / "bias_model").iterdir() if p.is_dir())
    assert len(entries) == 2 and not [p for p in (out / "bias_model").iterdir() if p.name.startswith(".")]
    report = json.loads((out / "bias_model" / desc_b.split("`")[1] / "bias_report.json").read_text())
    assert report["cache"]["key"] == desc_b.split("`")[1] and report["cache"]["splits"] == {"train": 400}


def test_cache_key_covers_labels_seed_and_predicted_splits(two_files, tmp_path):
    a, b = two_files
    out, data_args = tmp_path / "run", DataArguments(task="mnli", bias_model="overlap")
    _, first = attach_probabilities(a, a, MNLI, data_args, run_args(out), {})
    relabelled = a.map(lambda r: {"label": (r["label"] + 1) % 3})
    _, other_labels = attach_probabilities(relabelled, relabelled, MNLI, data_args, run_args(out), {})
    other_seed_args = run_args(out)
    other_seed_args.seed = 7
    _, other_seed = attach_probabilities(a, a, MNLI, data_args, other_seed_args, {})
    _, other_splits = attach_probabilities(a, a, MNLI, data_args, run_args(out), {"validation": b})
    keys = [d.split("`")[1] for d in (first, other_labels, other_seed, other_splits)]
    assert len(set(keys)) == 4 and all("fitted in this run" in d for d in (other_labels, other_seed, other_splits))


def test_poe_without_bias_flags_fits_the_tasks_bias_model(two_files, tmp_path):
    a, _ = two_files
    data_args = DataArguments(task="mnli")  # no --bias_model, no --bias_predictions
    train, desc = attach_probabilities(a, a, MNLI, data_args, run_args(tmp_path / "run", "reweight"), {})
    assert desc.startswith("overlap features") and "fitted in this run on 400 training rows" in desc
    pattern = r"on the training set: accuracy 0\.\d{3}, mean p_b of the gold label 0\.\d{3} \(uniform: 0\.333\)"
    assert re.search(pattern, desc)
    np.testing.assert_allclose(probs(train).sum(axis=1), 1.0, atol=1e-6)


def test_custom_single_text_task_fits_the_claim_only_model(data_dir, tmp_path, caplog):
    # SST-2 as published (sentence, label 0/1; no id, no second text): the overlap model cannot apply
    task = custom_task(["negative", "positive"])
    sst2 = load_file(
        head(data_dir / "sst2" / "sst2_train_part1_alps_train.tsv", tmp_path / "sst2.tsv", 300),
        ("negative", "positive"),
    )
    train, desc = attach_probabilities(sst2, sst2, task, DataArguments(task="custom"), run_args(tmp_path / "run"), {})
    assert desc.startswith("claim features") and probs(train).shape == (300, 2)
    # labels that have nothing to do with the text: p_b is near uniform, and the card and the log say so
    rng = np.random.default_rng(0)
    shuffled = sst2.remove_columns("label").add_column("label", rng.permutation(sst2["label"]).tolist())
    args = run_args(tmp_path / "run")
    with caplog.at_level(logging.WARNING, logger="hf_srnets.bias"):
        _, noise_desc = attach_probabilities(shuffled, shuffled, task, DataArguments(task="custom"), args, {})
    assert "near uniform: this loss then differs little from cross-entropy" in noise_desc
    assert any("near uniform" in r.getMessage() and "PoE" in r.getMessage() for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="hf_srnets.bias"):  # loaded from the cache: warned again
        _, cached_desc = attach_probabilities(shuffled, shuffled, task, DataArguments(task="custom"), args, {})
    assert "loaded from the cache" in cached_desc and "near uniform" in cached_desc
    assert any("near uniform" in r.getMessage() for r in caplog.records)


@pytest.fixture
def with_hans(data_dir, tmp_path):
    """MNLI rows plus HANS training pairs (published heuristics_train_set.tsv format), the HANS set twice."""
    mnli_tsv = head(data_dir / "mnli" / "dev_matched.tsv", tmp_path / "mnli.tsv", 600)
    hans_tsv = head(data_dir / "hans" / "heuristics_train_set.tsv", tmp_path / "hans_train.tsv", 200, skip=4000)
    full = mnli(mnli_tsv)
    data_args = DataArguments(task="mnli", train_file=mnli_tsv, extra_train=[f"hans_train={hans_tsv}x2"])
    train = full.select(range(500))  # --max_train_samples 500
    train = add_extra_training_data(train, MNLI, data_args.extra_train, split_files(data_args), [])
    return full, train, data_args, hans_tsv


def test_extra_training_rows_get_the_bias_models_predictions(with_hans, tmp_path):
    full, train, data_args, hans_tsv = with_hans
    data_args.max_train_samples = 500
    out = tmp_path / "run"
    joined, desc = attach_probabilities(train, full, MNLI, data_args, run_args(out), {})
    assert len(joined) == 500 + 2 * 200 and "hans_train" in desc
    p = probs(joined)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-6)
    # the extra rows' p_b is the ID-trained bias model's prediction for the HANS pair, the same for both copies
    hans = load_file(hans_tsv, MNLI.label_names, aliases={"non-entailment": "contradiction"})
    key = desc.split("`")[1]
    fitted = read_predictions(out / "bias_model" / key / "bias_extra_hans_train.jsonl", 3)
    assert sorted(fitted) == sorted(hans["id"])
    ids = joined["id"]
    for k in (0, 1):
        rows = [i for i, row_id in enumerate(ids) if row_id.startswith(f"hans_train#{k}:")]
        np.testing.assert_allclose(p[rows], [fitted[i] for i in hans["id"]], atol=1e-9)
    # the ID rows keep the predictions of the model fitted on the full MNLI training set
    own = read_predictions(out / "bias_model" / key / "bias_train.jsonl", 3)
    assert len(own) == 600
    np.testing.assert_allclose(p[:500], [own[i] for i in ids[:500]], atol=1e-9)
    # HANS pairs overlap fully: the overlap bias model calls most of them entailment
    assert (p[500:, 0] > 0.5).mean() > 0.8


def test_extra_training_rows_join_a_users_bias_file_by_their_own_id(with_hans, tmp_path):
    full, train, data_args, hans_tsv = with_hans
    data_args.max_train_samples = 500
    bias_dir = tmp_path / "bias"
    bias_dir.mkdir()
    own = {i: [0.5, 0.25, 0.25] for i in full["id"]}
    hans = load_file(hans_tsv, ("entailment", "non-entailment"), aliases=MNLI.label_aliases)
    (bias_dir / "bias_train.jsonl").write_text(
        "".join(json.dumps({"id": i, "probs": p}) + "\n" for i, p in own.items())
    )
    data_args.bias_predictions = str(bias_dir / "bias_train.jsonl")
    with pytest.raises(
        ValueError, match=r"hans_train.*no p_b for its rows.*bias_hans_train\.jsonl.*--ood_file hans_train="
    ):
        attach_probabilities(train, full, MNLI, data_args, run_args(tmp_path / "run"), {})
    users = {i: [0.1 + (j % 7) / 10, 0.2, 0.7 - (j % 7) / 10] for j, i in enumerate(hans["id"])}
    lines = [json.dumps({"id": i, "probs": p}) + "\n" for i, p in users.items()]
    (bias_dir / "bias_hans_train.jsonl").write_text("".join(lines))
    joined, desc = attach_probabilities(train, full, MNLI, data_args, run_args(tmp_path / "run"), {})
    p = probs(joined)
    np.testing.assert_allclose(p[:500], np.tile([0.5, 0.25, 0.25], (500, 1)))
    np.testing.assert_allclose(p[500:], [users[i] for i in hans["id"]] * 2)  # by each row's id in the HANS file
    assert "bias_hans_train.jsonl" in desc
    (bias_dir / "bias_hans_train.jsonl").write_text("".join(lines[:-1]))
    with pytest.raises(ValueError, match=r"bias_hans_train\.jsonl: no prediction for 2 rows of the extra training set"):
        attach_probabilities(train, full, MNLI, data_args, run_args(tmp_path / "run"), {})


def test_cache_entries_appear_complete_or_not_at_all(tmp_path):
    from hf_srnets.bias.cache import load_cached, save_cached

    predictions = {"train": {"a": [0.25, 0.75], "b": [0.5, 0.5]}, "dev": {"c": [1.0, 0.0]}}
    report = {"splits": {"train": {}, "dev": {}}, "cache": {"key": "k1"}}
    root = tmp_path / "bias_model"
    (root / "k1").mkdir(parents=True)
    (root / "k1" / "bias_train.jsonl").write_text('{"id": "a", "probs": [0.2')  # a torn write, no report
    assert load_cached(str(root), "k1") is None
    files = save_cached(str(root), "k1", predictions, report)
    assert sorted(p.name for p in root.iterdir()) == ["k1"]  # no temporary folder left
    loaded_files, loaded = load_cached(str(root), "k1")
    assert loaded_files == files and loaded["files"] == files  # the report names the entry's own files
    assert read_predictions(files["train"], 2) == predictions["train"]
    # a second writer of the same key (a concurrent run) keeps the complete entry
    assert save_cached(str(root), "k1", {**predictions, "train": {"a": [0.0, 1.0], "b": [0.5, 0.5]}}, report) == files
    assert read_predictions(files["train"], 2) == predictions["train"]
    # a report with another key is not trusted
    assert load_cached(str(root), "k2") is None


def test_saved_predictions_and_cache_entries_are_readable_like_other_outputs(tmp_path):
    """Atomic writes must not leave the 0600/0700 modes of temporary files on what they publish."""
    from hf_srnets.bias import save_bias_predictions
    from hf_srnets.bias.cache import save_cached

    umask = os.umask(0o022)
    try:
        save_bias_predictions(str(tmp_path / "out"), {"train": {"a": [0.5, 0.5]}}, {"splits": {}})
        entry = save_cached(str(tmp_path / "cache"), "k1", {"train": {"a": [0.5, 0.5]}}, {"splits": {}})
    finally:
        os.umask(umask)
    assert os.stat(tmp_path / "out" / "bias_report.json").st_mode & 0o777 == 0o644
    assert os.stat(os.path.dirname(entry["train"])).st_mode & 0o777 == 0o755


def test_extra_rows_refuse_p_b_made_on_another_file_with_their_ids(data_dir, tmp_path):
    """`--extra_train mm=<dev-mismatched rows>` with `bias_mm.jsonl` that run_bias_model.py wrote for dev-matched rows
    under the same ids (MNLI's idx 0..99) is refused, naming that file; made on the extra rows themselves, it joins."""
    from hf_srnets.commands import bias_model as bias_model_cli

    train_tsv = head(data_dir / "mnli" / "dev_matched.tsv", tmp_path / "train.tsv", 300, skip=300)  # ids 300..599
    wrong = head(data_dir / "mnli" / "dev_matched.tsv", tmp_path / "matched.tsv", 100)  # ids 0..99
    right = head(data_dir / "mnli" / "dev_mismatched.tsv", tmp_path / "mismatched.tsv", 100)  # ids 0..99 too
    full, extra_rows = mnli(train_tsv), mnli(right)
    pairs = [list(zip(d["sentence1"], d["sentence2"])) for d in (mnli(wrong), extra_rows)]
    differ = sum(a != b for a, b in zip(*pairs))  # rows whose texts differ under the same id
    data_args = DataArguments(task="mnli", train_file=train_tsv, extra_train=[f"mm={right}"])
    train = add_extra_training_data(full, MNLI, data_args.extra_train, split_files(data_args), [])
    for ood, out in ((wrong, "wrong_bias"), (right, "right_bias")):
        argv = ["--task", "mnli", "--train_file", train_tsv, "--ood_file", f"mm={ood}", "--output_dir"]
        bias_model_cli.main([*argv, str(tmp_path / out)])
    data_args.bias_predictions = str(tmp_path / "wrong_bias" / "bias_train.jsonl")
    with pytest.raises(
        ValueError,
        match=rf"wrong_bias/bias_mm\.jsonl: {differ} of the 100 rows joined by id were made on other texts than this "
        r"run's data \(text_digest differs\), first id '0' .*run_bias_model\.py",
    ):
        attach_probabilities(train, full, MNLI, data_args, run_args(tmp_path / "run"), {})
    data_args.bias_predictions = str(tmp_path / "right_bias" / "bias_train.jsonl")
    joined, desc = attach_probabilities(train, full, MNLI, data_args, run_args(tmp_path / "run"), {})
    p_mm = read_predictions(tmp_path / "right_bias" / "bias_mm.jsonl", 3)
    np.testing.assert_allclose(probs(joined)[300:], [p_mm[i] for i in extra_rows["id"]])
    assert "bias_mm.jsonl" in desc
