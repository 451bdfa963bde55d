"""Bias/teacher probability columns: joined by id, validated with errors that name the file and the id."""

import json
import logging

import pytest
from datasets import Dataset

from hf_srnets.data import BIAS_COLUMN, add_probability_column, get_task, load_file, read_predictions, write_predictions
from hf_srnets.data.text_digests import dataset_digests, read_text_digests
from hf_srnets.errors import InputError


@pytest.fixture
def dataset():
    return Dataset.from_dict({"id": ["a", "b", "c"], "sentence1": ["x", "y", "z"], "label": [0, 1, 2]})


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_join_is_by_id_not_position(tmp_path, dataset):
    path = _write(
        tmp_path / "p.jsonl",
        [
            {"id": "c", "probs": [0.1, 0.1, 0.8]},
            {"id": "a", "probs": [0.8, 0.1, 0.1]},
            {"id": "b", "probs": [0.1, 0.8, 0.1]},
        ],
    )
    joined = add_probability_column(dataset, read_predictions(path, 3), BIAS_COLUMN, source=path)
    for row in joined:
        assert max(range(3), key=lambda k: row[BIAS_COLUMN][k]) == row["label"]


def test_write_then_read_round_trip(tmp_path, dataset):
    path = tmp_path / "out" / "p.jsonl"
    write_predictions(path, dataset["id"], [[0.2, 0.3, 0.5]] * 3)
    assert read_predictions(path, 3) == {i: [0.2, 0.3, 0.5] for i in "abc"}


@pytest.mark.parametrize(
    "rows, message",
    [
        ([{"id": "a", "probs": [0.5, 0.5]}], "2 probabilities, but the task has 3 labels"),
        ([{"id": "a", "probs": [0.5, 0.5, 0.5]}], "sum to 1.5"),
        ([{"id": "a", "probs": [float("nan"), 0.5, 0.5]}], "NaN"),
        ([{"id": "a", "probs": [1.5, -0.5, 0.0]}], "negative"),
        ([{"id": "a", "probs": [1, 0, 0]}, {"id": "a", "probs": [1, 0, 0]}], "duplicate id"),
        ([{"idx": "a", "p": [1, 0, 0]}], "expected"),
    ],
)
def test_bad_prediction_files(tmp_path, rows, message):
    path = _write(tmp_path / "bad.jsonl", rows)
    with pytest.raises(ValueError, match=message) as err:
        read_predictions(path, 3)
    assert "bad.jsonl" in str(err.value)


def test_missing_and_extra_ids(tmp_path, dataset):
    missing = _write(tmp_path / "missing.jsonl", [{"id": "a", "probs": [1, 0, 0]}, {"id": "b", "probs": [1, 0, 0]}])
    with pytest.raises(ValueError, match=r"missing.jsonl: no prediction for 1 of 3 examples, first missing id 'c'"):
        add_probability_column(dataset, read_predictions(missing, 3), BIAS_COLUMN, source=missing)
    rows = [{"id": i, "probs": [1, 0, 0]} for i in ["a", "b", "c", "zz"]]
    extra = _write(tmp_path / "extra.jsonl", rows)
    with pytest.raises(ValueError, match="first extra id 'zz'"):
        add_probability_column(dataset, read_predictions(extra, 3), BIAS_COLUMN, source=extra)
    joined = add_probability_column(dataset, read_predictions(extra, 3), BIAS_COLUMN, source=extra, allow_extra=True)
    assert len(joined) == 3


def test_missing_file_and_empty_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_predictions(tmp_path / "nope.jsonl", 3)
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(ValueError, match="no predictions"):
        read_predictions(tmp_path / "empty.jsonl", 3)


def _mnli_rows(data_dir, name: str, n: int):
    task = get_task("mnli")
    path = str(data_dir / "mnli" / name)
    return load_file(path, task.label_names, aliases=task.label_aliases).select(range(n))


def test_a_file_made_on_another_file_with_the_same_ids_is_refused(data_dir, tmp_path):
    matched, mismatched = _mnli_rows(data_dir, "dev_matched.tsv", 4), _mnli_rows(data_dir, "dev_mismatched.tsv", 4)
    assert matched["id"] == mismatched["id"] == ["0", "1", "2", "3"]  # MNLI's idx: 0..N in every file
    path = tmp_path / "bias_train.jsonl"
    write_predictions(path, matched["id"], [[0.2, 0.3, 0.5]] * 4, dataset_digests(matched))
    digests = read_text_digests(path)
    assert add_probability_column(matched, read_predictions(path, 3), BIAS_COLUMN, source=str(path), digests=digests)
    with pytest.raises(
        InputError,
        match=r"bias_train\.jsonl: 4 of the 4 rows joined by id were made on other texts than this run's data "
        r"\(text_digest differs\), first id '0' \(here 'Your contribution helped make it possible.*rerun it here",
    ):
        add_probability_column(
            mismatched, read_predictions(path, 3), BIAS_COLUMN, source=str(path), digests=digests, fix="rerun it here"
        )


def test_an_old_file_without_digests_joins_by_id_and_says_so_once(data_dir, tmp_path, caplog):
    rows = _mnli_rows(data_dir, "dev_mismatched.tsv", 3)
    path = _write(
        tmp_path / "old_bias_train.jsonl",
        [  # the format before text digests, rows as run_bias_model.py wrote them
            {"id": "0", "probs": [0.18327406638882032, 0.43769252632559363, 0.37903340728558593]},
            {"id": "1", "probs": [0.16170588642380118, 0.49305716446144704, 0.3452369491147518]},
            {"id": "2", "probs": [0.33655292933117, 0.3141218592029743, 0.3493252106458557]},
        ],
    )
    with caplog.at_level(logging.WARNING):
        joined = add_probability_column(
            rows, read_predictions(path, 3), BIAS_COLUMN, source=path, digests=read_text_digests(path)
        )
    assert joined[BIAS_COLUMN][1] == [0.16170588642380118, 0.49305716446144704, 0.3452369491147518]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert (
        warnings[0].startswith(f"{path} does not record the data it was made on") and "joined by id only" in warnings[0]
    )


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([[0.5, 0.5], [0.5, 0.5]], r"id 'a': 2 probabilities, but the task has 3 labels"),  # MNLI's 3 labels
        ([[0.2, 0.3, 0.5], [float("nan"), 0.0, 1.0]], r"id 'b': NaN probability"),
        ([[1.0, 1.0, 1.0], [0.2, 0.3, 0.5]], r"id 'a': probabilities sum to 3\.0000, not 1"),
        ([[0.2, 0.3, 0.5], [-1.0, 1.0, 1.0]], r"id 'b': negative probability"),
    ],
)
def test_add_probability_column_checks_rows_as_the_file_reader_does(rows, expected):
    """issue 50: given a dict, rows of the wrong width, NaN, negative or not summing to 1 were joined as they came
    (the same rows in a file are refused by read_predictions)."""
    from datasets import ClassLabel, Features, Value

    features = Features({"id": Value("string"), "label": ClassLabel(names=["entailment", "neutral", "contradiction"])})
    data = Dataset.from_dict({"id": ["a", "b"], "label": [0, 2]}, features=features)
    with pytest.raises(InputError, match=r"p_b\.jsonl: " + expected):
        add_probability_column(data, dict(zip(["a", "b"], rows, strict=True)), BIAS_COLUMN, source="p_b.jsonl")


def test_a_folder_given_as_a_predictions_file_is_named_as_a_folder(tmp_path):
    # issue 50: --bias_predictions DIR said "Predictions file not found: DIR"
    with pytest.raises(InputError, match=r"Predictions file .* is a folder, not a file: give the path of the file"):
        read_predictions(tmp_path, 3)
