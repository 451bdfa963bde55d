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
- `WordSwapMaskedLM` (BERT-Attack, Li et al. 2020), as TextAttack's `WordSwapMaskedLM(method="bert-attack")`:
  the masked LM reads the current text (all texts joined by a line break, unmasked, as BERT-Attack does) and
  keeps its top-K tokens (K = `max_candidates`) at every position. A word of one sub-word gets those of the top-K
  tokens at its position that are one word and not a continuation piece ("##ing"). A word of n sub-words gets
  the combinations of the top-K tokens at its n positions, joined with the "##" markers removed, in the order of
  `itertools.product` (the first piece's best token with each of the second's, ...), of which the first K that
  are one word are kept. (BERT-Attack ranks the combinations by the masked LM's perplexity; TextAttack 0.3.x
  computes that perplexity but discards the sorted list, so its candidates are the first K in product order, and
  so are these.) Candidates keep the masked LM's casing (TextAttack does not restore the word's capitalisation).
- `CompositeTransformation`: the union of several, in order, duplicates removed (TextBugger's five bugs).
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from .attacked_text import WORD_PATTERN, AttackedText
from .resources import WordEmbedding

# TextBugger's Sub-C look-alikes as TextAttack's `WordSwapHomoglyphSwap` defines them: every lowercase letter
# and digit, the hyphen and the apostrophe (38 entries; upper-case letters have none).
HOMOGLYPHS: dict[str, str] = {
    "-": "˗", "9": "৭", "8": "Ȣ", "7": "𝟕", "6": "б", "5": "Ƽ", "4": "Ꮞ", "3": "Ʒ", "2": "ᒿ", "1": "l",
    "0": "O", "'": "`", "a": "ɑ", "b": "Ь", "c": "ϲ", "d": "ԁ", "e": "е", "f": "𝚏", "g": "ɡ", "h": "հ",
    "i": "і", "j": "ϳ", "k": "𝒌", "l": "ⅼ", "m": "ｍ", "n": "ո", "o": "о", "p": "р", "q": "ԛ", "r": "ⲅ",
    "s": "ѕ", "t": "𝚝", "u": "ս", "v": "ѵ", "w": "ԝ", "x": "×", "y": "у", "z": "ᴢ",
}  # fmt: skip


def recover_case(candidate: str, original: str) -> str:
    """Give `candidate` the case of `original`, as TextAttack's `recover_word_case` does.

    lower -> lower; UPPER (two letters or more) -> UPPER; Title (a capital, then lower case) -> Title with the rest
    lowered; anything else ("I", "McDonald", "1990") leaves `candidate` as it is.
    """
    if original.islower():
        return candidate.lower()
    if original.isupper() and len(original) > 1:
        return candidate.upper()
    if original[:1].isupper() and original[1:].islower():
        return candidate.capitalize()
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


def is_one_word(text: str) -> bool:
    """Whether `text` holds exactly one word (TextAttack's `is_one_word`)."""
    return len(WORD_PATTERN.findall(text)) == 1


class WordSwapMaskedLM(Transformation):
    """BERT-Attack's candidates from a masked LM (see the module docstring)."""

    def __init__(self, model: Any, tokenizer: Any, max_candidates: int = 8, max_length: int = 512) -> None:
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

    def _positions(self, text: AttackedText, index: int, offsets: list[tuple[int, int]]) -> list[int]:
        """Token positions of word `index` (its first piece onwards, one per sub-word of the word alone)."""
        start, _ = text.word_offsets()[index]
        first = next((p for p, (s, e) in enumerate(offsets) if s == start and e > s), None)
        if first is None:  # truncated away
            return []
        pieces = len(self.tokenizer(text.words[index], add_special_tokens=False)["input_ids"])
        return list(range(first, min(first + pieces, len(offsets))))

    def candidates(self, text: AttackedText, index: int) -> list[str]:
        offsets, top_ids = self._predictions(text.text)
        positions = self._positions(text, index, offsets)
        if len(positions) == 1:
            tokens = self.tokenizer.convert_ids_to_tokens(top_ids[positions[0]].tolist())
            return [t for t in tokens if is_one_word(t) and "##" not in t]
        out: list[str] = []
        for combination in itertools.product(*(top_ids[p].tolist() for p in positions)):
            word = "".join(self.tokenizer.convert_ids_to_tokens(list(combination))).replace("##", "")
            if is_one_word(word):
                out.append(word)
                if len(out) == self.max_candidates:
                    break
        return out
