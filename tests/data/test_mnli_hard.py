"""The MNLI hard subsets (robust-nli's folders of parallel files s1.test, s2.test, labels.test) as optional
evaluation sets of `--task mnli`: the reader, its refusals, the real folders in full, and a run that names them.

The fixture `tests/fixtures/data/mnli_hard/MNLIMatchedHardWithHardTest/` is the first 9 lines of each real file
(3 neutral, 4 contradiction, 2 entailment). Expected values are read here from the files with plain Python.
"""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from conftest import DATA_DIR, assert_run_predictions_match_hand, mnli_run_args

from hf_srnets.data import get_task, load_file, load_source, resolve_task
from hf_srnets.data.splits import SplitFiles, load_splits, ood_eval_sets
from hf_srnets.data.tasks import display_name
from hf_srnets.errors import InputError, MissingInputError
from hf_srnets.experiments.sweep_summary import default_metrics, metric_title

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"
MATCHED = "mnli_hard/MNLIMatchedHardWithHardTest"
MISMATCHED = "mnli_hard/MNLIMismatchedHardWithHardTest"
NLI = ("entailment", "neutral", "contradiction")
# ../shared/data/PROVENANCE.md, section 2: lines and labels of robust-nli's hard subsets
REAL = {
    "mnli_hard_matched": (MATCHED, 4_573, {"entailment": 1_701, "contradiction": 1_386, "neutral": 1_486}),
    "mnli_hard_mismatched": (MISMATCHED, 4_530, {"entailment": 1_710, "contradiction": 1_420, "neutral": 1_400}),
}


def lines(path: Path) -> list[str]:
    """The lines of a text file, read here without the code under test."""
    return path.read_text(encoding="utf-8").split("\n")[:-1]  # the files end with a newline


def content_id(premise: str, hypothesis: str) -> str:
    """The id the loader gives a row of a file without ids: the first 16 hex digits of SHA-1(premise TAB hypothesis)."""
    return hashlib.sha1(f"{premise}\t{hypothesis}".encode()).hexdigest()[:16]


def load_hard(name: str, data_dir: Path, task_labels: str | None = None):
    task = resolve_task("mnli", task_labels)
    eval_set = next(s for s in task.optional_ood if s.name == name)
    return load_source(
        eval_set.source,
        eval_set.label_names,
        name=name,
        data_dir=str(data_dir),
        aliases=task.label_aliases,
        text_fields=task.text_fields,
        id_label_names=task.file_label_names if task.published_label_names else None,
        excluded_labels=task.excluded_label_names,
    )


def copy_fixture(tmp_path: Path) -> Path:
    folder = tmp_path / "hard"
    shutil.copytree(FIXTURES / MATCHED, folder)
    for file in folder.iterdir():
        file.chmod(0o644)
    return folder


def mnli_files(tmp_path: Path) -> dict:
    """A tiny MNLI training and dev file, so that `load_splits` reads no Hub split."""
    header = "idx\tpremise\thypothesis\tlabel\n"
    train, dev = tmp_path / "train.tsv", tmp_path / "dev.tsv"
    train.write_text(header + "1\tA man sleeps .\tA person rests .\tentailment\n2\tA dog .\tA cat .\tcontradiction\n")
    dev.write_text(header + "3\tTwo kids play .\tKids play .\tentailment\n")
    return {"train_file": str(train), "validation_file": str(dev)}


# --- registered, optional, named


def test_the_hard_subsets_are_optional_sets_of_mnli_with_their_names():
    task = get_task("mnli")
    assert [(s.name, s.display_name, s.kind, s.label_names) for s in task.optional_ood] == [
        ("mnli_hard_matched", "MNLI-m hard", "same", NLI),
        ("mnli_hard_mismatched", "MNLI-mm hard", "same", NLI),
    ]
    assert [s.source.local_paths for s in task.optional_ood] == [(MATCHED,), (MISMATCHED,)]
    assert all(s.source.hub_path is None for s in task.optional_ood)  # local files only
    # not a default: a run evaluates them only when asked to
    assert [s.name for s in ood_eval_sets(task)] == ["hans"]
    assert default_metrics(task) == ["eval_mnli_accuracy", "eval_hans_accuracy"]
    asked = ["mnli_hard_matched", f"mnli_hard_mismatched={FIXTURES / MATCHED}"]
    assert [s.name for s in ood_eval_sets(task, asked)] == ["hans", "mnli_hard_matched", "mnli_hard_mismatched"]
    assert default_metrics(task, asked, no_default_ood=True) == [
        "eval_mnli_accuracy",
        "eval_mnli_hard_matched_accuracy",
        "eval_mnli_hard_mismatched_accuracy",
    ]
    assert display_name("mnli_hard_mismatched") == "MNLI-mm hard"
    assert metric_title("eval_mnli_hard_matched_accuracy") == "MNLI-m hard accuracy"


def test_an_unknown_name_is_refused_listing_the_registered_sets():
    with pytest.raises(InputError) as caught:
        ood_eval_sets(get_task("mnli"), ["mnli_hard"])
    message = str(caught.value)
    assert "--ood_file mnli_hard: task 'mnli' has no evaluation set 'mnli_hard'" in message
    assert "['hans', 'mnli_hard_matched', 'mnli_hard_mismatched']" in message and "NAME=PATH" in message
    with pytest.raises(InputError, match="task 'qnli' has no evaluation set 'mnli_hard_matched' and registers none"):
        ood_eval_sets(get_task("qnli"), ["mnli_hard_matched"])


def test_the_card_says_where_a_hard_subset_was_read():
    from hf_srnets.publish.card_data import DataSources, describe_splits

    task = get_task("mnli")
    given = next(s for s in ood_eval_sets(task, [f"mnli_hard_mismatched={FIXTURES / MATCHED}"]) if s.name != "hans")
    splits = describe_splits(
        task,
        DataSources(data_dir=str(FIXTURES)),
        train_rows=2,
        train_total=2,
        validation_rows=1,
        ood=[(task.optional_ood[0], 9), (given, 9)],
    )
    by_name = {s.name: s for s in splits if s.role == "ood"}
    assert by_name["mnli_hard_matched"].origin == f"`{MATCHED}` under `--data_dir`"
    assert by_name["mnli_hard_matched"].selection == "all 9 rows" and by_name["mnli_hard_matched"].hub is None
    assert by_name["mnli_hard_mismatched"].origin == "local file `MNLIMatchedHardWithHardTest`"
    assert by_name["mnli_hard_mismatched"].selection == "all 9 rows"


# --- the reader, on the fixture


def test_the_reader_gives_the_canonical_columns_line_by_line():
    folder = FIXTURES / MATCHED
    premises, hypotheses = lines(folder / "s1.test"), lines(folder / "s2.test")
    words = lines(folder / "labels.test")
    ds = load_hard("mnli_hard_matched", FIXTURES)
    assert ds.column_names == ["id", "sentence1", "sentence2", "label"]
    assert ds["sentence1"] == premises and ds["sentence2"] == hypotheses
    assert [NLI[y] for y in ds["label"]] == words
    assert Counter(words) == {"contradiction": 4, "neutral": 3, "entailment": 2}
    assert ds["id"] == [content_id(p, h) for p, h in zip(premises, hypotheses)]
    assert len(set(ds["id"])) == 9
    # the same rows from the folder given as a file (load_file), and again: the ids are stable
    again = load_file(str(folder), NLI, text_fields=get_task("mnli").text_fields)
    assert again.to_dict() == ds.to_dict()


def test_the_sets_are_asked_for_by_name_or_with_their_folder(tmp_path):
    task = get_task("mnli")
    folder = copy_fixture(tmp_path)
    specs = ("mnli_hard_matched", f"mnli_hard_mismatched={folder}")
    files = SplitFiles(**mnli_files(tmp_path), ood_files=specs, no_default_ood=True, data_dir=str(FIXTURES))
    _, _, ood = load_splits(task, files, None)
    (by_name, named_rows), (by_path, path_rows) = ood
    assert (by_name.name, by_name.display_name, by_name.source) == (
        "mnli_hard_matched",
        "MNLI-m hard",
        task.optional_ood[0].source,
    )
    assert (by_path.name, by_path.display_name, by_path.source.local_paths) == (
        "mnli_hard_mismatched",
        "MNLI-mm hard",
        (str(folder),),
    )
    assert named_rows.to_dict() == path_rows.to_dict() and len(named_rows) == 9
    # without --data_dir the name alone has no files: the error names the folder to give
    with pytest.raises(MissingInputError, match=r"mnli_hard_matched is not on the Hub; pass --data_dir containing"):
        load_splits(task, SplitFiles(**mnli_files(tmp_path), ood_files=specs[:1], no_default_ood=True), None)


def test_line_ends_are_only_newlines(tmp_path):
    folder = copy_fixture(tmp_path)
    s1 = lines(folder / "s1.test")
    s1[0] = "A premise with a line separator \u2028 inside ."
    (folder / "s1.test").write_bytes(("\r\n".join(s1) + "\r\n").encode("utf-8"))
    ds = load_file(str(folder), NLI)
    assert len(ds) == 9 and ds["sentence1"] == s1


# --- refusals: the file, the line, the fix


def test_files_of_different_lengths_are_refused_naming_the_lines(tmp_path):
    folder = copy_fixture(tmp_path)
    (folder / "s2.test").write_text("\n".join(lines(folder / "s2.test")[:7]) + "\n")
    with pytest.raises(InputError) as caught:
        load_file(str(folder), NLI)
    message = str(caught.value)
    assert "s1.test has 9 lines, s2.test has 7 lines, labels.test has 9 lines" in message
    assert f"line 8 of {folder / 's1.test'} has no line in ['s2.test']" in message
    assert "copy the folder again from its source" in message


def test_an_empty_file_is_refused(tmp_path):
    folder = copy_fixture(tmp_path)
    (folder / "labels.test").write_text("")
    with pytest.raises(InputError, match=rf"{folder / 'labels.test'} is empty: .* one line per example"):
        load_file(str(folder), NLI)


def test_a_missing_file_is_refused(tmp_path):
    folder = copy_fixture(tmp_path)
    (folder / "s2.test").unlink()
    with pytest.raises(MissingInputError, match=rf"{folder} has no s2.test: .*'s1.test', 's2.test', 'labels.test'"):
        load_file(str(folder), NLI)


def test_an_unknown_label_word_is_refused_naming_its_file_and_line(tmp_path):
    folder = copy_fixture(tmp_path)
    words = lines(folder / "labels.test")
    words[3] = "contradicton"
    (folder / "labels.test").write_text("\n".join(words) + "\n")
    with pytest.raises(InputError) as caught:
        load_file(str(folder), NLI)
    assert str(caught.value) == (
        f"{folder / 'labels.test'} line 4: unknown label 'contradicton'; expected one of {list(NLI)}"
    )


def test_a_label_left_out_by_task_labels_is_refused_naming_its_line(tmp_path):
    data_dir = tmp_path / "data"
    shutil.copytree(FIXTURES / MATCHED, data_dir / MATCHED)
    with pytest.raises(InputError, match=r"labels.test line 1: label 'neutral' is not among the labels"):
        load_hard("mnli_hard_matched", data_dir, task_labels="entailment,contradiction")


# --- the real folders


@pytest.mark.parametrize("name", sorted(REAL))
def test_the_real_folders_read_in_full(name):
    folder_name, rows, documented = REAL[name]
    folder = DATA_DIR / folder_name
    if not folder.is_dir():
        pytest.skip(f"real data not found at {folder}")
    words = lines(folder / "labels.test")
    premises, hypotheses = lines(folder / "s1.test"), lines(folder / "s2.test")
    ds = load_hard(name, DATA_DIR)
    assert len(ds) == len(words) == rows
    assert Counter(NLI[y] for y in ds["label"]) == Counter(words) == documented
    assert ds["sentence1"] == premises and ds["sentence2"] == hypotheses
    assert len(set(ds["id"])) == rows


@pytest.mark.parametrize("name,dev", [("mnli_hard_matched", "dev_matched"), ("mnli_hard_mismatched", "dev_mismatched")])
def test_the_real_hard_rows_are_the_hard_rows_of_the_dev_set(name, dev):
    """PROVENANCE.md §2: the rows of mnli/dev_*.tsv with hard=1, in order, are the hard folder's: the same labels,
    and the same premise (sentence1) and hypothesis (sentence2) but for a few tokenized apart ("$ 2 , 000")."""
    dev_file, folder = DATA_DIR / "mnli" / f"{dev}.tsv", DATA_DIR / REAL[name][0]
    if not (dev_file.is_file() and folder.is_dir()):
        pytest.skip(f"real data not found at {DATA_DIR}")
    with open(dev_file, encoding="utf-8", newline="") as f:
        hard = [r for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE) if r["hard"] == "1"]
    ds = load_hard(name, DATA_DIR)
    assert [NLI[y] for y in ds["label"]] == [r["label"] for r in hard]

    def same(read: list[str], column: str) -> float:
        return sum(a.replace(" ", "") == r[column].replace(" ", "") for a, r in zip(read, hard, strict=True)) / len(
            hard
        )

    assert same(ds["sentence1"], "premise") > 0.999 and same(ds["sentence2"], "hypothesis") > 0.999


# --- a run evaluates them under their own names


def test_a_run_reports_a_hard_subset_under_its_name(pretrained, data_dir, tmp_path):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from hf_srnets.commands.glue_sparse import main

    folder = data_dir / MATCHED
    if not folder.is_dir():
        pytest.skip(f"real data not found at {folder}")
    out = tmp_path / "out"
    extra = ("--max_steps", "2", "--do_train", "--no_default_ood", "--ood_file", f"mnli_hard_matched={folder}")
    results = main(mnli_run_args(pretrained, data_dir, out, *extra, train=24, eval=16, ood=30, batch=8))
    saved = json.loads((out / "all_results.json").read_text())
    assert saved["eval_mnli_hard_matched_examples"] == 30
    assert saved["eval_mnli_hard_matched_accuracy"] == results["eval_mnli_hard_matched_accuracy"]
    assert not any(key.startswith("eval_hans") for key in saved)
    # the 30 rows are spread evenly over the 4,573 lines, first and last included
    picked = [round(k * (4_573 - 1) / (30 - 1)) for k in range(30)]
    premises, hypotheses = lines(folder / "s1.test"), lines(folder / "s2.test")
    words = lines(folder / "labels.test")
    predictions = [json.loads(line) for line in (out / "eval_predictions" / "mnli_hard_matched.jsonl").open()]
    assert [row["label"] for row in predictions] == [words[i] for i in picked]
    model = AutoModelForSequenceClassification.from_pretrained(out)
    tokenizer = AutoTokenizer.from_pretrained(pretrained)
    first, second = [premises[i] for i in picked], [hypotheses[i] for i in picked]
    reported = saved["eval_mnli_hard_matched_accuracy"]
    assert_run_predictions_match_hand(out, "mnli_hard_matched", reported, model, tokenizer, first, second)
    card = (out / "README.md").read_text()
    assert "| OOD evaluation | mnli_hard_matched | local file `MNLIMatchedHardWithHardTest` |" in card
    assert "30 rows, evenly spaced (--max_ood_samples 30)" in card
    assert f"| mnli_hard_matched | accuracy | {100 * reported:.2f} |" in card


def test_the_command_line_takes_a_registered_set_by_name_alone(tmp_path):
    from hf_srnets.arguments import parse_args, validate_args

    base = ["--model_name_or_path", "m", "--task", "mnli", "--output_dir", str(tmp_path)]
    validate_args(parse_args([*base, "--ood_file", "mnli_hard_matched", "mnli_hard_mismatched"]))  # no error
    with pytest.raises(InputError, match=r"no evaluation set 'mnli_hard'; its registered sets are \['hans', "):
        validate_args(parse_args([*base, "--ood_file", "mnli_hard"]))
