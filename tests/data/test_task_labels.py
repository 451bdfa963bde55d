"""`--task_labels` on any task: `resolve_task(name, task_labels)` restricts/reorders a task's labels."""

import pytest

from hf_srnets.data import canonicalize, get_task, load_file, resolve_task
from hf_srnets.data.tasks import HANS_LABELS


def test_two_way_fever_and_its_ood_sets():
    task = resolve_task("fever", "SUPPORTS,REFUTES")
    assert task.name == "fever" and task.label_names == ("SUPPORTS", "REFUTES") and task.num_labels == 2
    assert all(s.label_names == ("SUPPORTS", "REFUTES") for s in task.ood)  # the symmetric sets follow
    assert task.bias_model == "claim" and task.metric == "accuracy"


def test_aliases_case_and_sequences_resolve_to_the_tasks_names():
    assert resolve_task("fever", ["supported", "refuted"]).label_names == ("SUPPORTS", "REFUTES")
    assert resolve_task("fever", " nei , supports,refutes").label_names == ("NOT ENOUGH INFO", "SUPPORTS", "REFUTES")
    assert resolve_task("qqp", "duplicate,not_duplicate").label_names == ("duplicate", "not_duplicate")
    assert resolve_task("mnli", None) is get_task("mnli")
    assert resolve_task("mnli", "entailment,neutral,contradiction") is get_task("mnli")


def test_reordered_mnli_keeps_hans_and_reads_integer_ids_in_published_order():
    task = resolve_task("mnli", "contradiction,entailment,neutral")
    assert task.ood[0].label_names == HANS_LABELS  # HANS has its own labels
    rows = [
        {"id": "a", "sentence1": "p", "sentence2": "h", "label": 0},
        {"id": "b", "sentence1": "p", "sentence2": "h", "label": "neutral"},
    ]
    ds = canonicalize(rows, task.label_names, name="glue", id_label_names=task.file_label_names)
    assert ds["label"] == [1, 2]  # GLUE id 0 is entailment, now label 1


@pytest.mark.parametrize(
    "name, labels, message",
    [
        (
            "fever",
            "SUPPORTS,MAYBE",
            r"'MAYBE' is not a label of task 'fever'; its labels are \['SUPPORTS', 'REFUTES', 'NOT ENOUGH INFO'\]",
        ),
        ("fever", "SUPPORTS,supported", "named twice"),
        ("mnli", "entailment", "at least 2 labels"),
        ("custom", None, "--task custom needs --task_labels"),
        ("sst9", "a,b", "Unknown task"),
    ],
)
def test_bad_task_labels(name, labels, message):
    with pytest.raises(ValueError, match=message):
        resolve_task(name, labels)


def test_row_with_a_removed_label_is_an_error_naming_row_label_and_fix(tmp_path):
    task = resolve_task("fever", "SUPPORTS,REFUTES")
    path = tmp_path / "dev.jsonl"
    path.write_text(
        '{"id": 1, "claim": "c", "evidence": "e", "gold_label": "SUPPORTS"}\n'
        '{"id": 2, "claim": "c2", "evidence": "e2", "gold_label": "NOT ENOUGH INFO"}\n'
    )
    with pytest.raises(
        ValueError, match=r"row 1 \(id '2'\): label 'NOT ENOUGH INFO' is not among .*--task_labels; remove"
    ):
        load_file(str(path), task.label_names, aliases=task.label_aliases, excluded_labels=task.excluded_label_names)


def test_tasks_own_their_evaluators_hub_ids_and_display_names():
    from hf_srnets.data.tasks import display_name

    fever = resolve_task("fever", "SUPPORTS,REFUTES")
    assert [(s.name, s.kind, s.display_name) for s in fever.ood] == [
        ("fever_symmetric_v1", "fever_symmetric", "FEVER-Symmetric v1"),
        ("fever_symmetric_v2", "fever_symmetric", "FEVER-Symmetric v2"),
    ]  # --task_labels keeps each set's evaluator
    assert [s.kind for s in resolve_task("qqp", "duplicate,not_duplicate").ood] == ["paws", "paws"]
    assert get_task("mnli").hub_datasets == ["nyu-mll/glue", "jhu-cogsci/hans"] and get_task("fever").hub_datasets == []
    assert get_task("qqp").validation.official_rows == 40_430 and get_task("qqp").ood[0].source.official_rows is None
    names = {n: display_name(n) for n in ("mnli", "qqp", "fever", "hans", "paws_qqp", "paws_wiki", "anli-r1", "mm")}
    assert names == {
        "mnli": "MNLI",
        "qqp": "QQP",
        "fever": "FEVER",
        "hans": "HANS",
        "paws_qqp": "PAWS-QQP",
        "paws_wiki": "PAWS-Wiki",
        "anli-r1": "ANLI-r1",  # a name of no known set: upper-cased up to its first dash
        "mm": "MM",
    }
