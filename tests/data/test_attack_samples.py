"""TextFooler's attack samples (and any task file) read into a task's canonical columns."""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

import pytest
from conftest import DATA_DIR

from hf_srnets.data import get_task, resolve_task
from hf_srnets.data.attack_samples import AG_ID_WARNING, read_attack_sample, sample_format

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"
SAMPLES = FIXTURES / "textfooler_subsets"


def lines(name: str) -> list[str]:
    return (SAMPLES / name).read_text(encoding="utf-8").splitlines()


def test_formats_are_detected():
    assert sample_format(SAMPLES / "ag") == sample_format(SAMPLES / "imdb") == "label_text"
    assert sample_format(SAMPLES / "mnli_matched") == "nli_tsv"
    assert sample_format(FIXTURES / "sst2" / "sst2_dev_glue.tsv") is None


def test_ag_ids_are_the_published_class_order_and_warned(caplog):
    with caplog.at_level(logging.WARNING, logger="hf_srnets.data.attack_samples"):
        ds = read_attack_sample(SAMPLES / "ag", "ag_news")
    assert AG_ID_WARNING in caplog.text and "not confirmed upstream" in AG_ID_WARNING
    names = get_task("ag_news").label_names
    assert [names[y] for y in ds["label"]] == [names[int(line.split(" ", 1)[0])] for line in lines("ag")]
    assert ds.column_names == ["id", "sentence1", "label"] and ds["id"][0] == "ag-0"
    # The first row is a baseball story labelled 1 = Sports; csv-quoted texts are unquoted.
    assert names[ds[0]["label"]] == "Sports" and ds[0]["sentence1"].startswith("braves beat astros")
    doubled = [line for line in lines("ag") if '""' in line]
    assert doubled and all('""' not in s and not s.startswith('"') for s in ds["sentence1"])


def test_imdb_ids_are_negative_positive():
    ds = read_attack_sample(SAMPLES / "imdb", "imdb")
    assert ds["label"] == [int(line[0]) for line in lines("imdb")]  # 0 = negative, 1 = positive
    assert ds[0]["sentence1"] == lines("imdb")[0].split(" ", 1)[1].strip()


def test_mnli_label_words_and_pairs():
    ds = read_attack_sample(SAMPLES / "mnli_matched", "mnli")
    first = lines("mnli_matched")[0].split("\t")
    assert ds.column_names == ["id", "sentence1", "sentence2", "label"]
    assert (ds[0]["sentence1"], ds[0]["sentence2"]) == (first[1], first[2])
    nli = get_task("mnli").label_names
    assert [nli[y] for y in ds["label"]] == [line.split("\t")[0] for line in lines("mnli_matched")]


def test_restricted_task_labels_follow_the_published_ids(tmp_path):
    ds = read_attack_sample(SAMPLES / "ag", resolve_task("ag_news", "Sci/Tech,World,Sports,Business"))
    published = get_task("ag_news").label_names
    restricted = ("Sci/Tech", "World", "Sports", "Business")
    assert [restricted[y] for y in ds["label"]] == [published[int(line[0])] for line in lines("ag")]


def test_a_task_file_is_read_in_its_format():
    ds = read_attack_sample(FIXTURES / "agnews" / "agnews_test.tsv", "ag_news")
    assert len(ds) == 11
    assert len(read_attack_sample(FIXTURES / "sst2" / "sst2_dev_glue.tsv", "sst2")) == 12


@pytest.mark.parametrize(
    "content,task,message",
    [
        ("1 a fine film\nthis line has no label\n", "imdb", "line 2: expected 'LABEL TEXT'"),
        ("7 a fine film\n", "imdb", "label id 7 out of range"),
        ("entailment\ta b\n", "mnli", "neither a TextFooler sample"),
        ("entailment\tpremise .\thypothesis .\n", "imdb", "holds premise/hypothesis pairs"),
        ("1 a fine film\n", "mnli", "holds single texts"),
        ("entailment\tp .\th .\nmaybe\tp .\th .\n", "mnli", "unknown label 'maybe'"),
        ("entailment\tp .\th .\nneutral\tp .\n", "mnli", "line 2: expected 3 tab-separated fields"),
    ],
)
def test_format_errors_are_clear(tmp_path, content, task, message):
    path = tmp_path / "sample"
    path.write_text(content)
    with pytest.raises(ValueError) as err:
        read_attack_sample(path, task)
    assert message in str(err.value)


def test_missing_file():
    with pytest.raises(FileNotFoundError, match="Attack sample not found"):
        read_attack_sample("/nonexistent/ag", "ag_news")


REAL = {
    "ag": ("ag_news", {0: 256, 1: 265, 2: 237, 3: 242}),
    "imdb": ("imdb", {0: 497, 1: 503}),
    "mnli_matched": ("mnli", {0: 373, 2: 316, 1: 311}),  # E / C / N of PROVENANCE.md
    "mnli_mismatched": ("mnli", {0: 346, 2: 335, 1: 319}),
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_samples(name):
    path = DATA_DIR / "textfooler_subsets" / name
    if not path.is_file():
        pytest.skip(f"real data not found at {DATA_DIR}")
    task, counts = REAL[name]
    ds = read_attack_sample(path, task)
    assert len(ds) == 1000 and len(set(ds["id"])) == 1000
    assert Counter(ds["label"]) == counts
