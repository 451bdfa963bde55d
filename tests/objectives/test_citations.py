"""Citations live with the objectives: each loss's BibTeX keys, and the card's Citation section built from them."""

import pytest

from hf_srnets.losses import LOSSES
from hf_srnets.objectives import build_objective, citations_for
from hf_srnets.publish.card import render_model_card
from hf_srnets.publish.card_facts import CardFacts
from hf_srnets.resources.citations import BIBTEX, PACKAGE_CITATION, format_bibtex

CARD_CITATIONS = {  # what the model cards have cited since the losses landed
    "ce": ["winwin"],
    "poe": ["winwin", "clark"],
    "reweight": ["winwin", "clark"],
    "confreg": ["winwin", "utama"],
}


@pytest.mark.parametrize("name", sorted(CARD_CITATIONS))
def test_citations_of_a_loss_by_name_loss_and_objective(name):
    objective = build_objective(name)
    assert citations_for(name) == citations_for(objective) == citations_for(objective.loss) == CARD_CITATIONS[name]


def test_unknown_loss_cites_the_package_paper_only():
    assert citations_for("some-other-package-loss") == citations_for(None) == [PACKAGE_CITATION] == ["winwin"]


def test_every_registered_loss_has_bibtex_for_its_citations():
    for name, cls in LOSSES.items():
        assert cls.citations, name
        assert set(cls.citations) <= set(BIBTEX), name


def test_format_bibtex_joins_entries_and_names_missing_keys():
    text = format_bibtex(key for key in ["winwin", "utama"])
    assert text == BIBTEX["winwin"] + "\n\n" + BIBTEX["utama"]
    assert text.startswith("@inproceedings{liu2022winwin,") and "utama2020mind" in text
    with pytest.raises(KeyError, match="nobody2024"):
        format_bibtex(["winwin", "nobody2024"])


@pytest.mark.parametrize("name", sorted(CARD_CITATIONS))
def test_model_card_cites_what_the_objective_cites(name):
    card = render_model_card(CardFacts(task="mnli", loss=name, title="t"))
    assert format_bibtex(citations_for(name)) in card
    for key in set(BIBTEX) - set(CARD_CITATIONS[name]):
        assert BIBTEX[key] not in card, key
