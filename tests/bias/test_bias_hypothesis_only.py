"""The hypothesis-only bias model of NLI (`--bias_model hypothesis`, issue 52; Gururangan et al. 2018, Poliak et al.
2018): a hashed bag of the second text's words and word pairs. On pairs whose label shows in the hypothesis words and
not in the premise, it predicts the label and the claim-only model (the first text) does not."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
from bias.test_bias_pipeline import glove_file
from datasets import Dataset

from hf_srnets.bias import compute_bias_predictions, get_bias_model
from hf_srnets.data import get_task

MNLI = get_task("mnli")
WORDS = {0: "someone", 1: "perhaps", 2: "nobody"}  # a hypothesis word per label: the annotation artefact


def artefact_pairs(n: int, seed: int) -> Dataset:
    rng = random.Random(seed)
    nouns = ["cat", "dog", "bird", "tree", "river", "house", "car", "ball"]
    rows: dict[str, list] = {"id": [], "sentence1": [], "sentence2": [], "label": []}
    for i in range(n):
        label = i % 3
        rows["id"].append(f"{seed}-{i}")
        rows["sentence1"].append(f"The {rng.choice(nouns)} is near the {rng.choice(nouns)}.")
        rows["sentence2"].append(f"{WORDS[label]} saw a {rng.choice(nouns)}")
        rows["label"].append(label)
    return Dataset.from_dict(rows)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    train, dev = artefact_pairs(120, 0), artefact_pairs(60, 1)
    tmp = tmp_path_factory.mktemp("hypothesis")
    return train, dev, glove_file(tmp / "glove.txt", train, dev), tmp


def fit(kind: str, data) -> tuple[dict, dict]:
    train, dev, vectors, tmp = data
    task = dataclasses.replace(MNLI, bias_model=kind)
    return compute_bias_predictions(task, train, {"validation": dev}, vectors=vectors, cache_dir=str(tmp), seed=0)


def test_the_hypothesis_only_model_reads_the_second_text(data):
    predictions, report = fit("hypothesis", data)
    assert report["features"]["kind"] == "hypothesis"
    assert report["features"]["names"] == ["hashed unigram and bigram indicators of the hypothesis (1024 buckets)"]
    assert report["vectors"] == {"kind": "none"}  # no word vectors resolved
    assert report["splits"]["validation"]["accuracy"] == 1.0  # the label word is in every hypothesis
    probs = np.array(list(predictions["validation"].values()))
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)


def test_the_claim_only_model_on_the_same_pairs_sees_only_the_premise(data):
    _, report = fit("claim", data)
    assert report["splits"]["validation"]["accuracy"] < 0.6  # random premises: chance is 1/3


def test_the_kind_declares_its_columns():
    assert get_bias_model("hypothesis").columns == ("sentence2",)
    assert get_bias_model("overlap").columns == ("sentence1", "sentence2")


def test_ngram_features_set_the_bucket_of_each_word_and_word_pair():
    """Buckets computed here with hashlib: BLAKE2b, 4 bytes, big-endian, modulo the buckets."""
    import hashlib

    from hf_srnets.bias.features import ngram_features

    def bucket(gram: str) -> int:
        return int.from_bytes(hashlib.blake2b(gram.encode(), digest_size=4).digest(), "big") % 64

    row = ngram_features(["Nobody saw it."], buckets=64)[0]
    grams = ["nobody", "saw", "it", "nobody saw", "saw it"]
    assert set(np.flatnonzero(row)) == {bucket(g) for g in grams}
    assert ngram_features([""], buckets=64).sum() == 0
