"""Greedy search with word importance ranking (TextAttack's `GreedyWordSwapWIR`) for an untargeted goal.

Goal (TextAttack's `UntargetedClassification`): with `p(y | x)` the victim's probabilities and `y` the gold
label, the score of a text is `1 - p(y | x')` and the attack succeeds when `argmax p(. | x') != y`. An example
whose original prediction is already wrong is "skipped" (one query).

Search (Jin et al. 2020, §3.1): the importance of word `i` is the score of the text with `i` deleted
(`wir="delete"`) or replaced by "[UNK]" (`wir="unk"`), over the modifiable words (one batched query). Words are
visited most important first; at each, all candidates of the transformation that satisfy the constraints are
scored in ONE batched query (candidates ordered by text, as TextAttack sorts them), and the best one replaces
the current text if it raises the score. The search stops at the first success, choosing among the candidates
of that step, in descending score up to the first unsuccessful one, the one most similar to the reference text
(when a sentence-similarity constraint gave scores), else the highest-scoring one. It also stops when the
classifier's `query_budget` is reached (each batch is cut to the queries left).

Queries are counted by the classifier as TextAttack's goal function counts them: every text submitted (the
original, each leave-one-out text, each candidate), cached or not.
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
        frozen_columns: Collection[int] = (),
    ) -> None:
        if wir not in WIR_METHODS:
            raise ValueError(f"wir={wir!r}: use one of {WIR_METHODS}")
        self.transformation = transformation
        self.constraints = list(constraints)
        self.stopwords = stopwords
        self.wir = wir
        self.frozen_columns = tuple(frozen_columns)

    def rank(self, goal: UntargetedGoal, text: AttackedText) -> list[int]:
        """Modifiable word indices, most important first (one batched query)."""
        indices = modifiable_indices(text, self.stopwords, self.frozen_columns)
        leave_one = [text.delete(i) if self.wir == "delete" else text.replace(i, UNK) for i in indices]
        scores = [goal.score(s) for s in goal.query(leave_one)]
        order = np.argsort(-np.asarray(scores), kind="stable")
        return [indices[j] for j in order]

    def candidates(self, current: AttackedText, original: AttackedText, index: int) -> tuple[list, np.ndarray | None]:
        """Valid candidate texts for slot `index`, ordered by text as TextAttack orders them, and their sentence
        similarities (None without that constraint)."""
        texts = [current.replace(index, w) for w in self.transformation(current, index)]
        sims = None
        for constraint in self.constraints:
            if not texts:
                break
            keep = constraint.check(texts, current, original, index)
            if isinstance(constraint, SentenceSimilarity):
                sims = constraint.last_scores
            sims = None if sims is None else sims[keep]
            texts = [t for t, k in zip(texts, keep) if k]
        order = sorted(range(len(texts)), key=lambda j: texts[j].text)
        return [texts[j] for j in order], (None if sims is None else sims[order])

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
            ranked = np.argsort(-scores, kind="stable")
            if scores[ranked[0]] <= goal.score(current):
                continue
            current = results[ranked[0]]
            if goal.succeeded(current):
                return current if sims is None else self._most_similar(goal, results, ranked, sims)
        return current

    @staticmethod
    def _most_similar(goal: UntargetedGoal, results: list[_Scored], ranked: np.ndarray, sims: np.ndarray) -> _Scored:
        """TextAttack's pick: over the results in descending score up to the first unsuccessful one, the first
        of highest similarity."""
        best, best_sim = results[ranked[0]], -np.inf
        for j in ranked:
            if not goal.succeeded(results[j]):
                break
            if sims[j] > best_sim:
                best, best_sim = results[j], sims[j]
        return best


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
