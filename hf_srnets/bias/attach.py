"""Join p_b (bias model) and p_t (teacher) to the training set as id-keyed columns, fitting p_b if needed."""

from __future__ import annotations

import logging
import os

from datasets import Dataset

from ..arguments import DataArguments
from ..data.columns import BIAS_COLUMN, TEACHER_COLUMN, add_probability_column, read_predictions
from ..data.tasks import TaskSpec
from ..losses import LOSSES
from ..training_args import SRNetTrainingArguments

logger = logging.getLogger(__name__)


def attach_probabilities(
    train: Dataset,
    full_train: Dataset,
    task: TaskSpec,
    data_args: DataArguments,
    args: SRNetTrainingArguments,
    eval_splits: dict[str, Dataset],
) -> tuple[Dataset, str | None]:
    """Join p_b and p_t to `train` by id; return it and a description of the bias model.

    `train` may be the first `--max_train_samples` rows of `full_train` (plus `--extra_train` sets): prediction
    files may then cover the full training set. A bias model computed here (`--bias_model`) is fitted on the
    full training set.
    """
    needs = LOSSES[args.loss].requires
    subset = data_args.max_train_samples is not None and data_args.max_train_samples < len(full_train)
    bias_desc = None
    if "bias_probs" in needs:
        path = data_args.bias_predictions
        if path:
            bias_desc = f"predictions from `{os.path.basename(path)}`"
        else:
            cache = os.path.join(args.output_dir, "bias_model")
            path = os.path.join(cache, "bias_train.jsonl")
            if not os.path.isfile(path):
                from . import compute_bias_predictions, save_bias_predictions

                logger.info(f"Fitting the {task.bias_model} bias model; predictions cached in {cache}")
                predictions, report = compute_bias_predictions(
                    task, full_train, eval_splits, vectors=data_args.bias_vectors, cache_dir=cache, seed=args.seed
                )
                save_bias_predictions(cache, predictions, report)
            bias_desc = f"{task.bias_model} features + logistic regression (appendix B.3.1)"
        predictions = read_predictions(path, task.num_labels)
        train = add_probability_column(train, predictions, BIAS_COLUMN, source=path, allow_extra=subset)
    if "teacher_probs" in needs:
        path = data_args.teacher_predictions
        predictions = read_predictions(path, task.num_labels)
        train = add_probability_column(train, predictions, TEACHER_COLUMN, source=path, allow_extra=subset)
    return train, bias_desc
