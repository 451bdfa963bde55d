"""hf_srnets.attack.per_example: committed copies of attack results and paired differences between two models,
checked against counts done by hand."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from hf_srnets.attack.base import AttackResult
from hf_srnets.attack.per_example import outcomes, paired_outcomes, save_attack_copy, without_text
from hf_srnets.attack.results import ResultRecord

NAMES = {"s": "skipped", "f": "failed", "u": "successful"}


def write_attack(run_dir: Path, recipe: str, letters: str, first_id: int = 0) -> Path:
    """attack_<recipe>.jsonl as run_attack.py writes it, one sentence per letter: s(kipped), f(ailed), u(successful)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"type": "header", "format": 1, "settings": {"recipe": recipe}})]
    for i, letter in enumerate(letters, first_id):
        result = AttackResult(
            ("a sentence",), ("a phrase",), 1, 0 if letter == "s" else 1, None, NAMES[letter], 5, 0, 2
        )
        lines.append(ResultRecord(i, f"mnli-{i}", recipe, result).to_json())
    path = run_dir / f"attack_{recipe}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_committed_copy_has_no_sentences_and_the_same_outcomes(tmp_path) -> None:
    source = write_attack(tmp_path / "run", "textfooler", "sfu")
    copy = save_attack_copy(tmp_path / "run", "textfooler", tmp_path / "saved")
    assert copy == tmp_path / "saved" / "attack_textfooler.jsonl.gz"
    rows = [json.loads(line) for line in gzip.decompress(copy.read_bytes()).splitlines()]
    assert not any("original" in row or "perturbed" in row for row in rows)
    assert "a sentence" in source.read_text() and b"a sentence" not in gzip.decompress(copy.read_bytes())
    assert outcomes(tmp_path / "saved", "textfooler") == outcomes(tmp_path / "run", "textfooler")
    assert outcomes(tmp_path / "run", "textfooler") == {"mnli-0": "skipped", "mnli-1": "failed", "mnli-2": "successful"}


def test_saving_twice_and_saving_a_copy_give_the_same_bytes(tmp_path) -> None:
    write_attack(tmp_path / "run", "textbugger", "fuusf")
    first = save_attack_copy(tmp_path / "run", "textbugger", tmp_path / "a").read_bytes()
    assert save_attack_copy(tmp_path / "run", "textbugger", tmp_path / "b").read_bytes() == first
    assert save_attack_copy(tmp_path / "a", "textbugger", tmp_path / "c").read_bytes() == first
    assert save_attack_copy(tmp_path / "run", "textfooler", tmp_path / "d") is None


def test_without_text_keeps_every_other_field() -> None:
    row = {"type": "result", "id": "x", "original": ["a"], "perturbed": ["b"], "outcome": "failed", "queries": 3}
    assert json.loads(without_text(json.dumps(row).encode())) == {
        "type": "result",
        "id": "x",
        "outcome": "failed",
        "queries": 3,
    }


def test_paired_differences_are_the_hand_counts(tmp_path) -> None:
    # model A: f f u u s -> clean 4/5, under attack 2/5, success 2/4; model B: f u u s s -> 3/5, 1/5, 2/3
    write_attack(tmp_path / "a", "textfooler", "ffuus")
    write_attack(tmp_path / "b", "textfooler", "fuuss")
    pair = (outcomes(tmp_path / "a", "textfooler"), outcomes(tmp_path / "b", "textfooler"))
    intervals, n = paired_outcomes([pair], resamples=200)
    assert n == 5
    assert intervals["clean"].difference == pytest.approx(4 / 5 - 3 / 5)
    assert intervals["aua"].difference == pytest.approx(2 / 5 - 1 / 5)
    assert intervals["suc"].difference == pytest.approx(2 / 4 - 2 / 3)
    for interval in intervals.values():
        assert interval.low <= interval.difference <= interval.high


def test_only_the_sentences_both_attacked_are_paired(tmp_path) -> None:
    write_attack(tmp_path / "a", "textfooler", "ffuus")  # ids 0-4
    write_attack(tmp_path / "b", "textfooler", "ff", first_id=3)  # ids 3-4: A has u, s there
    pair = (outcomes(tmp_path / "a", "textfooler"), outcomes(tmp_path / "b", "textfooler"))
    intervals, n = paired_outcomes([pair], resamples=200)
    assert n == 2
    assert intervals["aua"].difference == pytest.approx(0 / 2 - 2 / 2)
    write_attack(tmp_path / "c", "textfooler", "ff", first_id=10)
    with pytest.raises(ValueError, match="no sentence in common"):
        paired_outcomes([(pair[0], outcomes(tmp_path / "c", "textfooler"))])
