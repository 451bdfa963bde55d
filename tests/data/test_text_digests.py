"""text_digests: the digest of an example's text is computed here by hand (hashlib over the fields of the published
MNLI file), and a file whose rows carry digests on some rows only, or malformed ones, is refused."""

import csv
import hashlib
import json

import pytest

from hf_srnets.data import get_task, load_file, write_predictions
from hf_srnets.data.text_digests import dataset_digests, read_text_digests, text_digest
from hf_srnets.errors import InputError

MNLI = get_task("mnli")


def raw_rows(path, n):
    """The first `n` rows of a published MNLI TSV, read with the csv module alone (no quoting: PROVENANCE.md)."""
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [row for _, row in zip(range(n), reader)]


def by_hand(first: str, second: str | None) -> str:
    text = first + "\x1f" + (second if second is not None else "")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def test_digest_is_the_sha256_of_the_published_texts(data_dir, tmp_path):
    path = data_dir / "mnli" / "dev_matched.tsv"
    rows = raw_rows(path, 5)
    loaded = load_file(str(path), MNLI.label_names, aliases=MNLI.label_aliases).select(range(5))
    expected = [by_hand(r["premise"], r["hypothesis"]) for r in rows]
    assert expected[0] == "361a5ed93dbb3f32"  # "The new rights are nice enough" / "Everyone really likes ..."
    assert dataset_digests(loaded) == expected
    out = tmp_path / "p.jsonl"
    write_predictions(out, loaded["id"], [[0.2, 0.3, 0.5]] * 5, dataset_digests(loaded))
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["id"], r["text_digest"]) for r in written] == [(r["idx"], d) for r, d in zip(rows, expected)]
    assert read_text_digests(out) == {r["idx"]: d for r, d in zip(rows, expected)}


def test_single_text_digest_has_an_empty_second_text():
    assert text_digest("a film .") == by_hand("a film .", None) == by_hand("a film .", "")
    assert text_digest("a", "b") != text_digest("a b", None)


def test_files_without_digests_read_as_empty_and_half_digested_files_are_refused(tmp_path):
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps({"id": "0", "probs": [0.5, 0.5]}) + "\n")
    assert read_text_digests(old) == {}
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(
        json.dumps({"id": "0", "probs": [0.5, 0.5], "text_digest": by_hand("x", "y")}) + "\n"
        + json.dumps({"id": "1", "probs": [0.5, 0.5]}) + "\n"
    )  # fmt: skip
    with pytest.raises(InputError, match=r"mixed\.jsonl:2: id '1' has no text_digest but other rows have one"):
        read_text_digests(mixed)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "0", "probs": [0.5, 0.5], "text_digest": "xyz"}) + "\n")
    with pytest.raises(InputError, match=r"bad\.jsonl:1: text_digest must be 16 hex digits, got 'xyz'"):
        read_text_digests(bad)
