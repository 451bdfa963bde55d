"""`AttackedText`: the input under attack as a fixed list of word slots, with the separators between them kept.

Every text of a `Text` tuple (the sentence, or premise and hypothesis) is split into words (letters, digits and
`_`, with inner apostrophes or hyphens: "don't", "well-made"); everything between words (spaces, punctuation) is
kept verbatim, so a swap changes only that word. As in TextAttack (Morris et al. 2020), the words of all texts
form ONE sequence (the premise's words first): word indices, the word count, the 15-word window of the
sentence-similarity constraint and the share of words perturbed are over premise and hypothesis joined, and
`text` is the texts joined by a line break (TextAttack's `AttackedText.text`). Which words a recipe may modify
(e.g. TextFooler keeps the premise) is the constraints' business (`constraints.modifiable_indices`).

A slot keeps its index even when an edit puts a space inside it (TextBugger's "insert space"): word indices, the
set of modified slots and `words_changed` stay well defined; `word_count()` counts words as TextAttack would
re-split the edited text.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from itertools import accumulate

from .base import Text

WORD_PATTERN = re.compile(r"\w+(?:['’\-]\w+)*")
COLUMN_JOINER = "\n"


def _split(text: str) -> tuple[list[str], list[str]]:
    words, separators, position = [], [], 0
    for match in WORD_PATTERN.finditer(text):
        separators.append(text[position : match.start()])
        words.append(match.group())
        position = match.end()
    separators.append(text[position:])
    return words, separators


@dataclass(frozen=True)
class AttackedText:
    """Words of all texts in order, the separators around them, words per text and the indices modified so far.

    For text `c` holding words `words[s:s+n]` (`s = column_starts[c]`, `n = column_sizes[c]`),
    `separators[c][k]` precedes its k-th word and `separators[c][n]` follows its last word.
    """

    words: tuple[str, ...]
    separators: tuple[tuple[str, ...], ...]
    column_sizes: tuple[int, ...]
    modified: frozenset[int] = field(default_factory=frozenset)

    @classmethod
    def from_text(cls, text: Text) -> AttackedText:
        """Split every text of `text` into word slots."""
        if isinstance(text, str) or not text:
            raise ValueError(f"an attack text is a non-empty tuple of strings, e.g. ('a sentence',); got {text!r}")
        words, separators, sizes = [], [], []
        for column in text:
            column_words, column_separators = _split(column)
            words.extend(column_words)
            separators.append(tuple(column_separators))
            sizes.append(len(column_words))
        return cls(tuple(words), tuple(separators), tuple(sizes))

    @property
    def num_words(self) -> int:
        """Number of word slots (all texts)."""
        return len(self.words)

    @property
    def column_starts(self) -> tuple[int, ...]:
        """Index of the first word of each text."""
        return (0, *accumulate(self.column_sizes))[:-1]

    def column_of(self, index: int) -> int:
        """Which text word `index` belongs to."""
        return next(c for c, start in enumerate(self.column_starts) if index < start + self.column_sizes[c])

    def word_count(self) -> int:
        """Words of the current texts as re-split (a slot holding "terr ible" counts 2, a deleted one 0)."""
        return sum(len(WORD_PATTERN.findall(word)) for word in self.words)

    @property
    def texts(self) -> Text:
        """The full input tuple, as the classifier receives it."""
        out = []
        for start, size, separators in zip(self.column_starts, self.column_sizes, self.separators):
            pieces = [sep + word for sep, word in zip(separators, self.words[start : start + size])]
            out.append("".join(pieces) + separators[-1])
        return tuple(out)

    @property
    def text(self) -> str:
        """The texts joined by a line break (what a masked LM or the sentence encoder reads)."""
        return COLUMN_JOINER.join(self.texts)

    def word_offsets(self) -> list[tuple[int, int]]:
        """Character span of each word slot in `text`."""
        spans, position = [], 0
        for c, (start, size) in enumerate(zip(self.column_starts, self.column_sizes)):
            if c:
                position += len(COLUMN_JOINER)
            separators = self.separators[c]
            for k in range(size):
                position += len(separators[k])
                spans.append((position, position + len(self.words[start + k])))
                position += len(self.words[start + k])
            position += len(separators[size])
        return spans

    def replace(self, index: int, word: str) -> AttackedText:
        """A copy with slot `index` replaced by `word` and marked modified."""
        words = list(self.words)
        words[index] = word
        return AttackedText(tuple(words), self.separators, self.column_sizes, self.modified | {index})

    def delete(self, index: int) -> AttackedText:
        """A copy without word `index` (for word-importance ranking by deletion; not a candidate edit)."""
        words = list(self.words)
        words[index] = ""
        column = self.column_of(index)
        k = index - self.column_starts[column]
        separators = [list(s) for s in self.separators]
        if not separators[column][k].strip():
            separators[column][k] = ""
        return AttackedText(tuple(words), tuple(map(tuple, separators)), self.column_sizes, self.modified)

    def window(self, index: int, size: int) -> str:
        """The text from the first to the last of the `size` words around word `index`, punctuation and line
        breaks between them included (TextAttack's `text_window_around_index`)."""
        half = (size - 1) / 2
        length = self.num_words
        if index - half < 0:
            start, end = 0, min(size - 1, length - 1)
        elif index + half >= length:
            start, end = max(0, length - size), length - 1
        else:
            start, end = index - math.ceil(half), index + math.floor(half)
        offsets = self.word_offsets()
        return self.text[offsets[start][0] : offsets[end][1]]
