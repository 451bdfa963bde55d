"""Greedy search with word importance ranking (TextAttack's `GreedyWordSwapWIR`) for an untargeted goal.

Goal (TextAttack's `UntargetedClassification`): with `p(y | x)` the victim's probabilities and `y` the gold
label, the score of a text is `1 - p(y | x')` and the attack succeeds when `argmax p(. | x') != y`. An example
whose original prediction is already wrong is "skipped" (one query).

Search (Jin et al. 2020, §3.1): the importance of word `i` is the score of the text with `i` deleted
(`wir="delete"`) or replaced by "[UNK]" (`wir="unk"`), over the modifiable words (one batched query). Words are
visited most important first; at each, all candidates of the transformation that satisfy the constraints are
scored in ONE batched query, and the best one replaces the current text if it raises the score. The search
stops at the first success, choosing among the successful candidates of that step the one most similar to the
reference text (when a sentence-similarity constraint gave scores), else the highest-scoring one. It also
stops when the classifier's `query_budget` is reached (each batch is cut to the queries left).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from .attacked_text import AttackedText
from .base import AttackResult, Classifier, Text
from .constraints import Constraint, SentenceSimilarity, modifiable_indices
from .transformations import Transformation

WIR_METHODS = ("delete", "unk")
UNK = "[UNK]"


@dataclass
class _Scored:
    text: AttackedText
    probs: np.ndarray


class UntargetedGoal:
    """Query the classifier within its budget; score `1 - p(label)`; success when the prediction != label."""

    def __init__(self, classifier: Classifier, label: int) -> None:
        self.classifier = classifier
        self.label = label

    @property
    def budget_left(self) -> int | None:
        budget = getattr(self.classifier, "query_budget", None)
        return None if budget is None else max(budget - self.classifier.num_queries, 0)

    def query(self, texts: Sequence[AttackedText]) -> list[_Scored]:
        """Probabilities of `texts` (cut to the remaining budget) in one classifier call."""
        left = self.budget_left
        texts = list(texts) if left is None else list(texts)[:left]
        if not texts:
            return []
        probs = np.asarray(self.classifier([t.texts for t in texts]))
        return [_Scored(t, p) for t, p in zip(texts, probs)]

    def score(self, scored: _Scored) -> float:
        return float(1.0 - scored.probs[self.label])

    def succeeded(self, scored: _Scored) -> bool:
        return int(np.argmax(scored.probs)) != self.label


class GreedyWordSwapWIR:
    """The search (see the module docstring)."""

    def __init__(
        self,
        transformation: Transformation,
        constraints: Sequence[Constraint],
        stopwords: Collection[str],
        wir: str = "delete",
    ) -> None:
        if wir not in WIR_METHODS:
            raise ValueError(f"wir={wir!r}: use one of {WIR_METHODS}")
        self.transformation = transformation
        self.constraints = list(constraints)
        self.stopwords = stopwords
        self.wir = wir

    def rank(self, goal: UntargetedGoal, text: AttackedText) -> list[int]:
        """Modifiable word indices, most important first (one batched query)."""
        indices = modifiable_indices(text, self.stopwords)
        leave_one = [text.delete(i) if self.wir == "delete" else text.replace(i, UNK) for i in indices]
        scores = [goal.score(s) for s in goal.query(leave_one)]
        order = np.argsort(-np.asarray(scores), kind="stable")
        return [indices[j] for j in order]

    def candidates(self, current: AttackedText, original: AttackedText, index: int) -> tuple[list, np.ndarray | None]:
        """Valid candidate texts for slot `index` and their sentence similarities (None without that constraint)."""
        texts = [current.replace(index, w) for w in self.transformation(current, index)]
        sims = None
        for constraint in self.constraints:
            if not texts:
                break
            keep = constraint.check(texts, current, original, index)
            if isinstance(constraint, SentenceSimilarity):
                sims = constraint.last_scores[keep]
            texts = [t for t, k in zip(texts, keep) if k]
        return texts, sims

    def search(self, goal: UntargetedGoal, original: AttackedText, start: _Scored) -> _Scored:
        """The best text found: a successful one, or the last improvement."""
        current = start
        for index in self.rank(goal, original):
            if goal.budget_left == 0:
                break
            texts, sims = self.candidates(current.text, original, index)
            results = goal.query(texts)
            if not results:
                continue
            scores = np.array([goal.score(r) for r in results])
            best = int(np.argmax(scores))
            if scores[best] <= goal.score(current):
                continue
            current = results[best]
            if goal.succeeded(current):
                wins = [j for j, r in enumerate(results) if goal.succeeded(r)]
                if sims is not None:
                    return results[max(wins, key=lambda j: (sims[j], scores[j]))]
                return current
        return current


def run_attack(search: GreedyWordSwapWIR, text: Text, label: int, classifier: Classifier) -> AttackResult:
    """Attack one example: skip it if misclassified, else search; count queries with the classifier."""
    goal = UntargetedGoal(classifier, label)
    original = AttackedText.from_text(text)
    results = goal.query([original])
    if not results:
        raise ValueError("the classifier's query budget is used up before the attack; reset num_queries per example")
    start = results[0]
    prediction = int(np.argmax(start.probs))
    common = {"original": tuple(text), "label": label, "original_prediction": prediction}
    if prediction != label:
        return AttackResult(
            **common,
            perturbed=None,
            perturbed_prediction=None,
            outcome="skipped",
            num_queries=classifier.num_queries,
            words_changed=0,
            num_words=original.num_words,
        )
    final = search.search(goal, original, start)
    return AttackResult(
        **common,
        perturbed=final.text.texts,
        perturbed_prediction=int(np.argmax(final.probs)),
        outcome="successful" if goal.succeeded(final) else "failed",
        num_queries=classifier.num_queries,
        words_changed=len(final.text.modified),
        num_words=original.num_words,
    )
