"""Transformations: the candidate replacements an attack may put in one word slot (TextAttack's word swaps).

Each transformation maps `(text, index)` to candidate words for slot `index` of `text` (the current word itself
never among them):

- `WordSwapEmbedding` (TextFooler, TextBugger "Sub-W"): the `max_candidates` nearest neighbours of the word in a
  word-vector space (cosine similarity, `resources.WordEmbedding`), optionally only those with cosine >= `min_cos`
  (TextAttack's `WordEmbeddingDistance` constraint), with the original capitalisation restored.
- TextBugger's character bugs (Li et al. 2018, §3.1), each at one random inner position (first and last characters
  kept, `random_one=True` in TextAttack): `CharacterInsertSpace` ("Insert"), `CharacterDelete` ("Delete"),
  `NeighbourCharacterSwap` ("Swap"), and `HomoglyphSwap` ("Sub-C", every position with a look-alike character:
  one candidate each).
- `WordSwapMaskedLM` (BERT-Attack, Li et al. 2020): the masked LM reads the current text (unmasked, as
  BERT-Attack does) and proposes its top-`max_candidates` vocabulary tokens at the word's first sub-word position;
  sub-word pieces ("##ing") and non-words are dropped. Simplification: for a word split into several sub-words,
  BERT-Attack ranks combinations of the pieces' top-K tokens by perplexity; here only whole-word tokens predicted
  at the first piece are used.
- `CompositeTransformation`: the union of several, in order, duplicates removed (TextBugger's five bugs).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from .attacked_text import WORD_PATTERN, AttackedText
from .resources import WordEmbedding

# Visually similar characters for TextBugger's Sub-C (the paper's examples o -> 0, l -> 1, a -> @, and Cyrillic
# or Greek look-alikes).
HOMOGLYPHS: dict[str, str] = {
    "a": "@",
    "c": "с",
    "e": "е",
    "i": "і",
    "j": "ј",
    "l": "1",
    "o": "0",
    "p": "р",
    "s": "ѕ",
    "x": "х",
    "y": "у",
    "B": "В",
    "H": "Н",
    "K": "К",
    "M": "М",
    "T": "Т",
}


def recover_case(candidate: str, original: str) -> str:
    """Give `candidate` the capitalisation pattern of `original` (lower, UPPER or Title)."""
    if original.isupper() and len(original) > 1:
        return candidate.upper()
    if original[:1].isupper():
        return candidate[:1].upper() + candidate[1:]
    return candidate


class Transformation:
    """Candidate words for one slot; subclasses implement `candidates`."""

    def __call__(self, text: AttackedText, index: int) -> list[str]:
        word = text.words[index]
        return [c for c in dict.fromkeys(self.candidates(text, index)) if c and c != word]

    def candidates(self, text: AttackedText, index: int) -> list[str]:
        raise NotImplementedError


class WordSwapEmbedding(Transformation):
    """Nearest neighbours in a word-vector space (see the module docstring)."""

    def __init__(self, embedding: WordEmbedding, max_candidates: int = 50, min_cos: float | None = None) -> None:
        self.embedding = embedding
        self.max_candidates = max_candidates
        self.min_cos = min_cos

    def candidates(self, text: AttackedText, index: int) -> list[str]:
        word = text.words[index]
        pairs = self.embedding.neighbours(word, self.max_candidates, self.min_cos)
        return [recover_case(w, word) for w, _ in pairs]


class _RandomCharacterEdit(Transformation):
    """One edit at a random inner position (first and last characters kept).

    The position is drawn from a generator seeded by (seed, word, word index), not from one shared stream, so an
    example's attack does not depend on which examples were attacked before (a resumed run equals a full one).
    """

    min_length = 3

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def positions(self, word: str) -> range | list[int]:
        return range(1, len(word) - 1)

    def candidates(self, text: AttackedText, index: int) -> list[str]:
        word = text.words[index]
        positions = self.positions(word)
        if len(word) < self.min_length or len(positions) == 0:
            return []
        rng = np.random.default_rng((self.seed, zlib.crc32(word.encode("utf-8")), index))
        return [self.edit(word, int(rng.choice(positions)))]

    def edit(self, word: str, i: int) -> str:
        raise NotImplementedError


class CharacterInsertSpace(_RandomCharacterEdit):
    """TextBugger "Insert": a space inside the word ("terrible" -> "terr ible")."""

    def edit(self, word: str, i: int) -> str:
        return word[:i] + " " + word[i:]


class CharacterDelete(_RandomCharacterEdit):
    """TextBugger "Delete": an inner character removed ("terrible" -> "terible")."""

    def edit(self, word: str, i: int) -> str:
        return word[:i] + word[i + 1 :]


class NeighbourCharacterSwap(_RandomCharacterEdit):
    """TextBugger "Swap": two adjacent inner characters exchanged ("terrible" -> "terrbile")."""

    min_length = 4

    def positions(self, word: str) -> list[int]:
        """Inner pairs of different characters (swapping "rr" would give the word back)."""
        return [i for i in range(1, len(word) - 2) if word[i] != word[i + 1]]

    def edit(self, word: str, i: int) -> str:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


class HomoglyphSwap(Transformation):
    """TextBugger "Sub-C": one character replaced by a look-alike (`HOMOGLYPHS`), one candidate per position."""

    def __init__(self, homoglyphs: dict[str, str] | None = None) -> None:
        self.homoglyphs = HOMOGLYPHS if homoglyphs is None else homoglyphs

    def candidates(self, text: AttackedText, index: int) -> list[str]:
        word = text.words[index]
        return [word[:i] + self.homoglyphs[c] + word[i + 1 :] for i, c in enumerate(word) if c in self.homoglyphs]


class CompositeTransformation(Transformation):
    """The union of several transformations' candidates, in order."""

    def __init__(self, transformations: Sequence[Transformation]) -> None:
        self.transformations = list(transformations)

    def candidates(self, text: AttackedText, index: int) -> list[str]:
        return [c for t in self.transformations for c in t(text, index)]


class WordSwapMaskedLM(Transformation):
    """BERT-Attack's candidates from a masked LM (see the module docstring)."""

    def __init__(self, model: Any, tokenizer: Any, max_candidates: int = 48, max_length: int = 512) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.max_candidates = max_candidates
        self.max_length = max_length
        self._cache: dict[str, tuple[list[tuple[int, int]], np.ndarray]] = {}

    def _predictions(self, sentence: str) -> tuple[list[tuple[int, int]], np.ndarray]:
        """Token offsets and top-k token ids at every position of `sentence` (cached)."""
        if sentence not in self._cache:
            import torch

            enc = self.tokenizer(
                sentence, return_offsets_mapping=True, truncation=True, max_length=self.max_length, return_tensors="pt"
            )
            offsets = [tuple(o) for o in enc.pop("offset_mapping")[0].tolist()]
            with torch.no_grad():
                logits = self.model(**enc).logits[0]
            k = min(self.max_candidates, logits.shape[-1])
            self._cache[sentence] = (offsets, torch.topk(logits, k, dim=-1).indices.numpy())
        return self._cache[sentence]

    def candidates(self, text: AttackedText, index: int) -> list[str]:
        offsets, top_ids = self._predictions(text.text)
        start, _ = text.word_offsets()[index]
        position = next((p for p, (s, e) in enumerate(offsets) if s == start and e > s), None)
        if position is None:  # truncated away
            return []
        word = text.words[index]
        special = set(self.tokenizer.all_special_tokens)
        tokens = self.tokenizer.convert_ids_to_tokens(top_ids[position].tolist())
        return [
            recover_case(t, word)
            for t in tokens
            if t not in special and not t.startswith("##") and WORD_PATTERN.fullmatch(t) and t.lower() != word.lower()
        ]
