"""GreedyWordSwapWIR and the untargeted goal (TextAttack's search and goal, Jin et al. 2020 §3.1)."""

from __future__ import annotations

import numpy as np
import pytest
from attack.test_search_helpers import ConstantEncoder, LexiconClassifier, toy_embedding

from hf_srnets.attack.attacked_text import AttackedText
from hf_srnets.attack.constraints import SentenceSimilarity, modifiable_indices
from hf_srnets.attack.resources import TEXTFOOLER_STOPWORDS as STOPWORDS
from hf_srnets.attack.search import GreedyWordSwapWIR, UntargetedGoal, run_attack
from hf_srnets.attack.transformations import WordSwapEmbedding


def make_search(wir="delete", constraints=()):
    return GreedyWordSwapWIR(WordSwapEmbedding(toy_embedding(), 5), list(constraints), STOPWORDS, wir=wir)


def test_wir_order_is_descending_deletion_score_in_one_batched_call():
    clf = LexiconClassifier()
    text = AttackedText.from_text(("the plot was fine but the movie was good",))
    goal = UntargetedGoal(clf, label=1)
    order = make_search().rank(goal, text)
    assert len(clf.calls) == 1
    words = [text.words[i] for i in order]
    # deleting "good" (weight 3) hurts most, then "movie" (.2) ... "plot" (-0.1) helps: last
    assert words == ["good", "fine", "movie", "plot"]
    scores = [1 - clf([text.delete(i).texts])[0, 1] for i in order]
    assert scores == sorted(scores, reverse=True)


def test_unk_ranking_replaces_by_unk_token():
    clf = LexiconClassifier()
    text = AttackedText.from_text(("good movie",))
    make_search(wir="unk").rank(UntargetedGoal(clf, 1), text)
    assert clf.calls[0] == [("[UNK] movie",), ("good [UNK]",)]


def test_stopwords_and_modified_words_are_not_modifiable():
    text = AttackedText.from_text(("the movie is not good",)).replace(1, "film")
    assert [text.words[i] for i in modifiable_indices(text, STOPWORDS)] == ["good"]


def test_candidates_of_a_position_are_one_classifier_call_and_success_counts_queries():
    clf = LexiconClassifier()
    result = run_attack(make_search(), ("a good movie",), 1, clf)
    # 1 original + 1 ranking batch (good, movie) + 1 batch of good's candidates (fine, bad, film?) -> success
    assert [len(c) for c in clf.calls][:2] == [1, 2]
    assert len(clf.calls) == 3
    assert result.outcome == "successful"
    assert result.perturbed == ("a bad movie",)
    assert result.words_changed == 1 and result.num_words == 3
    assert result.num_queries == clf.num_queries == sum(len(c) for c in clf.calls)
    assert result.perturbed_prediction == 0 and result.original_prediction == 1


def test_never_flipping_classifier_fails_after_trying_every_word():
    clf = LexiconClassifier(weights={"good": 1.0}, bias=20.0)
    result = run_attack(make_search(), ("a good movie",), 1, clf)
    assert result.outcome == "failed"
    assert result.perturbed_prediction == 1


def test_misclassified_example_is_skipped_with_one_query():
    clf = LexiconClassifier()
    result = run_attack(make_search(), ("a bad movie",), 1, clf)
    assert result.outcome == "skipped" and result.num_queries == 1 and result.perturbed is None


def test_query_budget_stops_the_search():
    clf = LexiconClassifier(query_budget=2)
    result = run_attack(make_search(), ("a good movie",), 1, clf)
    assert clf.num_queries == 2 and result.outcome == "failed"


def test_a_frozen_premise_is_never_perturbed():
    clf = LexiconClassifier()
    search = GreedyWordSwapWIR(WordSwapEmbedding(toy_embedding(), 5), [], STOPWORDS, frozen_columns=(0,))
    result = run_attack(search, ("a good movie", "a good movie"), 1, clf)
    assert result.outcome == "successful"
    assert result.perturbed[0] == "a good movie" and result.perturbed[1] != "a good movie"
    assert all(t[0] == "a good movie" for call in clf.calls for t in call)


def test_most_similar_successful_candidate_is_chosen():
    class Encoder(ConstantEncoder):
        def encode(self, sentences):  # "awful" is closer to the reference than "bad"
            return np.array([[1.0, 0.0] if "awful" in s or "good" in s else [0.6, 0.8] for s in sentences])

    embedding = toy_embedding()
    embedding = type(embedding)([*embedding.words, "awful"], np.vstack([embedding.matrix, [0.78, -0.62, 0.0]]))
    search = GreedyWordSwapWIR(
        WordSwapEmbedding(embedding, 5), [SentenceSimilarity(Encoder(), 0.1, "cosine")], STOPWORDS
    )
    result = run_attack(search, ("a good movie",), 1, LexiconClassifier(weights={"good": 3, "bad": -9, "awful": -4}))
    assert result.perturbed == ("a awful movie",)


def test_bad_wir_method_is_rejected():
    with pytest.raises(ValueError, match="wir"):
        make_search(wir="gradient")
