"""p_b of the task's bias model, fitted once per set of inputs: `fit_or_load_bias_predictions` loads the cache entry
of the data, vectors, seed, labels and code the fit depends on (`cache.cache_key`), or fits the bias model
(`pipeline.compute_bias_predictions`) and caches its predictions there. `fitted_bias_description` says in words
which model gave p_b and how well it is calibrated on the training set, for the model card.

    files, report, fitted = fit_or_load_bias_predictions(task, train, {"validation": dev}, cache_root="cache",
                                                         vectors=None, seed=42)
    p_b = read_predictions(files["train"], task.num_labels)  # hf_srnets.data: id -> probabilities
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

from datasets import Dataset

from ..data.tasks import TaskSpec
from ..errors import InputError, check_path_argument, wrong_type
from .cache import cache_key, entry_dir, load_cached, save_cached
from .pipeline import compute_bias_predictions
from .report import near_uniform_warning

logger = logging.getLogger(__name__)


def _check_arguments(task: Any, full_train: Any, splits: Any, cache_root: Any) -> None:
    where = "fit_or_load_bias_predictions"
    if not isinstance(task, TaskSpec):
        raise wrong_type(where, "task", "a TaskSpec", task, "get it with hf_srnets.data.get_task('mnli')")
    if not isinstance(full_train, Dataset):
        raise wrong_type(where, "full_train", "a datasets.Dataset", full_train, "read it with read_split(...)")
    if not (isinstance(splits, Mapping) and all(isinstance(s, Dataset) for s in splits.values())):
        raise wrong_type(where, "splits", "a dict of set name -> datasets.Dataset", splits, 'e.g. {"validation": dev}')
    check_path_argument(cache_root, where, "cache_root", "pass the cache folder, e.g. cache_root='bias_cache'")
    if os.path.exists(cache_root) and not os.path.isdir(cache_root):  # found only after the fit, when it is saved
        raise InputError(f"{where}: cache_root {os.fspath(cache_root)} is a file: give a folder (new or existing)")


def fit_or_load_bias_predictions(
    task: TaskSpec,
    full_train: Dataset,
    splits: dict[str, Dataset],
    *,
    cache_root: str,
    vectors: str | None,
    seed: int,
) -> tuple[dict[str, str], dict[str, Any], bool]:
    """p_b files of `full_train` and `splits` from the cache entry of their key, fitting and caching them if there
    is none; return (split -> file, report, whether it was fitted now)."""
    _check_arguments(task, full_train, splits, cache_root)
    key, parts = cache_key(
        label_names=tuple(task.label_names),
        bias_model=task.bias_model,
        train=full_train,
        splits=splits,
        vectors=vectors,
        seed=seed,
        C=None,
    )
    cached = load_cached(cache_root, key)
    if cached is not None:
        files, report = cached
        logger.info(
            f"Loaded the {task.bias_model} bias model's p_b from the cache {entry_dir(cache_root, key)} "
            f"(key {key}: same data, vectors, seed, labels and bias-model code)"
        )
        return files, report, False
    logger.info(
        f"Fitting the {task.bias_model} bias model on {len(full_train)} training rows; "
        f"p_b cached in {entry_dir(cache_root, key)} (key {key})"
    )
    predictions, report = compute_bias_predictions(
        task, full_train, splits, vectors=vectors, cache_dir=cache_root, seed=seed
    )
    report = {**report, "cache": {"key": key, **parts}}
    files = save_cached(cache_root, key, predictions, report, {"train": full_train, **splits})
    return files, report, True


def fitted_bias_description(
    bias_model: str, report: dict[str, Any], rows: int, fitted: bool, extras: Sequence[str]
) -> str:
    """The model card's description of a fitted (or cached) bias model and its calibration on the training set."""
    vectors = report.get("vectors", {}).get("kind", "?")
    how = (
        f"fitted in this run on {rows} training rows"
        if fitted
        else f"loaded from the cache of a fit on the same {rows} training rows"
    )
    if "C" in report["model"]:
        regression = f"logistic regression (C={report['model']['C']:g}; appendix B.3.1)"
        model = f"{bias_model} features ({vectors} vectors) + {regression}"
    else:  # a bias known exactly (`kinds.ExactBiasModel`): nothing fitted
        model, how = f"{bias_model}: {report['model']['type']}", how.replace("fitted", "computed")
    bias_desc = f"{model}, {how} (cache key `{report['cache']['key']}`)" + (
        f"; it also predicts the extra training set(s) {', '.join(extras)}" if extras else ""
    )
    cal = report.get("splits", {}).get("train", {}).get("calibration")
    if cal:
        bias_desc += (
            f"; on the training set: accuracy {cal['accuracy']:.3f}, mean p_b of the gold label "
            f"{cal['mean_gold_prob']:.3f} (uniform: {cal['uniform_prob']:.3f})"
        )
        if cal["near_uniform"]:
            bias_desc += ", near uniform: this loss then differs little from cross-entropy"
            if not fitted:  # a fit logs its own warning
                logger.warning(near_uniform_warning(report))
    return bias_desc
