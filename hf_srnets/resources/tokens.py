"""Tokenisation shared by the bias features and the word vectors trained on the training text.

`tokenize`: Unicode lowercase, then maximal runs of letters and digits; everything else (punctuation, whitespace,
`_`) separates words and is dropped. So "Don't stop, Mr. O'Neil!" gives `["don", "t", "stop", "mr", "o", "neil"]`,
and the NLTK-tokenised MNLI "do n't" gives `["do", "n", "t"]`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

TOKEN_PATTERN = re.compile(r"[^\W_]+")


def tokenize(text: str) -> list[str]:
    """Lowercase `text` and return its runs of letters/digits (punctuation and `_` dropped)."""
    return TOKEN_PATTERN.findall(text.lower())


def vocabulary(*token_lists: Sequence[list[str]]) -> set[str]:
    """All words of some tokenised texts."""
    return {w for tokens in token_lists for sentence in tokens for w in sentence}
