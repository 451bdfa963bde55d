"""A run's splits (`load_splits`, `add_extra_training_data`) from files as users have them."""

import logging
from pathlib import Path

import pytest

from hf_srnets.arguments.model_data_arguments import DataArguments
from hf_srnets.data import get_task, load_file
from hf_srnets.data.splits import add_extra_training_data, load_splits
from hf_srnets.data.tasks import HANS_LABELS
from hf_srnets.runner.data import run_task, split_files

FEVER = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "fever"
NLI = ("entailment", "neutral", "contradiction")


def _tsv(path: Path, header: str, *rows: str) -> str:
    path.write_text("\n".join([header, *rows]) + "\n")
    return str(path)


def _mnli_files(tmp_path: Path) -> dict:
    header = "idx\tpremise\thypothesis\tlabel"
    train = _tsv(
        tmp_path / "train.tsv",
        header,
        "1\tA man sleeps .\tA person rests .\tentailment",
        "2\tA dog .\tA cat .\tcontradiction",
    )
    dev = _tsv(
        tmp_path / "dev.tsv", header, "3\tTwo kids play .\tKids play .\tentailment", "4\tA car .\tA red car .\tneutral"
    )
    return {"task": "mnli", "train_file": train, "validation_file": dev}


# --- --task_labels on a named task, through load_splits


def test_two_way_fever_run_restricts_its_ood_sets():
    args = DataArguments(
        task="fever",
        task_labels="SUPPORTS,REFUTES",
        data_dir=str(FEVER.parent),
        train_file=str(FEVER / "fever_nli_dev.tsv"),
        validation_file=str(FEVER / "fever_symmetric_test.jsonl"),
    )
    task = run_task(args)
    train, _, ood = load_splits(task, split_files(args), None)
    assert task.label_names == ("SUPPORTS", "REFUTES")
    assert [(s.name, s.label_names) for s, _ in ood] == [
        ("fever_symmetric_v1", ("SUPPORTS", "REFUTES")),
        ("fever_symmetric_v2", ("SUPPORTS", "REFUTES")),
    ]
    assert train["label"] == [1, 0, 0, 1] and set(ood[0][1]["label"]) == {0, 1}


def test_two_way_fever_refuses_a_training_file_with_nei_rows():
    args = DataArguments(task="fever", task_labels="SUPPORTS,REFUTES", data_dir=str(FEVER.parent))
    with pytest.raises(ValueError, match=r"row 4 \(id '89891'\): label 'NOT ENOUGH INFO' is not among .* remove such"):
        load_splits(run_task(args), split_files(args), None)


# --- an OOD file with a label set of its own


def _paws_args(data_dir: Path, **kwargs) -> DataArguments:
    taxi = str(data_dir / "mnli" / "taxinli" / "mnli_train_subset_from_taxinli.tsv")
    paws = data_dir / "paws" / "paws_wiki_dev.tsv"
    return DataArguments(
        task="mnli", train_file=taxi, validation_file=taxi, no_default_ood=True, ood_file=[f"paws={paws}"], **kwargs
    )


def test_paws_under_mnli_is_refused_unless_its_labels_are_named(data_dir):
    args = _paws_args(data_dir)
    with pytest.raises(ValueError, match=r"integer ids \[0, 1\].*0 = entailment, 1 = neutral.*--ood_labels paws="):
        load_splits(run_task(args), split_files(args), None)

    args = _paws_args(data_dir, ood_labels=["paws=non-entailment,entailment"])
    _, _, [(paws_set, paws)] = load_splits(run_task(args), split_files(args), None)
    assert (paws_set.kind, paws_set.label_names) == ("hans", HANS_LABELS)  # 2-way, scored like HANS
    assert len(paws) == 8000 and paws["label"].count(HANS_LABELS.index("entailment")) == 3539  # the paraphrases

    args = _paws_args(data_dir, ood_labels=["paws=contradiction,entailment"])
    _, _, [(paws_set, paws)] = load_splits(run_task(args), split_files(args), None)
    assert (paws_set.kind, paws_set.label_names) == ("same", NLI)
    assert paws["label"].count(0) == 3539 and paws["label"].count(2) == 4461


@pytest.mark.parametrize(
    "ood_labels, message",
    [
        (["paws=yes,no"], r"each label must be one of \['entailment', 'neutral', 'contradiction', 'non-entailment'\]"),
        (["pawz=entailment,neutral"], r"--ood_labels names \['pawz'\], but the OOD sets are \['paws'\]"),
        (["paws"], "NAME=LABEL0,LABEL1"),
    ],
)
def test_bad_ood_labels(data_dir, ood_labels, message):
    args = _paws_args(data_dir, ood_labels=ood_labels)
    with pytest.raises(ValueError, match=message):
        load_splits(run_task(args), split_files(args), None)


def test_paws_under_qqp_needs_no_names(data_dir, tmp_path):
    paws = data_dir / "paws" / "paws_wiki_dev.tsv"
    args = DataArguments(task="qqp", train_file=str(paws), validation_file=str(paws), data_dir=str(data_dir))
    _, _, ood = load_splits(run_task(args), split_files(args), None)
    assert {s.name: sum(d["label"]) for s, d in ood} == {"paws_qqp": 191, "paws_wiki": 3536}


def test_integer_labels_missing_a_class_are_refused(tmp_path):
    ood = tmp_path / "ood.jsonl"
    ood.write_text('{"premise": "a", "hypothesis": "b", "label": 0}\n{"premise": "c", "hypothesis": "d", "label": 1}\n')
    args = DataArguments(**_mnli_files(tmp_path), no_default_ood=True, ood_file=[f"two={ood}"])
    with pytest.raises(ValueError, match="--ood_labels two=LABEL0,LABEL1"):
        load_splits(run_task(args), split_files(args), None)


# --- single texts vs pairs


def test_mnli_training_file_without_hypothesis_is_refused(tmp_path):
    files = _mnli_files(tmp_path)
    files["train_file"] = _tsv(tmp_path / "t1.tsv", "idx\tpremise\tlabel", "1\tA man sleeps .\tentailment")
    args = DataArguments(**files, no_default_ood=True)
    with pytest.raises(ValueError, match=r"no hypothesis column .*\(a pair task needs both texts\)"):
        load_splits(run_task(args), split_files(args), None)


def test_custom_task_refuses_single_training_texts_with_pair_evaluation(tmp_path):
    train = _tsv(tmp_path / "t.tsv", "sentence\tlabel", "good film\tpositive", "bad film\tnegative")
    dev = _tsv(tmp_path / "d.tsv", "sentence1\tsentence2\tlabel", "good\tfilm\tpositive", "bad\tfilm\tnegative")
    args = DataArguments(task="custom", task_labels="negative,positive", train_file=train, validation_file=dev)
    with pytest.raises(ValueError, match=r"\['train'\] have one text column but \['validation'\] have text pairs"):
        load_splits(run_task(args), split_files(args), None)
    args.validation_file = train
    train_set, _, _ = load_splits(run_task(args), split_files(args), None)
    assert "sentence2" not in train_set.column_names and train_set["label"] == [1, 0]


# --- rows dropped while loading


def test_short_tsv_row_is_an_error_or_dropped_and_logged(tmp_path, caplog):
    files = _mnli_files(tmp_path)
    files["train_file"] = _tsv(
        tmp_path / "t2.tsv", "idx\tpremise\thypothesis\tlabel", "1\tA man .\tA person .\tentailment", "2\tA dog ."
    )
    args = DataArguments(**files, no_default_ood=True)
    with pytest.raises(ValueError, match=r"row 1: missing or empty \['hypothesis', 'label'\].*--skip_incomplete_rows"):
        load_splits(run_task(args), split_files(args), None)
    args.skip_incomplete_rows = True
    with caplog.at_level(logging.WARNING, logger="hf_srnets.data"):
        train, _, _ = load_splits(run_task(args), split_files(args), None)
    assert train["id"] == ["1"] and "dropped 1 of 2 incomplete rows" in caplog.text


@pytest.mark.parametrize(
    "rows, message",
    [
        (["1\tA man .\t \tentailment"], r"row 0: missing or empty \['hypothesis'\]"),
        (["1\tA man .\tA person .\t"], r"row 0: missing or empty \['label'\]"),
        (["1\tA man .\tA person .\tentailment\textra"], "row 0: 5 fields, but the header has 4"),
        (["\tA man .\tA person .\tentailment"], r"row 0: missing or empty \['idx'\]"),
    ],
)
def test_incomplete_rows(tmp_path, rows, message):
    path = _tsv(tmp_path / "x.tsv", "idx\tpremise\thypothesis\tlabel", *rows)
    with pytest.raises(ValueError, match=message):
        load_file(path, NLI)


def test_unlabelled_rows_are_dropped_and_counted(tmp_path, caplog):
    path = _tsv(tmp_path / "x.tsv", "idx\tpremise\thypothesis\tlabel", "1\ta\tb\t-", "2\tc\td\tneutral", "3\te\tf\t-")
    with caplog.at_level(logging.WARNING, logger="hf_srnets.data"):
        ds = load_file(path, NLI)
    assert ds["id"] == ["2"] and "dropped 2 of 3 rows without a gold label" in caplog.text


# --- an --ood_file named like a default OOD set replaces it


def test_ood_file_named_hans_replaces_the_default_without_the_hub(tmp_path, monkeypatch):
    import datasets

    def no_hub(*args, **kwargs):
        raise AssertionError("the Hub was asked for a set given as a file")

    monkeypatch.setattr(datasets, "load_dataset", no_hub)
    hans = _tsv(
        tmp_path / "hans.tsv",
        "gold_label\tsentence1\tsentence2\tpairID\theuristic\tsubcase",
        "non-entailment\tThe doctor saw the judge .\tThe judge saw the doctor .\tex0\tlexical_overlap\tln_preposition",
        "entailment\tThe judge slept .\tThe judge slept .\tex1\tlexical_overlap\tle_relative_clause",
    )
    args = DataArguments(**_mnli_files(tmp_path), ood_file=[f"hans={hans}"])
    _, _, ood = load_splits(run_task(args), split_files(args), None)
    assert [(s.name, s.kind, len(d)) for s, d in ood] == [("hans", "hans", 2)]


# --- extra training rows say where they come from


def test_extra_training_rows_carry_source_name_and_id(tmp_path):
    args = DataArguments(**_mnli_files(tmp_path), no_default_ood=True)
    task = run_task(args)
    train, _, ood = load_splits(task, split_files(args), None)
    extra = _tsv(
        tmp_path / "hans_train.tsv", "pairID\tsentence1\tsentence2\tgold_label", "ex7\tA b .\tB a .\tnon-entailment"
    )
    out = add_extra_training_data(train, task, [f"h={extra}", f"k={extra}x2"], split_files(args), ood)
    assert out["id"] == ["1", "2", "h:ex7", "k#0:ex7", "k#1:ex7"]
    assert out["source_name"] == ["train", "train", "h", "k", "k"]
    assert out["source_id"] == ["1", "2", "ex7", "ex7", "ex7"]
    assert out["label"][2:] == [2, 2, 2]  # non-entailment trained as contradiction

    single = _tsv(tmp_path / "single.tsv", "idx\tpremise\tlabel", "9\tA b .\tentailment")
    with pytest.raises(ValueError, match=r"no hypothesis column"):
        add_extra_training_data(train, task, [f"s={single}"], split_files(args), ood)


def test_ood_eval_sets_match_what_load_splits_builds():
    """For metric keys (e.g. a sweep's defaults) without loading data: no duplicate after a replacement."""
    from hf_srnets.data.splits import ood_eval_sets

    task = get_task("mnli")
    sets = ood_eval_sets(task, ["hans=h.tsv", "paws=p.tsv"], ood_labels=["paws=non-entailment,entailment"])
    assert [(s.name, s.kind, s.source.local_paths) for s in sets] == [
        ("hans", "hans", ("h.tsv",)),
        ("paws", "hans", ("p.tsv",)),
    ]
    with pytest.raises(ValueError, match=r"--ood_file: two sets named \['a'\]"):
        ood_eval_sets(task, ["a=x.tsv", "a=y.tsv"])
