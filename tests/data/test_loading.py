"""Loading files into the canonical schema (id, sentence1, sentence2, label) and the task registry."""

import pytest

from hf_srnets.data import canonicalize, get_task, load_file, load_source

NLI = ("entailment", "neutral", "contradiction")


def test_tsv_with_aliases_and_string_labels(tmp_path):
    path = tmp_path / "train.tsv"
    path.write_text(
        'idx\tpremise\thypothesis\tlabel\n7\tA "quoted" man .\tA man .\tentailment\n9\tx\ty\tcontradiction\n'
    )
    ds = load_file(str(path), NLI)
    assert ds.column_names[:4] == ["id", "sentence1", "sentence2", "label"]
    assert ds["id"] == ["7", "9"] and ds["label"] == [0, 2]
    assert ds[0]["sentence1"] == 'A "quoted" man .'  # tsv is read without quoting


def test_jsonl_without_id_gets_content_ids(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(
        '{"sentence1": "a", "sentence2": "b", "label": 1}\n{"sentence1": "c", "sentence2": "d", "label": 0}\n'
    )
    ds = load_file(str(path), NLI)
    reordered = tmp_path / "r.jsonl"
    reordered.write_text(
        '{"sentence1": "c", "sentence2": "d", "label": 0}\n{"sentence1": "a", "sentence2": "b", "label": 1}\n'
    )
    assert sorted(ds["id"]) == sorted(load_file(str(reordered), NLI)["id"])  # ids do not depend on row order


@pytest.mark.parametrize(
    "rows, message",
    [
        ([{"id": 1, "sentence1": "a", "label": "maybe"}], "unknown label 'maybe'"),
        ([{"id": 1, "sentence1": "a", "label": 5}], "out of range"),
        ([{"id": 1, "foo": "a", "label": 0}], "no text column"),
        ([{"id": 1, "sentence1": "a"}], "no label column"),
        ([{"id": 1, "sentence1": "a", "label": 0}, {"id": 1, "sentence1": "b", "label": 0}], "duplicate example id"),
        ([], "has no rows"),
    ],
)
def test_bad_rows(rows, message):
    with pytest.raises(ValueError, match=message):
        canonicalize(rows, NLI, name="fixture")


def test_unknown_task_and_missing_local_file(tmp_path):
    with pytest.raises(ValueError, match="Unknown task"):
        get_task("sst9")
    task = get_task("qqp")
    with pytest.raises(FileNotFoundError, match="paws_qqp"):
        load_source(task.ood[0].source, task.label_names, name="paws_qqp", data_dir=str(tmp_path))


def test_shared_data_layout_works_as_is(data_dir):
    task = get_task("mnli")
    dev = load_source(task.validation, task.label_names, name="dev", data_dir=str(data_dir), aliases=task.label_aliases)
    assert len(dev) == 9815 and len(set(dev["id"])) == 9815
    assert sorted(set(dev["label"])) == [0, 1, 2]
    hans = load_source(task.ood[0].source, task.ood[0].label_names, name="hans", data_dir=str(data_dir))
    assert len(hans) == 30000 and sum(hans["label"]) == 15000
    assert set(hans["heuristic"]) == {"lexical_overlap", "subsequence", "constituent"}
    qqp = get_task("qqp")
    paws = load_source(
        qqp.ood[0].source, qqp.label_names, name="paws", data_dir=str(data_dir), aliases=qqp.label_aliases
    )
    assert len(paws) == 677 and sum(paws["label"]) == 191
