"""compute_bias_predictions, the report and run_bias_model.py on small synthetic data; bad-input errors."""

import csv
import json
import random
from pathlib import Path

import numpy as np
import pytest
from datasets import Dataset

from hf_srnets.arguments.bias_model_arguments import parse_ood_file
from hf_srnets.bias import compute_bias_predictions, format_report, save_bias_predictions, split_report, tokenize
from hf_srnets.commands import bias_model as bias_model_cli
from hf_srnets.data import BIAS_COLUMN, add_probability_column, get_task, read_predictions
from hf_srnets.resources.word_vectors import VectorsError

MNLI = get_task("mnli")
SUBJECTS = ["cat", "dog", "bird", "fish", "horse", "cow"]
VERBS = ["saw", "chased", "liked", "heard"]
OBJECTS = ["mouse", "ball", "tree", "car", "house"]


def synthetic_nli(n: int, seed: int, prefix: str) -> dict[str, list]:
    """Overlap decides the label: entailment = contiguous piece of the premise, contradiction = no overlap."""
    rng = random.Random(seed)
    rows: dict[str, list] = {"id": [], "sentence1": [], "sentence2": [], "label": []}
    for i in range(n):
        s, v, o = rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS)
        premise = f"The {s} {v} the {o} near the river."
        label = i % 3
        if label == 0:
            hypothesis = f"the {s} {v} the {o}"
        elif label == 1:
            hypothesis = f"The {s} {v} a small {rng.choice(OBJECTS)} yesterday."
        else:
            hypothesis = f"Nobody ever {rng.choice(VERBS)} any {rng.choice(OBJECTS)}!"
        rows["id"].append(f"{prefix}{i}")
        rows["sentence1"].append(premise)
        rows["sentence2"].append(hypothesis)
        rows["label"].append(label)
    return rows


def synthetic_hans(n: int) -> Dataset:
    """HANS-like: every hypothesis is made of premise words, half of them non-entailed (label 1)."""
    rows: dict[str, list] = {"id": [], "sentence1": [], "sentence2": [], "label": [], "heuristic": []}
    for i in range(n):
        a, b = SUBJECTS[i % len(SUBJECTS)], SUBJECTS[(i + 1) % len(SUBJECTS)]
        rows["id"].append(f"ex{i}")
        rows["sentence1"].append(f"The {a} saw the {b} .")
        rows["sentence2"].append(f"The {b} saw the {a} ." if i % 2 else f"The {a} saw the {b} .")
        rows["label"].append(i % 2)
        rows["heuristic"].append("lexical_overlap")
    return Dataset.from_dict(rows)


def glove_file(path: Path, *datasets: Dataset) -> str:
    """A GloVe-format text file with a random (seeded) 6-dim vector for every word of the datasets."""
    words = sorted(
        {
            w
            for ds in datasets
            for col in ("sentence1", "sentence2")
            if col in ds.column_names
            for text in ds[col]
            for w in tokenize(text)
        }
    )
    rng = np.random.default_rng(0)
    path.write_text("".join(f"{w} {' '.join(f'{x:.4f}' for x in rng.normal(size=6))}\n" for w in words))
    return str(path)


@pytest.fixture(scope="module")
def nli():
    train = Dataset.from_dict(synthetic_nli(90, 0, "t"))
    validation = Dataset.from_dict(synthetic_nli(30, 1, "v"))
    hans = synthetic_hans(20)
    return train, validation, hans


@pytest.fixture(scope="module")
def nli_result(nli, tmp_path_factory):
    train, validation, hans = nli
    tmp = tmp_path_factory.mktemp("nli")
    vectors = glove_file(tmp / "glove.txt", train, validation, hans)
    return compute_bias_predictions(
        MNLI, train, {"validation": validation, "hans": hans}, vectors=vectors, cache_dir=str(tmp / "cache"), seed=0
    )


def test_predictions_cover_every_split_and_sum_to_one(nli, nli_result):
    predictions, report = nli_result
    assert list(predictions) == ["train", "validation", "hans"]
    for name, ds in zip(predictions, nli, strict=True):
        assert list(predictions[name]) == list(ds["id"])
        probs = np.array(list(predictions[name].values()))
        assert probs.shape == (len(ds), 3)
        np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-9)
    json.dumps(report)  # JSON-serialisable
    assert report["vectors"]["kind"] == "glove" and report["vectors"]["coverage"] == 1.0
    assert report["features"]["kind"] == "overlap"
    assert report["splits"]["train"]["accuracy"] > 0.9  # overlap decides the synthetic labels
    assert report["splits"]["validation"]["accuracy"] > 0.9


def test_hans_split_is_collapsed_and_shows_the_bias(nli_result):
    _, report = nli_result
    hans = report["splits"]["hans"]
    assert hans["label_names"] == ["entailment", "non-entailment"]
    assert hans["collapsed"] == {"entailment": ["entailment"], "non-entailment": ["neutral", "contradiction"]}
    non_ent = hans["per_label"]["non-entailment"]
    assert non_ent["accuracy"] < 0.2 and non_ent["mean_prob"]["entailment"] > 0.7
    assert non_ent["predicted_fraction"]["entailment"] > 0.8
    assert set(hans["per_heuristic"]) == {"lexical_overlap"}
    text = format_report(report)
    assert "hans" in text and "lexical_ov/non-ent" in text and "neutral + contradiction -> non-entailment" in text


def test_deterministic(nli, nli_result, tmp_path):
    train, validation, hans = nli
    vectors = glove_file(tmp_path / "glove.txt", train, validation, hans)
    again, _ = compute_bias_predictions(
        MNLI, train, {"validation": validation, "hans": hans}, vectors=vectors, cache_dir=str(tmp_path), seed=0
    )
    assert again == nli_result[0]


def test_round_trip_through_files_into_dataset_columns(nli, nli_result, tmp_path):
    predictions, report = nli_result
    paths = save_bias_predictions(str(tmp_path), predictions, report)
    assert json.loads((tmp_path / "bias_report.json").read_text())["files"] == paths
    for name, ds in zip(predictions, nli, strict=True):
        read = read_predictions(paths[name], MNLI.num_labels)
        with_column = add_probability_column(ds, read, BIAS_COLUMN, source=paths[name])
        np.testing.assert_allclose(with_column[BIAS_COLUMN], [predictions[name][i] for i in ds["id"]])


def test_split_report_collapse_by_hand():
    # 3-way argmax then collapse: row 3 has P(ent) 0.4 < 0.5 but entailment is its argmax -> entailment.
    probs = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.4, 0.35, 0.25], [0.1, 0.1, 0.8]])
    rep = split_report(probs, [0, 1, 1, -1], MNLI.label_names, ("entailment", "non-entailment"))
    assert rep["num_labelled"] == 3 and rep["accuracy"] == pytest.approx(2 / 3)
    ne = rep["per_label"]["non-entailment"]
    assert ne["count"] == 2 and ne["accuracy"] == 0.5
    assert ne["predicted_fraction"] == {"entailment": 0.5, "non-entailment": 0.5}
    assert ne["mean_prob"] == pytest.approx({"entailment": 0.3, "non-entailment": 0.7})
    same = split_report(probs, [0, 1, 2, 2], MNLI.label_names)
    assert same["accuracy"] == 0.75 and "collapsed" not in same
    assert same["per_label"]["contradiction"]["predicted_fraction"] == {
        "entailment": 0.5,
        "neutral": 0.0,
        "contradiction": 0.5,
    }


def test_claim_features_for_fever_with_trained_vectors(tmp_path):
    fever = get_task("fever")
    rows: dict[str, list] = {"id": [], "sentence1": [], "label": []}
    for i in range(60):
        s, o = SUBJECTS[i % 6], OBJECTS[i % 5]
        claim, label = [(f"The {s} is a {o}.", 0), (f"The {s} is not a {o}.", 1), (f"The {s} may be a {o}.", 2)][i % 3]
        rows["id"].append(str(i))
        rows["sentence1"].append(claim)
        rows["label"].append(label)
    train = Dataset.from_dict(rows)
    predictions, report = compute_bias_predictions(fever, train, {}, vectors="train", cache_dir=str(tmp_path), seed=0)
    assert report["features"]["kind"] == "claim" and report["vectors"]["kind"] == "trained_fasttext"
    assert report["vectors"]["dim"] == 50 and report["vectors"]["cached"] is False
    probs = np.array(list(predictions["train"].values()))
    assert probs.shape == (60, 3)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert report["splits"]["train"]["accuracy"] > 0.9  # "not" / "may" are visible in the max-pooled vectors
    assert [p.name[:9] for p in tmp_path.iterdir()] == ["fasttext-"]


def _bad(nli, **changes):
    train, validation, _ = nli
    return train, {"validation": validation, **changes}


def test_bad_inputs_name_the_problem_and_fix(nli, tmp_path):
    train, validation, hans = nli
    cache = str(tmp_path)

    def run(train_set, splits, **kwargs):
        return compute_bias_predictions(MNLI, train_set, splits, cache_dir=cache, **kwargs)

    with pytest.raises(ValueError, match=r"'train'.*no 'sentence2' column.*sentence pairs"):
        run(train.remove_columns("sentence2"), {})
    raw = validation.rename_columns({"sentence1": "premise", "sentence2": "hypothesis"})
    with pytest.raises(ValueError, match=r"'validation' has no 'sentence1' text column.*rename"):
        run(train, {"validation": raw})
    dup = Dataset.from_dict({**validation.to_dict(), "id": ["same"] * len(validation)})
    with pytest.raises(ValueError, match=r"'validation' has duplicate id 'same'.*unique"):
        run(train, {"validation": dup})
    with pytest.raises(ValueError, match="'empty' has no rows"):
        run(train, {"empty": validation.select([])})
    with pytest.raises(ValueError, match="'train' is reserved"):
        run(train, {"train": validation})
    with pytest.raises(ValueError, match="no 'id' column"):
        run(train.remove_columns("id"), {})
    with pytest.raises(ValueError, match=r"no example of label\(s\) \[2\].*--max_train_samples"):
        run(train.filter(lambda r: r["label"] != 2), {})
    with pytest.raises(VectorsError, match="not found"):
        run(train, {}, vectors=str(tmp_path / "nope.vec"))
    unreadable = tmp_path / "bad.vec"
    unreadable.write_bytes(b"\x00\xff\xfe\x81")
    with pytest.raises(VectorsError, match="not UTF-8"):
        run(train, {}, vectors=str(unreadable))
    other = hans.cast_column("label", __import__("datasets").ClassLabel(names=["yes", "no"]))
    with pytest.raises(ValueError, match="labels \\['yes', 'no'\\] are neither"):
        run(train, {"odd": other})


# ---- run_bias_model.py -------------------------------------------------------------------------------------------


def load_script():
    """The package module `run_bias_model.py` runs."""
    return bias_model_cli


def write_tsv(path: Path, rows: dict[str, list], rename: dict[str, str], labels: list[str]) -> str:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar="\\")
        columns = list(rows)
        writer.writerow([rename.get(c, c) for c in columns])
        for i in range(len(rows["id"])):
            writer.writerow([labels[rows[c][i]] if c == "label" else rows[c][i] for c in columns])
    return str(path)


def test_script_writes_files_read_by_training(nli, tmp_path):
    train, validation, hans = nli
    nli_names = list(MNLI.label_names)
    rename = {"id": "pairID", "sentence1": "premise", "sentence2": "hypothesis", "label": "gold_label"}
    train_tsv = write_tsv(tmp_path / "train.tsv", train.to_dict(), rename, nli_names)
    dev_tsv = write_tsv(tmp_path / "dev.tsv", validation.to_dict(), rename, nli_names)
    hans_tsv = write_tsv(tmp_path / "hans.tsv", hans.to_dict(), rename, ["entailment", "non-entailment"])
    vectors = glove_file(tmp_path / "glove.txt", train, validation, hans)
    out = tmp_path / "out"
    report = load_script().main(
        [
            "--task",
            "mnli",
            "--train_file",
            train_tsv,
            "--predict_file",
            f"dev={dev_tsv}",
            "--predict_file",
            f"hans={hans_tsv}",
            "--vectors",
            vectors,
            "--output_dir",
            str(out),
            "--max_train_samples",
            "60",
        ]
    )
    assert sorted(p.name for p in out.iterdir() if p.is_file()) == [
        "bias_dev.jsonl",
        "bias_hans.jsonl",
        "bias_report.json",
        "bias_train.jsonl",
    ]
    assert len(read_predictions(out / "bias_train.jsonl", 3)) == 60
    assert len(read_predictions(out / "bias_hans.jsonl", 3)) == len(hans)
    saved = json.loads((out / "bias_report.json").read_text())
    assert saved["splits"]["hans"]["label_names"] == ["entailment", "non-entailment"]
    assert saved["splits"]["dev"]["num_examples"] == len(validation) and saved["vectors"]["kind"] == "glove"
    assert report["splits"]["train"]["num_examples"] == 60


def test_script_rejects_bad_predict_file(tmp_path):
    script = load_script()
    with pytest.raises(ValueError, match="expected NAME=PATH"):
        script.main(["--task", "mnli", "--output_dir", str(tmp_path), "--predict_file", "nopath"])
    with pytest.raises(ValueError, match="'train' is the training set"):
        parse_ood_file("train=x.tsv")
