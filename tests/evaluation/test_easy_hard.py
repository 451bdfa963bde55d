"""Easy/hard subsets of the ID dev set (Du et al. 2023, §4, appendix F, Table 6): scores by hand, where the hard
flags come from (the four sources, in the published file formats), errors and the card."""

import hashlib
import json

import numpy as np
import pytest
from datasets import Dataset

from hf_srnets.arguments.model_data_arguments import DataArguments
from hf_srnets.data import get_task, load_file
from hf_srnets.evaluation import build_evaluator, easy_hard_table, hard_flags, read_hard_flags
from hf_srnets.publish.card import render_model_card
from hf_srnets.publish.card_facts import CardFacts
from hf_srnets.runner.data import attach_hard_flags

# The header and first lines of the published mnli_hard/mnli_validation_matched_hardness.csv
HARDNESS_CSV = "idx,pairID,hardness\n0,63735n,1\n1,91383c,1\n2,755e,1\n3,78013c,1\n4,96377c,0\n5,139749c,0\n"
# The columns of the local mnli/dev_matched.tsv, with its first rows (texts shortened)
DEV_TSV = (
    "idx\tpairID\tpremise\thypothesis\tlabel\thard\n"
    "0\t63735n\tThe new rights are nice enough\tEveryone really likes the newest benefits\tneutral\t1\n"
    "4\t96377c\tyes now you know if if everybody like in August\tAugust is a black out month\tcontradiction\t0\n"
    "5\t139749c\tYou will want to try this\tThis is not worth trying\tcontradiction\t0\n"
)
MNLI = get_task("mnli")


def _dev(ids):
    return Dataset.from_dict({"id": list(ids), "label": [0] * len(ids)})


def test_scores_by_hand():
    logits = np.array([[2.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 3.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    labels = np.array([0, 2, 2, 1, 0])
    dev = Dataset.from_dict({"id": list("abcde"), "hard": [0, 0, 1, 1, 1]})
    scores = build_evaluator("easy_hard", MNLI)(logits, labels, dev)
    e2, e1, e3 = np.exp(2.0), np.e, np.exp(3.0)
    conf = [e2 / (e2 + 2), e1 / (e1 + 2), e3 / (e3 + 2), e1 / (2 * e1 + 1), 1 / 3]  # max softmax probability
    # easy: a right (argmax 0), b wrong (argmax 1, gold 2); hard: c right, d wrong (tie -> 0, gold 1), e right
    assert scores["easy_examples"] == 2 and scores["hard_examples"] == 3
    assert scores["easy_accuracy"] == pytest.approx(1 / 2)
    assert scores["hard_accuracy"] == pytest.approx(2 / 3)
    assert scores["easy_confidence"] == pytest.approx((conf[0] + conf[1]) / 2)
    assert scores["hard_confidence"] == pytest.approx((conf[2] + conf[3] + conf[4]) / 3)
    assert scores["easy_hard_gap"] == pytest.approx(1 / 2 - 2 / 3)
    only_easy = build_evaluator("easy_hard", MNLI)(logits[:2], labels[:2], {"hard": [0, 0]})
    assert only_easy["hard_examples"] == 0 and "hard_accuracy" not in only_easy and "easy_hard_gap" not in only_easy


def test_the_published_hardness_csv_joins_on_idx(tmp_path):
    path = tmp_path / "hardness.csv"
    path.write_text(HARDNESS_CSV)
    tables = read_hard_flags(path)
    assert tables["idx"]["4"] == 0 and tables["pairID"]["63735n"] == 1
    flags, source = hard_flags(_dev(["5", "0", "4"]), MNLI, str(path), None)
    assert flags == [0, 1, 0] and "hardness.csv" in source
    flags, _ = hard_flags(_dev(["96377c", "755e"]), MNLI, str(path), None)  # a dev set keyed by pairID
    assert flags == [0, 1]


def test_json_lines_of_run_sample_difficulty(tmp_path):
    path = tmp_path / "difficulty_validation.jsonl"
    rows = [
        {"id": "0", "difficulty": 0.7, "variance": 0.01, "hard": True},
        {"id": "4", "difficulty": 1.0, "hard": False},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    flags, _ = hard_flags(_dev(["4", "0"]), MNLI, str(path), None)
    assert flags == [0, 1]


def test_the_dev_sets_own_hard_column_then_the_tasks_file(tmp_path):
    dev_file = tmp_path / "dev_matched.tsv"
    dev_file.write_text(DEV_TSV)
    dev = load_file(str(dev_file), MNLI.label_names, aliases=MNLI.label_aliases)
    assert dev["id"] == ["0", "4", "5"] and "hard" in dev.column_names  # the loader keeps the column
    flags, source = hard_flags(dev, MNLI, None, None)
    assert flags == [1, 0, 0] and "own `hard` column" in source
    # without the column: the task's published split under --data_dir, joined on idx
    (tmp_path / "mnli_hard").mkdir()
    (tmp_path / "mnli_hard" / "mnli_validation_matched_hardness.csv").write_text(HARDNESS_CSV.replace(",0\n", ",1\n"))
    flags, source = hard_flags(dev.remove_columns("hard"), MNLI, None, str(tmp_path))
    assert flags == [1, 1, 1] and "Gururangan" in source
    # ...but not for another dev file (--validation_file), and nothing at all without a split
    assert hard_flags(dev.remove_columns("hard"), MNLI, None, str(tmp_path), own_dev_set=False) == (None, None)
    assert hard_flags(dev.remove_columns("hard"), MNLI, None, str(tmp_path / "none")) == (None, None)


def test_attach_replaces_the_column_with_0_1_flags(tmp_path):
    dev_file = tmp_path / "dev_matched.tsv"
    dev_file.write_text(DEV_TSV)
    dev = load_file(str(dev_file), MNLI.label_names, aliases=MNLI.label_aliases)
    attached, source = attach_hard_flags(dev, MNLI, DataArguments(task="mnli"))
    assert attached["hard"] == [1, 0, 0] and source is not None
    csv = tmp_path / "hardness.csv"
    csv.write_text(HARDNESS_CSV.replace("5,139749c,0", "5,139749c,1"))  # --hard_subset wins over the own column
    attached, _ = attach_hard_flags(dev, MNLI, DataArguments(task="mnli", hard_subset=str(csv)))
    assert attached["hard"] == [1, 0, 1]


def test_a_missing_id_names_the_file_the_id_and_the_fix(tmp_path):
    path = tmp_path / "hardness.csv"
    path.write_text(HARDNESS_CSV)
    with pytest.raises(ValueError, match=r"hardness.csv: no hard flag for dev example id '7'.*--hard_subset"):
        hard_flags(_dev(["0", "7"]), MNLI, str(path), None)
    bad = tmp_path / "bad.csv"
    bad.write_text("idx,label\n0,1\n")
    with pytest.raises(ValueError, match="hard/hardness"):
        read_hard_flags(bad)
    bad.write_text("idx,hard\n0,maybe\n")
    with pytest.raises(ValueError, match="'maybe'"):
        read_hard_flags(bad)


def test_table_and_card():
    results = {
        "eval_mnli_accuracy": 0.831,
        "eval_mnli_easy_examples": 5488,
        "eval_mnli_hard_examples": 4302,
        "eval_mnli_easy_accuracy": 0.909,
        "eval_mnli_hard_accuracy": 0.732,
        "eval_mnli_easy_confidence": 0.95,
        "eval_mnli_hard_confidence": 0.8,
        "eval_mnli_easy_hard_gap": 0.177,
        "eval_mnli_hard_subset": "the dev set's own `hard` column",
    }
    table = easy_hard_table(results, "mnli")
    assert "| easy | 5,488 | 90.90 | 95.00 |" in table and "| hard | 4,302 | 73.20 | 80.00 |" in table
    assert "Gap E − H: +17.70 points" in table
    card = render_model_card(CardFacts(task="mnli", loss="ce", title="t", results=results, id_name="mnli"))
    assert "### Easy and hard examples" in card and "by the dev set's own `hard` column" in card
    assert "| easy | 5,488 | 90.90 | 95.00 |" in card and "du2023robustness" in card
    assert easy_hard_table({"eval_mnli_accuracy": 0.8}, "mnli") == ""


def test_a_difficulty_file_of_another_dev_set_is_refused(data_dir, tmp_path):
    """difficulty_validation.jsonl rows record their texts' digest (run_sample_difficulty.py): flags made for
    dev-matched are not joined onto dev-mismatched, whose idx are the same 0..N."""
    matched = load_file(str(data_dir / "mnli" / "dev_matched.tsv"), MNLI.label_names, aliases=MNLI.label_aliases)
    mismatched = load_file(str(data_dir / "mnli" / "dev_mismatched.tsv"), MNLI.label_names, aliases=MNLI.label_aliases)
    matched, mismatched = matched.select(range(4)), mismatched.select(range(4))
    path = tmp_path / "difficulty_validation.jsonl"
    rows = []
    for k, (first, second) in enumerate(zip(matched["sentence1"], matched["sentence2"])):
        digest = hashlib.sha256(f"{first}\x1f{second}".encode()).hexdigest()[:16]
        rows.append({"id": str(k), "difficulty": 0.5, "text_digest": digest, "hard": k % 2 == 0})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    flags, _ = hard_flags(matched, MNLI, str(path), None)
    assert flags == [1, 0, 1, 0]
    with pytest.raises(
        ValueError, match=r"difficulty_validation\.jsonl: 4 of the 4 rows joined by id were made on other texts"
    ):
        hard_flags(mismatched, MNLI, str(path), None)
