"""Deterministic stand-ins for the attack tests: a lexicon classifier that counts queries, tiny resources."""

from __future__ import annotations

import numpy as np

from hf_srnets.attack.attacked_text import WORD_PATTERN
from hf_srnets.attack.resources import WordEmbedding

# Word weights of a 2-class sentiment lexicon: P(positive) = sigmoid(sum of weights + bias).
WEIGHTS = {"good": 3.0, "great": 4.0, "fine": 0.5, "bad": -6.0, "awful": -8.0, "movie": 0.2, "plot": -0.1}


class LexiconClassifier:
    """Batched 2-class classifier; `calls` records the batch sizes, `num_queries` counts texts."""

    def __init__(self, weights: dict[str, float] | None = None, bias: float = 0.0, query_budget=None) -> None:
        self.weights = WEIGHTS if weights is None else weights
        self.bias = bias
        self.num_queries = 0
        self.query_budget = query_budget
        self.calls: list[list[tuple[str, ...]]] = []

    def logit(self, text: tuple[str, ...]) -> float:
        words = WORD_PATTERN.findall(text[-1].lower())
        return self.bias + sum(self.weights.get(w, 0.0) for w in words)

    def __call__(self, texts):
        self.calls.append(list(texts))
        self.num_queries += len(texts)
        p = 1.0 / (1.0 + np.exp(-np.array([self.logit(t) for t in texts])))
        return np.stack([1 - p, p], axis=1)


class ConstantEncoder:
    """A sentence encoder under which every text is identical (similarity 1)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, sentences):
        self.seen.extend(sentences)
        return np.ones((len(sentences), 4)) / 2.0


def toy_embedding() -> WordEmbedding:
    """'good' ~ 'fine' (cos .96) ~ 'bad' (cos .8); 'movie' ~ 'film'; 'plot' far from all."""
    vectors = {
        "good": [1.0, 0.0, 0.0],
        "fine": [0.96, 0.28, 0.0],
        "bad": [0.8, -0.6, 0.0],
        "movie": [0.0, 0.0, 1.0],
        "film": [0.0, 0.2, 0.98],
        "plot": [-1.0, 0.0, 0.0],
    }
    return WordEmbedding(list(vectors), np.array(list(vectors.values())))


MLM_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "##s", "##ly", "the", "a", "was", *WEIGHTS, "film", "nice"]


def mlm_tokenizer():
    """A word-level BERT tokenizer over `MLM_VOCAB` (with two sub-word pieces)."""
    from transformers import BertTokenizerFast

    return BertTokenizerFast(vocab={w: i for i, w in enumerate(MLM_VOCAB)})
