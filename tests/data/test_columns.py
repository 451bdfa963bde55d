"""Bias/teacher probability columns: joined by id, validated with errors that name the file and the id."""

import json

import pytest
from datasets import Dataset

from hf_srnets.data import BIAS_COLUMN, add_probability_column, read_predictions, write_predictions


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
