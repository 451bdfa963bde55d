"""Every published FEVER format loads as sentence1 = claim, sentence2 = evidence."""

import json
import logging
from pathlib import Path

import pytest

from hf_srnets.arguments.model_data_arguments import DataArguments
from hf_srnets.data import load_file
from hf_srnets.data.splits import load_splits
from hf_srnets.runner.data import run_task, split_files

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"
FEVER = FIXTURES / "fever"


def _claims_and_evidence(path: Path) -> list[tuple[str, str]]:
    if path.suffix == ".tsv":
        lines = [line.split("\t") for line in path.read_text().splitlines()]
        header = lines[0]
        return [(row[header.index("claim")], row[header.index("evidence")]) for row in lines[1:]]
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [(r["claim"], r.get("evidence", r.get("evidence_sentence"))) for r in rows]


@pytest.mark.parametrize(
    "file",
    ["fever.train.jsonl", "fever_symmetric_generated.jsonl", "fever_symmetric_test.jsonl", "fever_nli_dev.tsv"],
)
def test_every_fever_format_reads_claim_then_evidence(file):
    path = str(FEVER / file)
    args = DataArguments(task="fever", train_file=path, validation_file=path, no_default_ood=True)
    train, _, _ = load_splits(run_task(args), split_files(args), None)
    assert list(zip(train["sentence1"], train["sentence2"])) == _claims_and_evidence(FEVER / file)


def test_symmetric_v2_with_its_extra_columns_loads_from_data_dir_and_as_ood_file(caplog):
    """v0.2 has `evid` = [[sentence, score]] (mixed types: pyarrow refused it) and a reversed sentence1/sentence2."""
    args = DataArguments(task="fever", data_dir=str(FIXTURES))
    with caplog.at_level(logging.INFO, logger="hf_srnets.data"):
        train, validation, ood = load_splits(run_task(args), split_files(args), None)
    sets = {s.name: d for s, d in ood}
    v2 = sets["fever_symmetric_v2"]
    assert len(v2) == 4 and v2["label"] == [1, 0, 0, 1]
    assert v2[0]["sentence1"] == "Tetris was created in Japan ."  # the claim, not v0.2's sentence1 (the evidence)
    assert "evid" not in v2.column_names
    assert "dropped the columns ['evid']" in caplog.text and "'sentence1', 'sentence2'" in caplog.text
    assert len(train) == 6 and len(validation) == 5 and len(sets["fever_symmetric_v1"]) == 4

    args = DataArguments(
        task="fever",
        train_file=str(FEVER / "fever.train.jsonl"),
        validation_file=str(FEVER / "fever.dev.jsonl"),
        no_default_ood=True,
        ood_file=[f"sym2={FEVER / 'fever_symmetric_test.jsonl'}"],
    )
    _, _, ood = load_splits(run_task(args), split_files(args), None)
    assert ood[0][1]["sentence1"] == v2["sentence1"]


def test_a_fever_file_that_does_not_say_which_text_is_the_claim_is_refused(tmp_path):
    path = tmp_path / "converted.jsonl"
    rows = [json.loads(line) for line in (FEVER / "fever_symmetric_test.jsonl").read_text().splitlines()]
    path.write_text(
        "".join(json.dumps({k: r[k] for k in ("id", "sentence1", "sentence2", "label")}) + "\n" for r in rows)
    )
    train = str(FEVER / "fever.train.jsonl")
    args = DataArguments(task="fever", train_file=train, validation_file=str(path), no_default_ood=True)
    with pytest.raises(ValueError, match=r"no claim column .*sentence1/sentence2 columns do not say which text"):
        load_splits(run_task(args), split_files(args), None)


def test_extra_columns_of_any_type(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(
        '{"id": 1, "sentence1": "a", "sentence2": "b", "label": 0, "n": 1, "x": 1.5, "mixed": 1, "tags": ["u"]}\n'
        '{"id": 2, "sentence1": "c", "sentence2": "d", "label": 1, "n": 2, "x": 2, "mixed": "z", "tags": {"k": 1}}\n'
    )
    ds = load_file(str(path), ("entailment", "neutral", "contradiction"))
    assert ds["n"] == [1, 2] and ds["x"] == [1.5, 2.0] and ds["mixed"] == ["1", "z"]
    assert "tags" not in ds.column_names
