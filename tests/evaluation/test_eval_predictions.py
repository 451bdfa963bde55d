"""Per-example prediction files of a run's evaluation sets: rows, HANS collapsing, reading back, pairing runs, and
one short run whose files reproduce the accuracies it reports."""

from __future__ import annotations

import csv
import json
import os
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from datasets import Dataset

from hf_srnets.data.tasks import get_task
from hf_srnets.evaluation.eval_predictions import (
    align,
    prediction_rows,
    predictions_path,
    read_eval_predictions,
    write_eval_predictions,
)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "scripts"))

NLI = ("entailment", "neutral", "contradiction")


def test_rows_name_gold_and_predicted_labels_in_dataset_order() -> None:
    dataset = Dataset.from_dict({"id": ["a", "b", "c"], "label": [2, 0, 1]})
    logits = np.array([[0.1, 0.2, 0.9], [0.3, 0.9, 0.0], [0.0, 0.1, 0.2]])
    rows = prediction_rows(dataset, logits, NLI, NLI)
    assert [{k: v for k, v in r.items() if k != "probabilities"} for r in rows] == [
        {"index": 0, "id": "a", "label": "contradiction", "prediction": "contradiction"},
        {"index": 1, "id": "b", "label": "entailment", "prediction": "neutral"},
        {"index": 2, "id": "c", "label": "neutral", "prediction": "contradiction"},
    ]
    # softmax of (0.1, 0.2, 0.9): e^0.1 = 1.10517, e^0.2 = 1.22140, e^0.9 = 2.45960, sum 4.78617
    assert rows[0]["probabilities"] == {"entailment": 0.2309, "neutral": 0.2552, "contradiction": 0.5139}
    # softmax of (0.0, 0.1, 0.2): 1, 1.10517, 1.22140 over 3.32657
    assert rows[2]["probabilities"] == {"entailment": 0.3006, "neutral": 0.3322, "contradiction": 0.3672}


def test_a_hans_set_gets_collapsed_predictions_and_a_set_without_ids_its_indices() -> None:
    dataset = Dataset.from_dict({"label": [0, 1, 1]})  # HANS ids: 0 entailment, 1 non-entailment
    logits = np.array([[0.9, 0.0, 0.0], [0.0, 0.9, 0.0], [0.0, 0.0, 0.9]])
    rows = prediction_rows(dataset, logits, NLI, ("entailment", "non-entailment"))
    assert [(r["label"], r["prediction"]) for r in rows] == [
        ("entailment", "entailment"),
        ("non-entailment", "non-entailment"),
        ("non-entailment", "non-entailment"),
    ]
    assert all("id" not in r for r in rows)
    # the probabilities stay in the model's 3 labels: softmax of (0.9, 0, 0) = e^0.9 / (e^0.9 + 2) = 0.5515
    assert rows[0]["probabilities"] == {"entailment": 0.5515, "neutral": 0.2242, "contradiction": 0.2242}


def test_a_set_in_other_labels_is_refused() -> None:
    with pytest.raises(ValueError, match="no mapping"):
        prediction_rows(Dataset.from_dict({"label": [0]}), np.array([[1.0, 0.0]]), ("pos", "neg"), ("a", "b"))


def test_written_files_read_back_and_stale_files_go(tmp_path) -> None:
    task = get_task("mnli")
    stale = tmp_path / "eval_predictions" / "old_set.jsonl"
    stale.parent.mkdir()
    stale.write_text("{}\n")
    validation = Dataset.from_dict({"id": ["x", "y"], "label": [0, 2]})
    hans_set = next(s for s in task.ood if s.kind == "hans")
    hans = Dataset.from_dict({"id": ["h1"], "label": [1]})
    outputs = {
        "eval_mnli": SimpleNamespace(predictions=(np.array([[2.0, 0, 0], [0, 0, 2.0]]), np.zeros((2, 4)))),
        f"eval_{hans_set.name}": SimpleNamespace(predictions=np.array([[0.0, 1.0, 0.0]])),
    }
    written = write_eval_predictions(str(tmp_path), outputs, task, "mnli", validation, [(hans_set, hans)])
    assert written == [predictions_path(tmp_path, "mnli"), predictions_path(tmp_path, hans_set.name)]
    assert not stale.exists()
    mnli = read_eval_predictions(predictions_path(tmp_path, "mnli"))
    assert (mnli.keys, mnli.labels, mnli.predictions) == (("x", "y"), NLI[::2], NLI[::2])
    assert mnli.correct.tolist() == [1.0, 1.0]
    assert read_eval_predictions(predictions_path(tmp_path, hans_set.name)).predictions == ("non-entailment",)
    # no output for a set: no file
    assert write_eval_predictions(str(tmp_path), {}, task, "mnli", validation, []) == []


def _write(path, rows) -> str:
    with open(path, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    return str(path)


def test_align_pairs_runs_by_example_id_whatever_their_order(tmp_path) -> None:
    one = _write(tmp_path / "1.jsonl", [
        {"index": 0, "id": "a", "label": "pos", "prediction": "pos"},
        {"index": 1, "id": "b", "label": "neg", "prediction": "pos"},
    ])  # fmt: skip
    two = _write(tmp_path / "2.jsonl", [
        {"index": 0, "id": "b", "label": "neg", "prediction": "neg"},
        {"index": 1, "id": "a", "label": "pos", "prediction": "neg"},
    ])  # fmt: skip
    labels, predicted, names = align([read_eval_predictions(one), read_eval_predictions(two)])
    assert names == ["neg", "pos"]
    assert labels.tolist() == [1, 0]  # a: pos, b: neg
    assert predicted.tolist() == [[1, 1], [0, 0]]  # run 2: a -> neg, b -> neg


def test_align_maps_each_runs_own_predicted_names_into_the_names_of_all_runs(tmp_path) -> None:
    gold = [("a", "pos"), ("b", "neg"), ("c", "pos")]
    runs = [
        [{"index": i, "id": key, "label": label, "prediction": predicted} for i, ((key, label), predicted) in
         enumerate(zip(gold, predictions))]
        for predictions in (["pos", "pos", "pos"], ["neutral", "neg", "pos"], ["neg", "neutral", "neutral"])
    ]  # fmt: skip
    read = [read_eval_predictions(_write(tmp_path / f"{r}.jsonl", rows)) for r, rows in enumerate(runs)]
    labels, predicted, names = align(read)
    assert names == ["neg", "neutral", "pos"]  # sorted: gold and predicted names of every run
    assert labels.tolist() == [2, 0, 2]
    assert predicted.tolist() == [[2, 2, 2], [1, 0, 2], [0, 1, 1]]
    labels, predicted, names = align(read[:1])  # the first run alone: its names only
    assert (names, labels.tolist(), predicted.tolist()) == (["neg", "pos"], [1, 0, 1], [[1, 1, 1]])


def test_a_line_that_is_not_one_example_is_named_by_its_line_in_the_file(tmp_path) -> None:
    from hf_srnets.errors import InputError

    row = {"index": 0, "id": "a", "label": "pos", "prediction": "pos"}
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(row) + "\n\n" + json.dumps({"index": 1, "label": "neg"}) + "\n")
    with pytest.raises(InputError, match=r"p\.jsonl:3: expected \{'index', 'id', 'label', 'prediction'\}"):
        read_eval_predictions(path)
    two = tmp_path / "two.jsonl"  # two rows on one line: valid JSON only when the lines are joined
    two.write_text(json.dumps(row) + ", " + json.dumps({**row, "index": 1, "id": "b"}) + "\n")
    with pytest.raises(InputError, match=r"two\.jsonl are cut or damaged \(Extra data"):
        read_eval_predictions(two)


def test_a_file_is_parsed_once_and_again_when_it_changes(tmp_path) -> None:
    rows = [{"index": 0, "id": "a", "label": "pos", "prediction": "pos"}]
    path = _write(tmp_path / "p.jsonl", rows)
    first = read_eval_predictions(path)
    assert read_eval_predictions(str(path)) is first  # unchanged: the same parsed object
    _write(path, [{**rows[0], "prediction": "neg"}])  # same size, a later modification time
    os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 1_000_000))
    assert read_eval_predictions(path).predictions == ("neg",)
    _write(path, [*rows, {"index": 1, "id": "b", "label": "neg", "prediction": "neg"}])
    assert read_eval_predictions(path).keys == ("a", "b")


def test_an_experiments_files_stay_parsed_and_share_their_keys(tmp_path) -> None:
    """A report reads each run's file once per table: the 375 files of cue_minilm_mnli (75 runs x 5 sets) must all
    stay parsed between two tables (a cache of 128 files parsed them 3,270 times, 76 of the report's 97 s), and the
    runs on one set share its keys and gold labels instead of holding a copy each."""
    rows = [{"index": i, "id": f"e{i}", "label": "pos", "prediction": "neg"} for i in range(3)]
    paths = [_write(tmp_path / f"run{r}.jsonl", rows) for r in range(400)]
    first = [read_eval_predictions(path) for path in paths]
    assert all(read_eval_predictions(path) is parsed for path, parsed in zip(paths, first))
    assert first[0].keys is first[-1].keys and first[0].labels is first[-1].labels
    assert first[0].keys == ("e0", "e1", "e2") and first[-1].predictions == ("neg",) * 3


def test_align_refuses_runs_on_different_examples_or_gold_labels(tmp_path) -> None:
    base = read_eval_predictions(
        _write(tmp_path / "b.jsonl", [{"index": 0, "id": "a", "label": "pos", "prediction": "pos"}])
    )
    other = read_eval_predictions(
        _write(tmp_path / "o.jsonl", [{"index": 0, "id": "z", "label": "pos", "prediction": "pos"}])
    )
    relabelled = read_eval_predictions(
        _write(tmp_path / "r.jsonl", [{"index": 0, "id": "a", "label": "neg", "prediction": "pos"}])
    )
    with pytest.raises(ValueError, match="different examples"):
        align([base, other])
    with pytest.raises(ValueError, match="different gold labels"):
        align([base, relabelled])


def test_a_run_leaves_files_that_reproduce_its_accuracies(minilm, data_dir, tmp_path) -> None:
    """A tiny classifier in its own label order (contradiction, neutral, entailment), evaluated length-sorted:
    the files hold the dev set's ids and gold labels as the TSV gives them, in its order, and their share of
    correct rows is the accuracy the run reports on MNLI and HANS."""
    from test_checkpoint_labels_and_implied_training import OWN_ORDER, _args, _checkpoint

    import run_glue_sparse

    model = _checkpoint(minilm, tmp_path / "ckpt", OWN_ORDER)
    out = tmp_path / "out"
    results = run_glue_sparse.main(_args(model, data_dir, out, "--num_train_epochs", "0.5"))
    mnli = read_eval_predictions(out / "eval_predictions" / "mnli.jsonl")
    with open(data_dir / "mnli" / "dev_matched.tsv") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[:60]
    assert list(mnli.labels) == [r["label"] for r in rows]
    assert len(set(mnli.keys)) == 60
    assert mnli.correct.mean() == pytest.approx(results["eval_mnli_accuracy"])
    hans = read_eval_predictions(out / "eval_predictions" / "hans.jsonl")
    assert len(hans.keys) == results["eval_hans_examples"]
    assert set(hans.labels) <= {"entailment", "non-entailment"} and set(hans.predictions) <= set(hans.labels)
    assert hans.correct.mean() == pytest.approx(results["eval_hans_accuracy"])


def test_a_missing_or_cut_committed_file_is_one_error_naming_it(tmp_path) -> None:
    # issue 50: report --check met a FileNotFoundError on a path that no results folder holds, and an EOFError
    from hf_srnets.errors import InputError, MissingInputError
    from hf_srnets.experiments.per_example import RUN_RECORD, load_records, write_json, write_set
    from hf_srnets.experiments.sweep_summary import predictions_file

    rows = [{"id": str(i), "label": "entailment", "prediction": "entailment"} for i in range(200)]
    for seed in (0, 1):
        folder = tmp_path / "per_example" / "ce" / "s0.5" / f"seed{seed}"
        write_set(rows, str(folder / "mnli.jsonl.gz"))
        write_json({"method": "ce", "sparsity": 0.5, "seed": seed, "results": {}}, str(folder / RUN_RECORD))
    missing = tmp_path / "per_example" / "ce" / "s0.5" / "seed1" / "mnli.jsonl.gz"
    cut = tmp_path / "per_example" / "ce" / "s0.5" / "seed0" / "mnli.jsonl.gz"
    missing.unlink()
    cut.write_bytes(cut.read_bytes()[: cut.stat().st_size // 2])
    files = [predictions_file(record, "mnli") for record in load_records(str(tmp_path))]
    assert files == [str(cut), str(missing)]  # the missing file is named where it belongs
    with pytest.raises(MissingInputError, match=rf"^per-example predictions {missing} not found: restore the file"):
        read_eval_predictions(files[1])
    with pytest.raises(InputError, match=rf"^per-example predictions {cut} are cut or damaged \(Compressed file"):
        read_eval_predictions(files[0])


def test_runs_that_do_not_line_up_because_a_file_repeats_an_id_name_the_id(tmp_path) -> None:
    """Issue 70 (old corner): a file with one id on two rows is keyed by position; with the other run's rows in
    another order the runs do not line up, and the error said "different gold labels". It names the duplicate id."""
    rows = [
        {"index": 0, "id": "a", "label": "pos", "prediction": "pos"},
        {"index": 1, "id": "b", "label": "neg", "prediction": "pos"},
        {"index": 2, "id": "c", "label": "neg", "prediction": "neg"},
    ]
    repeated = [rows[0], {**rows[1], "id": "a"}, rows[2]]  # ids a, a, c
    reordered = [rows[2], rows[0], rows[1]]
    one = read_eval_predictions(_write(tmp_path / "1.jsonl", [{**r, "index": i} for i, r in enumerate(repeated)]))
    two = read_eval_predictions(_write(tmp_path / "2.jsonl", [{**r, "index": i} for i, r in enumerate(reordered)]))
    assert one.duplicate_id == "a" and two.duplicate_id is None
    with pytest.raises(
        ValueError, match=r"has the id 'a' on two rows, so its rows are paired by position, and the runs"
    ):
        align([one, two])
