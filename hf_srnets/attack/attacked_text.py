"""`AttackedText`: the text under attack as a fixed list of word slots, with the separators between them kept.

The last text of a `Text` tuple (the sentence, or the hypothesis of a pair) is split into words (letters, digits
and `_`, with inner apostrophes or hyphens: "don't", "well-made"); everything between words (spaces,
punctuation) is kept verbatim, so a swap changes only that word. A slot keeps its index even when an edit puts
a space inside it (TextBugger's "insert space"): word indices, the set of modified slots and
`words_changed` stay well defined. Earlier texts of the tuple (the premise) are carried unchanged.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from .base import Text

WORD_PATTERN = re.compile(r"\w+(?:['’\-]\w+)*")


@dataclass(frozen=True)
class AttackedText:
    """Words of the attacked (last) text, the separators around them and the indices modified so far.

    `separators[i]` precedes `words[i]`; `separators[-1]` (one more than the words) follows the last word.
    """

    context: tuple[str, ...]
    words: tuple[str, ...]
    separators: tuple[str, ...]
    modified: frozenset[int] = field(default_factory=frozenset)

    @classmethod
    def from_text(cls, text: Text) -> AttackedText:
        """Split the last text of `text` into word slots."""
        if isinstance(text, str) or not text:
            raise ValueError(f"an attack text is a non-empty tuple of strings, e.g. ('a sentence',); got {text!r}")
        last = text[-1]
        words, separators, position = [], [], 0
        for match in WORD_PATTERN.finditer(last):
            separators.append(last[position : match.start()])
            words.append(match.group())
            position = match.end()
        separators.append(last[position:])
        return cls(tuple(text[:-1]), tuple(words), tuple(separators))

    @property
    def num_words(self) -> int:
        return len(self.words)

    @property
    def text(self) -> str:
        """The attacked (last) text."""
        pieces = [sep + word for sep, word in zip(self.separators, self.words)]
        return "".join(pieces) + self.separators[-1]

    @property
    def texts(self) -> Text:
        """The full input tuple, as the classifier receives it."""
        return (*self.context, self.text)

    def word_offsets(self) -> list[tuple[int, int]]:
        """Character span of each word slot in `text`."""
        spans, position = [], 0
        for sep, word in zip(self.separators, self.words):
            position += len(sep)
            spans.append((position, position + len(word)))
            position += len(word)
        return spans

    def replace(self, index: int, word: str) -> AttackedText:
        """A copy with slot `index` replaced by `word` and marked modified."""
        words = list(self.words)
        words[index] = word
        return AttackedText(self.context, tuple(words), self.separators, self.modified | {index})

    def delete(self, index: int) -> AttackedText:
        """A copy without word `index` (for word-importance ranking by deletion; not a candidate edit)."""
        words = list(self.words)
        separators = list(self.separators)
        words[index] = ""
        if not separators[index].strip():
            separators[index] = ""
        return AttackedText(self.context, tuple(words), tuple(separators), self.modified)

    def window(self, index: int, size: int) -> str:
        """The `size` words around word `index` (TextAttack's `text_window_around_index`), joined by spaces."""
        half = (size - 1) / 2
        length = self.num_words
        if index - half < 0:
            start, end = 0, min(size - 1, length - 1)
        elif index + half >= length:
            start, end = max(0, length - size), length - 1
        else:
            start, end = index - math.ceil(half), index + math.floor(half)
        return " ".join(self.words[start : end + 1])
