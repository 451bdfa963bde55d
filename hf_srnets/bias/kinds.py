"""The kinds of bias-only model a run can use (`--bias_model`), one registry, `BIAS_MODELS`.

A kind fitted on the training set (`FittedBiasModel`) names the text columns whose words it reads and turns them
into features for the logistic regression of `pipeline` (Win-win appendix B.3.1, after Clark et al. 2019):

- `overlap`: the five word-overlap features of a pair (`sentence1` the premise, `sentence2` the hypothesis), for
  MNLI and QQP (`features.overlap_features`);
- `claim`: the max-pooled word vectors of the first text (FEVER's claim-only model, Schuster et al. 2019);
- `hypothesis`: a hashed bag of the second text's words and word pairs, the hypothesis-only model of NLI
  (Gururangan et al. 2018; Poliak et al. 2018; the bias model of Karimi Mahabadi et al. 2020 and Utama et al. 2020
  on MNLI's hard subsets; `features.ngram_features`).

A kind known exactly (`ExactBiasModel`, e.g. a controlled cue of `hf_srnets.data.cues`) gives p_b itself, from
the training set and the split, with nothing fitted. `register_bias_model` adds either; its name becomes a
`--bias_model` value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from datasets import Dataset

from ..data.tasks import TaskSpec
from ..errors import InputError
from ..registry import register
from ..resources.word_vectors import WordVectors
from .features import NGRAM_BUCKETS, OVERLAP_FEATURE_NAMES, claim_features, ngram_features, overlap_features

Tokens = list[list[str]]  # the words of each example of one text column


@dataclass(frozen=True)
class FittedBiasModel:
    """A bias-only model fitted on the training set: `features(texts, vectors)` maps the tokenised `columns` of a
    split (one list of word lists per column, in `columns` order) to its feature matrix; `feature_names(vectors)`
    names the features in the report. Without `uses_vectors`, `vectors` is None."""

    name: str
    description: str
    columns: tuple[str, ...]
    features: Callable[[Sequence[Tokens], WordVectors | None], np.ndarray]
    feature_names: Callable[[WordVectors | None], Sequence[str]]
    uses_vectors: bool = True  # False: features of the words alone, no word vectors resolved


@dataclass(frozen=True)
class ExactBiasModel:
    """A bias-only model known exactly: `probabilities(task, train, split)` gives p_b of every row of `split`, an
    `(n, task.num_labels)` array whose rows sum to 1, from the training set and the split alone; `columns` are the
    text columns it needs (none for one that reads a column of its own)."""

    name: str
    description: str
    columns: tuple[str, ...]
    probabilities: Callable[[TaskSpec, Dataset, Dataset], np.ndarray]


BiasModelKind = FittedBiasModel | ExactBiasModel
BIAS_MODELS: dict[str, BiasModelKind] = {}


def register_bias_model(kind: BiasModelKind) -> BiasModelKind:
    """Add a kind of bias-only model to `BIAS_MODELS` (a `--bias_model` value); return it."""
    if not isinstance(kind, (FittedBiasModel, ExactBiasModel)):
        raise TypeError(f"register_bias_model takes a FittedBiasModel or an ExactBiasModel, got {type(kind).__name__}")
    return register(BIAS_MODELS, kind.name, kind, "bias model")


def get_bias_model(name: str, flag: str = "--bias_model") -> BiasModelKind:
    """The registered kind called `name`; an unknown name is an `InputError` listing each kind in words."""
    if name not in BIAS_MODELS:
        known = "; ".join(f"{k} ({v.description})" for k, v in BIAS_MODELS.items())
        raise InputError(f"{flag} {name!r} is no bias model; the bias models are: {known}")
    return BIAS_MODELS[name]


def uses_word_vectors(kind: BiasModelKind) -> bool:
    """Whether fitting `kind` resolves word vectors (`--vectors`, `--bias_vectors`): not the hashed n-grams of the
    hypothesis-only model, not an exact model."""
    return isinstance(kind, FittedBiasModel) and kind.uses_vectors


def bias_model_help() -> str:
    """The registered kinds in words, for `--bias_model`'s help."""
    return "; ".join(f"{name}: {kind.description}" for name, kind in BIAS_MODELS.items())


register_bias_model(
    FittedBiasModel(
        "overlap",
        "word overlap of the two texts (sentence pairs)",
        ("sentence1", "sentence2"),
        lambda texts, vectors: overlap_features(texts[0], texts[1], vectors),
        lambda vectors: OVERLAP_FEATURE_NAMES,
    )
)


def max_pooled(name: str, column: str, text: str, description: str) -> FittedBiasModel:
    """A model on the word vectors of one text column, max-pooled per dimension (`features.claim_features`)."""
    return FittedBiasModel(
        name,
        description,
        (column,),
        lambda texts, vectors: claim_features(texts[0], vectors),
        lambda vectors: [f"max-pooled {text} word vectors ({vectors.dim} dims)"],
    )


register_bias_model(max_pooled("claim", "sentence1", "claim", "max-pooled word vectors of the first text (claim-only)"))
register_bias_model(
    FittedBiasModel(
        "hypothesis",
        "a hashed bag of the second text's words and word pairs (hypothesis-only NLI)",
        ("sentence2",),
        lambda texts, vectors: ngram_features(texts[0]),
        lambda vectors: [f"hashed unigram and bigram indicators of the hypothesis ({NGRAM_BUCKETS} buckets)"],
        uses_vectors=False,
    )
)
