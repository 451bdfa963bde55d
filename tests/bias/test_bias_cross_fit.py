"""Out-of-fold bias predictions (`--cross_fit K`, issue 72): each training row's p_b comes from a model fitted on the
other folds, so it cannot have memorised the row, while the evaluation sets keep the model fitted on every row."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
from bias.test_bias_pipeline import glove_file
from datasets import Dataset

from hf_srnets.arguments.bias_model_arguments import BiasModelArguments
from hf_srnets.bias import compute_bias_predictions
from hf_srnets.data import get_task
from hf_srnets.errors import InputError

HYPOTHESIS = dataclasses.replace(get_task("mnli"), bias_model="hypothesis")


def memorisable_pairs(n: int, seed: int) -> Dataset:
    """Random labels, and a word of its own in each hypothesis: only memorising a row predicts its label."""
    rng = random.Random(seed)
    return Dataset.from_dict({
        "id": [f"{seed}-{i}" for i in range(n)],
        "sentence1": ["The cat is near the house."] * n,
        "sentence2": [f"word{seed}x{i} is here" for i in range(n)],
        "label": [rng.randrange(3) for _ in range(n)],
    })  # fmt: skip


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    train, dev = memorisable_pairs(90, 0), memorisable_pairs(30, 1)
    tmp = tmp_path_factory.mktemp("cross_fit")
    return train, dev, glove_file(tmp / "glove.txt", train, dev), str(tmp)


def fit(data, train=None, **options):
    default_train, dev, vectors, cache = data
    return compute_bias_predictions(
        HYPOTHESIS, train or default_train, {"validation": dev}, vectors=vectors, cache_dir=cache, seed=0, C=10.0,
        **options,
    )  # fmt: skip


def accuracy(predictions: dict, labels: list[int]) -> float:
    return float(np.mean([int(np.argmax(p)) == y for p, y in zip(predictions.values(), labels, strict=True)]))


def test_in_sample_p_b_memorises_the_rows_and_out_of_fold_does_not(data):
    train = data[0]
    in_sample, report = fit(data)
    held_out, cross_report = fit(data, cross_fit=5)
    assert accuracy(in_sample["train"], train["label"]) > 0.9  # the row's own word gives its random label away
    assert accuracy(held_out["train"], train["label"]) < 0.6  # about chance (1/3) for rows the model did not see
    assert held_out["validation"] == in_sample["validation"]  # the evaluation set: the model fitted on all rows
    assert report["model"]["train_predictions"] == "in sample"
    assert cross_report["model"]["train_predictions"] == "out of fold (5 folds, numpy default_rng(0))"


def test_a_rows_own_label_does_not_move_its_out_of_fold_p_b(data):
    """The model that predicts a row never saw it: flipping that row's label changes the in-sample p_b of the row
    but not its out-of-fold one (the other folds' models see the flip; row 0's fold does not)."""
    train = data[0]
    flipped = train.map(lambda row, i: {"label": (row["label"] + 1) % 3 if i == 0 else row["label"]}, with_indices=True)
    first = train["id"][0]
    assert fit(data, cross_fit=5)[0]["train"][first] == fit(data, train=flipped, cross_fit=5)[0]["train"][first]
    assert fit(data)[0]["train"][first] != fit(data, train=flipped)[0]["train"][first]


def test_bad_fold_counts_and_an_exact_bias_model_are_refused_with_the_fix(data):
    with pytest.raises(InputError, match="--cross_fit must be 2 folds or more, got 1"):
        BiasModelArguments(task="mnli", output_dir="out", cross_fit=1)
    with pytest.raises(InputError, match="at most the 90 training rows"):
        fit(data, cross_fit=91)
    cue = dataclasses.replace(get_task("mnli"), bias_model="cue")
    with pytest.raises(InputError, match="is exact, not fitted: leave --cross_fit out"):
        compute_bias_predictions(cue, data[0], {}, cache_dir=data[3], cross_fit=5)
