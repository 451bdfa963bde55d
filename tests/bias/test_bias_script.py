"""run_bias_model.py: two-way FEVER via --task_labels, --task custom with --bias_model, --ood_file
(with --predict_file kept as its alias), and the advice when a label has no training example."""

import json
import random
from pathlib import Path

import pytest
from conftest import DATA_DIR
from prewarmed import run_python

from hf_srnets.commands import bias_model as bias_model_cli
from hf_srnets.data import read_predictions

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "data" / "fever"
SUBJECTS = ["Lake Baikal", "The Danube", "Marie Curie", "Tetris", "Mount Everest", "The Amazon", "Paris", "Mozart"]
FACTS = ["is in Europe", "was created in Japan", "is a river", "was born in Warsaw", "is the tallest mountain"]


def load_script():
    """The package module `run_bias_model.py` runs."""
    return bias_model_cli


def two_way_fever(path: Path, n: int, seed: int) -> str:
    """Two-way FEVER in the Schuster et al. format (`id` int, `gold_label`, `evidence`, `claim`): no NEI rows;
    refuted claims carry the negations that make claim-only models work on FEVER."""
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        subject, fact = rng.choice(SUBJECTS), rng.choice(FACTS)
        refuted = i % 2 == 1
        claim = (
            f"{subject} {rng.choice(['never', 'is not', 'did not'])} {fact.split(' ', 1)[1]} ."
            if refuted
            else (f"{subject} {fact} .")
        )
        row = {
            "id": 1000 + i,
            "gold_label": "REFUTES" if refuted else "SUPPORTS",
            "evidence": f"{subject} is described in many sources .",
            "claim": claim,
        }
        lines.append(json.dumps(row) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return str(path)


def test_two_way_fever_needs_task_labels_and_works_with_them(tmp_path):
    script = load_script()
    train = two_way_fever(tmp_path / "fever.train.jsonl", 120, 0)
    common = ["--task", "fever", "--train_file", train, "--output_dir", str(tmp_path / "out")]
    dev = f"--ood_file=fever_symmetric_v2={FIXTURES / 'fever_symmetric_test.jsonl'}"
    with pytest.raises(ValueError, match=r"no example of label\(s\) \[2\].*--task_labels SUPPORTS,REFUTES") as err:
        script.main([*common, dev])
    assert "NOT ENOUGH INFO" in str(err.value)
    report = script.main([*common, "--task_labels", "SUPPORTS,REFUTES", dev])
    assert report["label_names"] == ["SUPPORTS", "REFUTES"] and report["features"]["kind"] == "claim"
    train_p = read_predictions(tmp_path / "out" / "bias_train.jsonl", 2)
    assert len(train_p) == 120 and set(train_p) == {str(1000 + i) for i in range(120)}
    assert len(read_predictions(tmp_path / "out" / "bias_fever_symmetric_v2.jsonl", 2)) == 4
    assert report["splits"]["train"]["accuracy"] > 0.9  # negations give the claims away
    cal = report["splits"]["train"]["calibration"]
    assert cal["uniform_prob"] == 0.5 and not cal["near_uniform"]
    saved = json.loads((tmp_path / "out" / "bias_report.json").read_text())
    assert saved["splits"]["fever_symmetric_v2"]["calibration"]["mean_gold_prob"] is not None


def test_two_way_fever_refuses_nei_rows_by_name(tmp_path):
    train = two_way_fever(tmp_path / "train.jsonl", 40, 1)
    with open(train, "a", encoding="utf-8") as f:
        f.write(json.dumps({"id": 7, "gold_label": "NOT ENOUGH INFO", "evidence": "x .", "claim": "Paris is old ."}))
    with pytest.raises(ValueError, match="NOT ENOUGH INFO"):
        load_script().main(
            [
                "--task",
                "fever",
                "--task_labels",
                "SUPPORTS,REFUTES",
                "--train_file",
                train,
                "--output_dir",
                str(tmp_path / "out"),
            ]
        )


@pytest.mark.skipif(not (DATA_DIR / "paws").is_dir(), reason="PAWS not found (set SRNETS_DATA_DIR)")
@pytest.mark.parametrize(("bias_model", "kind"), [(None, "overlap"), ("claim", "claim")])
def test_custom_pair_task_with_chosen_features(tmp_path, bias_model, kind):
    lines = (DATA_DIR / "paws" / "paws_wiki_dev.tsv").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "train.tsv").write_text("".join(lines[:301]), encoding="utf-8")  # published columns, 300 rows
    (tmp_path / "dev.tsv").write_text(lines[0] + "".join(lines[301:401]), encoding="utf-8")
    argv = ["--task", "custom", "--task_labels", "different,paraphrase", "--train_file", str(tmp_path / "train.tsv")]
    argv += ["--predict_file", f"dev={tmp_path / 'dev.tsv'}", "--output_dir", str(tmp_path / "out")]
    report = load_script().main(argv + (["--bias_model", bias_model] if bias_model else []))
    assert report["task"] == "custom" and report["features"]["kind"] == kind
    assert len(read_predictions(tmp_path / "out" / "bias_dev.jsonl", 2)) == 100


def test_custom_task_needs_a_training_file(tmp_path):
    with pytest.raises(ValueError, match="--task custom has no default training set: pass --train_file"):
        load_script().main(["--task", "custom", "--task_labels", "a,b", "--output_dir", str(tmp_path)])


@pytest.mark.parametrize("bias_model", ["hypothesis", "cue"])
def test_vectors_for_a_bias_model_without_word_vectors_are_refused_before_any_work(tmp_path, bias_model):
    """The hypothesis-only model hashes the hypothesis's words and word pairs, the cue model counts cues: neither
    resolves word vectors, so --vectors would do nothing; it is refused before the output dir is made."""
    argv = ["--task", "mnli", "--bias_model", bias_model, "--vectors", "glove", "--output_dir", str(tmp_path / "out")]
    with pytest.raises(ValueError, match=f"--vectors glove would do nothing with --bias_model {bias_model} "):
        load_script().main(argv)
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_help_works_and_names_the_new_flags():
    done = run_python(REPO_ROOT / "run_bias_model.py", "--help", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    for flag in ("--task_labels", "--bias_model", "--ood_file", "--predict_file", "custom", "20% of the training"):
        assert flag in done.stdout, flag


def _outputs(out: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in out.iterdir() if p.is_file() and not p.name.startswith(".")}


def test_a_second_run_into_the_same_output_dir_is_refused_or_replaces_the_first_on_request(tmp_path):
    script, out = load_script(), tmp_path / "out"
    common = ["--task", "fever", "--task_labels", "SUPPORTS,REFUTES", "--output_dir", str(out), "--vectors", "train"]
    first = two_way_fever(tmp_path / "first.jsonl", 60, 0)
    dev = f"--ood_file=fever_symmetric_v2={FIXTURES / 'fever_symmetric_test.jsonl'}"
    script.main([*common, "--train_file", first, dev])
    (out / "notes.txt").write_text("mine")
    before = _outputs(out)
    assert {"bias_train.jsonl", "bias_fever_symmetric_v2.jsonl", "bias_report.json"} <= set(before)

    second = two_way_fever(tmp_path / "second.jsonl", 40, 1)  # other data, and another split to predict
    other = f"--ood_file=other={two_way_fever(tmp_path / 'other.jsonl', 10, 2)}"
    with pytest.raises(ValueError, match=r"holds the outputs of an earlier run \(bias_fever_symmetric_v2.jsonl"):
        script.main([*common, "--train_file", second, other])
    assert _outputs(out) == before  # nothing replaced

    script.main([*common, "--train_file", second, other, "--overwrite_output_dir", "true"])
    after = _outputs(out)
    assert sorted(after) == ["bias_other.jsonl", "bias_report.json", "bias_train.jsonl", "notes.txt"]  # no stale split
    assert after["notes.txt"] == "mine" and (out / "cache").is_dir()  # the user's file and the cache stay
    assert len(read_predictions(out / "bias_train.jsonl", 2)) == 40


def test_a_run_into_a_busy_output_dir_fails_at_start(tmp_path):
    from hf_srnets.training.output_dir import OutputDirError, acquire_lock

    out = tmp_path / "out"
    lock = acquire_lock(str(out))  # a run in progress
    train = two_way_fever(tmp_path / "train.jsonl", 40, 0)
    try:
        with pytest.raises(OutputDirError, match="Another run is using --output_dir"):
            load_script().main(["--task", "fever", "--task_labels", "SUPPORTS,REFUTES", "--train_file", train,
                                "--output_dir", str(out)])  # fmt: skip
    finally:
        lock.release()
    assert not list(out.iterdir())
