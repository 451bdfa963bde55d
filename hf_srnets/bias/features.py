"""Bias-only features of Win-win appendix B.3.1 (after Clark et al. 2019, "Don't Take the Easy Way Out").

Sentence pairs (MNLI, QQP; `sentence1` is the premise p, `sentence2` the hypothesis h), five features:

1. `all_in_premise`:          1 if every hypothesis word occurs in the premise, else 0;
2. `contiguous_subsequence`:  1 if the hypothesis word sequence occurs contiguously in the premise, else 0;
3. `overlap_fraction`:        |{i : h_i ∈ p}| / |h|   (word occurrences, so "cat cat dog" vs "cat" gives 2/3);
4. `mean_max_similarity`:     (1/|h|) Σ_i max_j sim(h_i, p_j);
5. `min_max_similarity`:      min_i max_j sim(h_i, p_j);

where sim is the cosine similarity of the words' vectors (`vectors.WordVectors`), with two rules:
identical words have similarity 1 (also when the word has no vector), and a word without a vector (or
with a zero vector) has similarity 0 to every other word. Cosines are clipped to [-1, 1].
Edge cases: an empty hypothesis (no words, e.g. only punctuation) or an empty premise gives all zeros.

Claims (FEVER, `bias_model="claim"`): the claim's (`sentence1`) word vectors max-pooled per dimension,
`f_d = max_i v(c_i)_d` over the claim words that have vectors; all zeros if none has.

Hypotheses (NLI, `bias_model="hypothesis"`): a bag of the hypothesis's (`sentence2`) words and word pairs, each
unigram and bigram hashed into one of `NGRAM_BUCKETS` indicator features (`f_b = 1` if some n-gram hashes to b: the
first 4 bytes of its BLAKE2b digest modulo the buckets), as the hypothesis-only classifiers of Gururangan et al.
(2018, fastText bags of n-grams) and Poliak et al. (2018); no word vectors.

Tokenisation (`tokens.tokenize`, shared with the fastText vectors trained on the training text): Unicode
lowercase, then maximal runs of letters and digits; everything else (punctuation, whitespace, `_`) separates
words and is dropped. So "Don't stop, Mr. O'Neil!" gives `["don", "t", "stop", "mr", "o", "neil"]`, and the
NLTK-tokenised MNLI "do n't" gives `["do", "n", "t"]`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from ..resources.tokens import TOKEN_PATTERN, tokenize, vocabulary
from ..resources.word_vectors import WordVectors

__all__ = [
    "OVERLAP_FEATURE_NAMES",
    "TOKEN_PATTERN",
    "claim_feature_names",
    "claim_features",
    "ngram_features",
    "overlap_features",
    "tokenize",
    "vocabulary",
]

OVERLAP_FEATURE_NAMES = (
    "all_in_premise",
    "contiguous_subsequence",
    "overlap_fraction",
    "mean_max_similarity",
    "min_max_similarity",
)

Texts = Sequence[str] | Sequence[list[str]]


def _tokens(texts: Texts) -> list[list[str]]:
    return [tokenize(t) if isinstance(t, str) else list(t) for t in texts]


def _unit_table(words: list[str], vectors: WordVectors) -> np.ndarray:
    """Unit-norm vectors for `words` (zero rows for words without a vector or with a zero vector)."""
    table, _ = vectors.lookup(words)
    table = table.astype(np.float64)
    norms = np.linalg.norm(table, axis=1, keepdims=True)
    return np.divide(table, norms, out=np.zeros_like(table), where=norms > 0)


def overlap_features(premises: Texts, hypotheses: Texts, vectors: WordVectors) -> np.ndarray:
    """The five overlap features (module doc) of each pair: an `(n, 5)` float array, columns `OVERLAP_FEATURE_NAMES`.

    `premises`/`hypotheses` are raw texts (tokenised with `tokenize`) or already-tokenised word lists.
    """
    p_tokens, h_tokens = _tokens(premises), _tokens(hypotheses)
    if len(p_tokens) != len(h_tokens):
        raise ValueError(f"{len(p_tokens)} premises but {len(h_tokens)} hypotheses")
    index: dict[str, int] = {}
    p_ids = [np.array([index.setdefault(w, len(index)) for w in s], dtype=np.int64) for s in p_tokens]
    h_ids = [np.array([index.setdefault(w, len(index)) for w in s], dtype=np.int64) for s in h_tokens]
    unit = _unit_table(list(index), vectors)
    out = np.zeros((len(p_tokens), len(OVERLAP_FEATURE_NAMES)), dtype=np.float64)
    for i, (p, h) in enumerate(zip(p_ids, h_ids, strict=True)):
        if h.size == 0 or p.size == 0:
            continue
        same = h[:, None] == p[None, :]
        sims = unit[h] @ unit[p].T
        sims[same] = 1.0
        best = sims.max(axis=1)
        n_in = int(np.count_nonzero(same.any(axis=1)))
        hyp = h_tokens[i]
        out[i, 0] = n_in == len(hyp)
        out[i, 1] = f" {' '.join(hyp)} " in f" {' '.join(p_tokens[i])} "
        out[i, 2] = n_in / len(hyp)
        out[i, 3] = best.sum() / len(hyp)
        out[i, 4] = best.min()
    np.clip(out[:, 3:], -1.0, 1.0, out=out[:, 3:])  # rounding can put a cosine just outside [-1, 1]
    return out


def claim_features(claims: Texts, vectors: WordVectors) -> np.ndarray:
    """Max-pooled word vectors of each claim: an `(n, vectors.dim)` float array (module doc)."""
    tokens = _tokens(claims)
    index: dict[str, int] = {}
    ids = [np.array([index.setdefault(w, len(index)) for w in s], dtype=np.int64) for s in tokens]
    table, found = vectors.lookup(list(index))
    out = np.zeros((len(tokens), vectors.dim), dtype=np.float64)
    for i, row in enumerate(ids):
        row = row[found[row]] if row.size else row
        if row.size:
            out[i] = table[row].max(axis=0)
    return out


NGRAM_BUCKETS = 1024


def ngram_features(texts: Texts, buckets: int = NGRAM_BUCKETS) -> np.ndarray:
    """Hashed unigram and bigram indicators of each text: an `(n, buckets)` float array (module doc)."""
    out = np.zeros((len(texts), buckets), dtype=np.float64)
    index: dict[str, int] = {}
    for i, words in enumerate(_tokens(texts)):
        for gram in [*words, *(f"{a} {b}" for a, b in zip(words, words[1:]))]:
            if gram not in index:
                digest = hashlib.blake2b(gram.encode("utf-8"), digest_size=4).digest()
                index[gram] = int.from_bytes(digest, "big") % buckets
            out[i, index[gram]] = 1.0
    return out


def claim_feature_names(dim: int) -> tuple[str, ...]:
    return tuple(f"maxpool_{d}" for d in range(dim))
