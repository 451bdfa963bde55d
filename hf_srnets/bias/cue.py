"""The exact bias-only model of a controlled cue (`--bias_model cue`, with `--data_transform cue`,
`hf_srnets.data.cues`): p_b(y | c) = #(cue = c, label = y) / #(cue = c), counted on the training set, and the
training label distribution for an example without a cue.

The cue is the only thing this model sees, and the counts are the cue-only classifier of least risk on the training
set: in expectation p_b(y | c) = π_y·P(c | y) / Σ_y' π_y'·P(c | y') with P(c | y) = ρ·[c = y] + (1 − ρ)/K
(`hf_srnets.data.cues`), e.g. ρ + (1 − ρ)/K for the cue's own label when the labels are balanced. Nothing is
fitted; a cue the training set never shows gets the label distribution too.
"""

from __future__ import annotations

import numpy as np
from datasets import Dataset

from ..data.cues import CUE_COLUMN, NO_CUE
from ..data.tasks import TaskSpec
from ..errors import InputError
from .kinds import ExactBiasModel, register_bias_model


def cue_table(task: TaskSpec, train: Dataset) -> np.ndarray:
    """(K + 1) × K: row c < K is p_b(· | cue = c), the last row p_b without a cue (the label distribution)."""
    k = task.num_labels
    cues, labels = _cues(train, "the training set"), np.asarray(train["label"])
    cued = cues != NO_CUE
    counts = np.zeros((k, k))
    np.add.at(counts, (cues[cued], labels[cued]), 1.0)
    prior = np.bincount(labels, minlength=k) / len(labels)
    seen = counts.sum(axis=1, keepdims=True)
    return np.vstack([np.where(seen > 0, counts / np.maximum(seen, 1.0), prior), prior])


def cue_probabilities(task: TaskSpec, train: Dataset, split: Dataset) -> np.ndarray:
    """p_b of every row of `split` from its cue (module docstring)."""
    cues = _cues(split, "a split to predict")
    return cue_table(task, train)[np.where(cues == NO_CUE, task.num_labels, cues)]


def _cues(dataset: Dataset, what: str) -> np.ndarray:
    if CUE_COLUMN not in dataset.column_names:
        raise InputError(
            f"--bias_model cue reads each example's cue, but {what} has no '{CUE_COLUMN}' column: run with "
            "--data_transform cue (which adds the cue), or choose another --bias_model"
        )
    return np.asarray(dataset[CUE_COLUMN], dtype=np.int64)


register_bias_model(
    ExactBiasModel(
        "cue",
        "the exact cue-only model of --data_transform cue, counted on the training set",
        (),  # it reads the `cue` column, no text
        cue_probabilities,
    )
)
