"""Tasks sst2, ag_news, imdb (and qnli): their specs, and the loaders on each published file format.

Each format is covered by a fixture copied from the real file (`tests/fixtures/data/`, a few rows, header and
quoting kept) and, when `/work/shared/data` is there, by the real files with their documented sizes.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import DATA_DIR, assert_run_predictions_match_hand

from hf_srnets.arguments.model_data_arguments import DataArguments
from hf_srnets.data import get_task, load_file, load_source, resolve_task
from hf_srnets.data.file_readers import read_formatted_rows, read_rows
from hf_srnets.data.splits import load_splits
from hf_srnets.data.tasks import display_name
from hf_srnets.experiments.sweep_summary import metric_title
from hf_srnets.runner.data import split_files

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"


def load(task_name: str, split: str, data_dir: Path):
    task = get_task(task_name)
    source = getattr(task, split)
    return load_source(
        source,
        task.label_names,
        name=f"{task_name} {split}",
        data_dir=str(data_dir),
        aliases=task.label_aliases,
        text_fields=task.text_fields,
    )


def test_specs():
    sst2, ag, imdb = get_task("sst2"), get_task("ag_news"), get_task("imdb")
    assert sst2.label_names == ("negative", "positive") == imdb.label_names
    assert ag.label_names == ("World", "Sports", "Business", "Sci/Tech")  # fancyzhx/ag_news class ids 0..3
    assert [t.hub_datasets for t in (sst2, ag, imdb)] == [["nyu-mll/glue"], ["fancyzhx/ag_news"], ["stanfordnlp/imdb"]]
    assert (sst2.validation.hub_split, sst2.validation.official_rows) == ("validation", 872)
    assert (ag.validation.hub_split, ag.validation.official_rows) == ("test", 7_600)
    assert [display_name(n) for n in ("sst2", "ag_news", "imdb", "qnli")] == ["SST-2", "AG News", "IMDB", "QNLI"]
    assert metric_title("eval_ag_news_accuracy") == "AG News accuracy"  # sweep plots read the names
    assert all(len(t.text_fields) == 1 and t.bias_model == "claim" and not t.ood for t in (sst2, ag, imdb))
    # The attacked split: SST-2's GLUE dev set (the paper's 872 sentences), IMDB's test split.
    assert sst2.attack_split is sst2.validation and imdb.attack_split is imdb.test


def test_sst2_fixture_reads_like_glue():
    ds = load("sst2", "validation", FIXTURES)
    assert ds.column_names == ["id", "sentence1", "label"]
    assert ds[0]["sentence1"].startswith("it 's a charming and often affecting journey .")
    assert ds["label"][:3] == [1, 0, 1]  # GLUE: 0 = negative, 1 = positive


def test_ag_news_fixture_has_no_header_and_csv_quoting():
    ds = load("ag_news", "validation", FIXTURES)
    first = (FIXTURES / "agnews" / "agnews_test.tsv").read_text().splitlines()[0]
    assert len(ds) == 11  # the first line is data, not a header
    assert ds[0]["sentence1"] == first.split("\t")[0]
    assert ds[0]["label"] == get_task("ag_news").label_names.index("Business")
    quoted = [s for s in ds["sentence1"] if "Music Manifesto" in s]
    assert quoted and 'a "Music Manifesto" campaign' in quoted[0] and not quoted[0].startswith('"')


def test_ag_news_user_file_with_a_header_and_restricted_labels(tmp_path):
    path = tmp_path / "ag.tsv"
    path.write_text("sentence\tlabel\nstocks fell\tBusiness\nthe match ended 2-1\tSports\n")
    task = resolve_task("ag_news", "Sports,Business")
    ds = load_file(str(path), task.label_names, file_format=task.file_format, text_fields=task.text_fields)
    assert ds["sentence1"] == ["stocks fell", "the match ended 2-1"] and ds["label"] == [1, 0]


def test_imdb_fixture_csv_quoting_and_label_names():
    rows = read_rows(FIXTURES / "imdb_cad" / "orig" / "train.tsv")  # without its format: quotes stay literal
    assert list(rows[0]) == ["Sentiment", "Text"]
    ds = load("imdb", "train", FIXTURES)
    raw = read_formatted_rows(FIXTURES / "imdb_cad" / "orig" / "train.tsv", get_task("imdb").file_format)
    assert [r["label"] for r in raw] == [("Negative", "Positive")[y] for y in ds["label"]]  # by name, any case
    doubled = [r["Text"] for r in rows if '""' in r["Text"]]
    assert doubled, "the fixture keeps a csv-quoted review"
    unquoted = doubled[0][1:-1].replace('""', '"')
    assert unquoted in ds["sentence1"]
    assert {len(load("imdb", s, FIXTURES)) for s in ("validation", "test")} == {6, 7}


def test_imdb_hub_label_names_are_aliases():
    task = get_task("imdb")
    assert task.label_aliases == {"neg": "negative", "pos": "positive"}  # stanfordnlp/imdb's ClassLabel names


def test_load_splits_reads_given_files_in_the_task_format(tmp_path):
    ag = FIXTURES / "agnews"
    args = DataArguments(
        task="ag_news",
        train_file=str(ag / "agnews_train_subset_alps_dev.tsv"),
        validation_file=str(ag / "agnews_test.tsv"),
    )
    train, validation, ood = load_splits(get_task("ag_news"), split_files(args), cache_dir=None)
    assert (len(train), len(validation), ood) == (8, 11, [])


REAL = {  # (task, split): (rows, label counts by name) from /work/shared/data/PROVENANCE.md
    ("sst2", "train"): (60_614, {"positive": 33_828, "negative": 26_786}),
    ("sst2", "validation"): (872, {"positive": 444, "negative": 428}),
    ("ag_news", "train"): (10_001, {"Sci/Tech": 2_538, "World": 2_509, "Business": 2_496, "Sports": 2_458}),
    ("ag_news", "validation"): (7_600, {"World": 1_900, "Sports": 1_900, "Business": 1_900, "Sci/Tech": 1_900}),
    ("imdb", "train"): (1_707, {"positive": 856, "negative": 851}),
    ("imdb", "validation"): (245, {"positive": 123, "negative": 122}),
    ("imdb", "test"): (488, {"positive": 245, "negative": 243}),
}


REAL_FOLDERS = {"sst2": "sst2", "ag_news": "agnews", "imdb": "imdb_cad"}


@pytest.mark.parametrize("task_name,split", sorted(REAL))
def test_real_files(task_name, split):
    folder = DATA_DIR / REAL_FOLDERS[task_name]  # each task's own: a data dir may hold some sets and not others
    if not folder.is_dir():
        pytest.skip(f"real data not found at {folder}")
    rows, counts = REAL[(task_name, split)]
    ds = load(task_name, split, DATA_DIR)
    names = get_task(task_name).label_names
    assert len(ds) == rows and len(set(ds["id"])) == rows
    assert Counter(names[y] for y in ds["label"]) == counts
    assert not any(s.startswith('"') and s.endswith('"') for s in ds["sentence1"]), "csv quoting undone"


def run_cli(pretrained: Path, data_dir: Path, out: Path, *extra: str) -> dict:
    from hf_srnets.commands.glue_sparse import main

    main(
        [
            "--model_name_or_path", str(pretrained), "--task", "sst2", "--data_dir", str(data_dir),
            "--max_train_samples", "50", "--max_eval_samples", "12", "--output_dir", str(out), "--report_to",
            "none", "--save_strategy", "no", "--disable_tqdm", "true", "--use_cpu", "true", "--do_train",
            "--do_eval", "--num_train_epochs", "1", "--per_device_train_batch_size", "16", *extra,
        ]
    )  # fmt: skip
    return json.loads((out / "all_results.json").read_text())


def test_run_glue_sparse_sst2_end_to_end(pretrained, tmp_path):
    data_dir = DATA_DIR if (DATA_DIR / "sst2" / "sst2_dev_glue.tsv").is_file() else FIXTURES
    results = run_cli(pretrained, data_dir, tmp_path / "out")
    assert results["train_examples"] == (50 if data_dir == DATA_DIR else 40)
    # the reported accuracy is the saved model's, recomputed here on the same 12 dev rows (the first ones)
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    dev = load("sst2", "validation", data_dir).select(range(12))
    model = AutoModelForSequenceClassification.from_pretrained(tmp_path / "out")
    tokenizer = AutoTokenizer.from_pretrained(pretrained)
    reported = results["eval_sst2_accuracy"]
    assert_run_predictions_match_hand(tmp_path / "out", "sst2", reported, model, tokenizer, dev["sentence1"], None)
    assert results["eval_sst2_examples"] == 12
    card = (tmp_path / "out" / "README.md").read_text()
    assert "sst2/sst2_dev_glue.tsv" in card and "nyu-mll/glue" in card
