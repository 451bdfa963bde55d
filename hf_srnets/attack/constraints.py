"""Constraints: which words may be modified, and which candidate texts are valid (TextAttack's constraints).

Words are those of all texts of the input joined (`AttackedText`), as in TextAttack.

Pre-transformation (`modifiable_indices`): a word may be modified unless it is a stopword (`StopwordModification`:
exact, case-sensitive membership, so "The" is modifiable when only "the" is listed), was already modified
(`RepeatModification`) or lies in a frozen text (TextFooler's `InputColumnModification(["premise",
"hypothesis"], {"premise"})`: the first text of a pair is never modified; TextBugger and BERT-Attack may modify
both).

Post-transformation, each a `Constraint` whose `check(candidates, current, original, index)` returns a keep mask:

- `PartOfSpeech`: the candidate word's tag in its context (4 words each side of the ORIGINAL text) must equal
  the original word's tag, NOUN <-> VERB allowed (TextAttack `PartOfSpeech(allow_verb_noun_swap=True)`).
- `MaxWordsPerturbed`: at most `ceil(max_percent * min(words of candidate, words of original))` modified words
  (BERT-Attack: 40 %), counted over all texts.
- `SentenceSimilarity`: `sim(E(reference), E(candidate)) >= threshold` (TextAttack's sentence-encoder
  constraint) where E is the sentence encoder, sim is cosine or angular (`sentence_encoder.similarity`), the
  reference is the original text or the current one (`compare_against_original`); the encoded text is the
  texts joined by a line break, or with `window_size` the stretch of it spanning the `window_size` words around
  the modified word (`AttackedText.window`). With `skip_text_shorter_than_window`, a candidate of fewer words
  than the window (all texts counted) passes with similarity 1. The similarities are kept in `last_scores`
  (the search prefers the most similar successful candidate).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

import numpy as np

from .attacked_text import AttackedText
from .pos import PosTagger, compatible_pos
from .sentence_encoder import SentenceEncoder, similarity


def modifiable_indices(
    text: AttackedText, stopwords: Collection[str], frozen_columns: Collection[int] = ()
) -> list[int]:
    """Indices of words that may be modified: not stopwords (case-sensitive), not already modified, not in a
    frozen text of a pair (`frozen_columns`: text positions; a single text is never frozen)."""
    frozen = {
        i
        for c in frozen_columns
        if c < len(text.column_sizes) > 1
        for i in range(text.column_starts[c], text.column_starts[c] + text.column_sizes[c])
    }
    return [i for i, w in enumerate(text.words) if w not in stopwords and i not in text.modified and i not in frozen]


class Constraint:
    """A post-transformation constraint."""

    def check(
        self, candidates: Sequence[AttackedText], current: AttackedText, original: AttackedText, index: int
    ) -> np.ndarray:
        raise NotImplementedError


class MaxWordsPerturbed(Constraint):
    """At most `ceil(max_percent * min(candidate words, original words))` words modified (all texts)."""

    def __init__(self, max_percent: float) -> None:
        if not 0 < max_percent <= 1:
            raise ValueError(f"max_percent={max_percent} must be in (0, 1]")
        self.max_percent = max_percent

    def check(self, candidates, current, original, index) -> np.ndarray:
        total = original.word_count()
        keep = [len(c.modified) <= math.ceil(min(c.word_count(), total) * self.max_percent) for c in candidates]
        return np.array(keep, dtype=bool)


class PartOfSpeech(Constraint):
    """Same part of speech as the original word (NOUN <-> VERB allowed), tagged in a 4-word context."""

    def __init__(self, tagger: PosTagger, allow_verb_noun_swap: bool = True, context: int = 4) -> None:
        self.tagger = tagger
        self.allow_verb_noun_swap = allow_verb_noun_swap
        self.context = context
        self._cache: dict[tuple[str, ...], str] = {}

    def _tag(self, words: tuple[str, ...], position: int) -> str:
        key = (*words, str(position))
        if key not in self._cache:
            self._cache[key] = self.tagger(list(words))[position]
        return self._cache[key]

    def check(self, candidates, current, original, index) -> np.ndarray:
        before = original.words[max(index - self.context, 0) : index]
        after = original.words[index + 1 : index + self.context]
        reference = self._tag((*before, original.words[index], *after), len(before))
        keep = []
        for cand in candidates:
            tag = self._tag((*before, *cand.words[index].split(), *after), len(before))
            keep.append(compatible_pos(reference, tag, self.allow_verb_noun_swap))
        return np.array(keep, dtype=bool)


class SentenceSimilarity(Constraint):
    """Sentence-encoder similarity to the reference text at least `threshold` (see the module docstring)."""

    def __init__(
        self,
        encoder: SentenceEncoder,
        threshold: float,
        metric: str = "angular",
        window_size: int | None = None,
        compare_against_original: bool = True,
        skip_text_shorter_than_window: bool = False,
    ) -> None:
        self.encoder = encoder
        self.threshold = threshold
        self.metric = metric
        self.window_size = window_size
        self.compare_against_original = compare_against_original
        self.skip_text_shorter_than_window = skip_text_shorter_than_window
        self.last_scores = np.zeros(0)

    def _piece(self, text: AttackedText, index: int) -> str:
        return text.text if self.window_size is None else text.window(index, self.window_size)

    def skipped(self, candidate: AttackedText) -> bool:
        """Whether the candidate is shorter than the window and passes unscored."""
        return bool(self.skip_text_shorter_than_window and self.window_size) and (
            candidate.word_count() < self.window_size
        )

    def scores(self, candidates: Sequence[AttackedText], reference: AttackedText, index: int) -> np.ndarray:
        """Similarity of each candidate to `reference` (1 for a skipped one)."""
        out = np.ones(len(candidates))
        scored = [j for j, c in enumerate(candidates) if not self.skipped(c)]
        if scored:
            pieces = [self._piece(reference, index)] + [self._piece(candidates[j], index) for j in scored]
            embeddings = self.encoder.encode(pieces)
            out[scored] = similarity(embeddings[:1], embeddings[1:], self.metric)
        return out

    def check(self, candidates, current, original, index) -> np.ndarray:
        reference = original if self.compare_against_original else current
        self.last_scores = self.scores(candidates, reference, index)
        return self.last_scores >= self.threshold
