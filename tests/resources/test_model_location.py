"""`is_local_path`: the one rule for "Hub id or local path?" (`hf_srnets.resources.model_location`), and the
callers that used their own rule before (a card's base model, a portable name, the classifier loader)."""

import os

import pytest

from hf_srnets.compact.loading import load_pretrained_model
from hf_srnets.errors import MissingInputError
from hf_srnets.publish.card import card_metadata
from hf_srnets.publish.card_facts import CardFacts, base_weights
from hf_srnets.resources.model_location import is_local_path, looks_like_path


@pytest.mark.parametrize(
    "name, local",
    [
        ("./x", True),  # missing, but only a path starts with "."
        ("/x/does-not-exist", True),
        ("x/y/z", True),  # a Hub id has at most one "/"
        ("~/x-does-not-exist", True),
        ("x/", True),
        ("textattack/bert-base-uncased-MNLI", False),  # org/name
        ("bert-base-uncased", False),  # a bare name
        ("", False),
    ],
)
def test_names_that_do_not_exist(name, local, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing exists under a relative name
    assert is_local_path(name) is local


def test_an_existing_directory_or_file_is_local_whatever_its_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "org" / "name").mkdir(parents=True)
    (tmp_path / "bare").write_text("")
    assert is_local_path("org/name") and is_local_path("bare") and is_local_path(tmp_path / "org")
    assert not looks_like_path("org/name") and not looks_like_path("bare")  # by their shape, Hub ids


def test_a_missing_path_in_a_card_is_no_hub_id(tmp_path, monkeypatch):
    """Before, a card took a missing `./x` or `x/y/z` for a Hub id and printed it as such."""
    monkeypatch.chdir(tmp_path)
    assert base_weights("org/name", output_dir="out", for_hub=True) == ("org/name", None)
    name, note = base_weights("runs/ft/model", output_dir="out", for_hub=True)
    assert name == "ft/model" and "was a local checkpoint" in note
    # the card's metadata names a Hub base model only (before: also a missing ./x or x/y/z)
    assert card_metadata(CardFacts(title="t", task="mnli", base_model="org/name"))["base_model"] == "org/name"
    for local in ("./ft", "runs/ft/model", "/abs/ft"):
        assert "base_model" not in card_metadata(CardFacts(title="t", task="mnli", base_model=local))


def test_the_loader_refuses_a_missing_path_before_the_hub(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(MissingInputError, match="does not exist"):
        load_pretrained_model(os.path.join("runs", "ft", "merged"))
