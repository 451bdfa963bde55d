"""The data phase of a run: read the splits, attach p_b/p_t, adopt the checkpoint's label order, cap, flag the
dev set's hard examples, tokenise."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

import transformers
from datasets import Dataset
from transformers import AutoTokenizer

from ..arguments.glue_sparse_arguments import RunArguments
from ..arguments.model_data_arguments import DataArguments, ModelArguments
from ..compact.loading import check_model_path
from ..data import EvalSet, TaskSpec
from ..data.label_alignment import checkpoint_label_order, label_permutation, remap_dataset, reorder_task
from ..data.splits import SplitFiles, add_extra_training_data, evenly_spaced_rows, load_splits
from ..data.tasks import resolve_task
from ..data.transforms import DataTransform, get_data_transform
from ..errors import InputError
from ..evaluation.easy_hard import HARD_COLUMN, hard_flags
from ..resources.auto_loading import auto_from_pretrained
from ..run_files import MODEL_CONFIG_NAME, TOKENIZER_FILES, holds_tokenizer_files
from ..training.arguments import SRNetTrainingArguments
from .columns import attach_probabilities
from .pad_token import ensure_pad_token


@dataclass
class RunData:
    """The splits of a run as used. `task_order` is the task's label order before a checkpoint's own order was
    adopted (prediction files are read and written in it); `*_tok` are the tokenised splits. `hard_source` says
    where the dev set's `hard` column came from (None: no easy/hard split)."""

    task: TaskSpec
    task_order: tuple[str, ...]
    full_train: Dataset
    train: Dataset
    validation: Dataset
    ood: list[tuple[EvalSet, Dataset]]
    bias_desc: str | None
    tokenizer: Any = None
    train_tok: Dataset | None = None
    validation_tok: Dataset | None = None
    ood_tok: list[tuple[EvalSet, Dataset]] = dataclasses.field(default_factory=list)
    hard_source: str | None = None


def run_task(data_args: DataArguments) -> TaskSpec:
    """The task of the run: `--task` with its labels restricted/reordered by `--task_labels`, and `--bias_model`
    when given."""
    task = resolve_task(data_args.task, data_args.task_labels)
    if data_args.bias_model is not None:
        task = dataclasses.replace(task, bias_model=data_args.bias_model)
    return task


def run_transform(run: RunArguments) -> DataTransform | None:
    """The run's `--data_transform` with its options, None without one."""
    name = run.data.data_transform
    return None if name is None else get_data_transform(name, run.transform_options)


def split_files(data_args: DataArguments) -> SplitFiles:
    """Where the run's splits come from, as `hf_srnets.data.splits` takes it."""
    return SplitFiles(
        train_file=data_args.train_file,
        validation_file=data_args.validation_file,
        ood_files=tuple(data_args.ood_file),
        ood_labels=tuple(data_args.ood_labels or ()),
        no_default_ood=data_args.no_default_ood,
        data_dir=data_args.data_dir,
        skip_incomplete_rows=data_args.skip_incomplete_rows,
    )


def read_data(
    task: TaskSpec,
    model_args: ModelArguments,
    data_args: DataArguments,
    args: SRNetTrainingArguments,
    transform: DataTransform | None = None,
) -> RunData:
    """Load the splits (the main process first: it writes the caches), apply the `--data_transform`, cap the
    training rows, mix in `--extra_train`, attach the probability columns, adopt the checkpoint's label order and
    cap the eval sets. The model and tokenizer paths and `--max_seq_length` are checked first
    (`check_model_inputs`)."""
    check_model_inputs(model_args, data_args)
    with args.main_process_first(desc="loading data"):
        files = split_files(data_args)
        full_train, validation, ood = load_splits(task, files, model_args.cache_dir)
        if transform is not None:
            full_train, validation, ood = transform.apply(task, full_train, validation, ood)
        train = full_train
        if data_args.max_train_samples is not None:
            train = full_train.select(range(min(data_args.max_train_samples, len(full_train))))
        eval_splits = {"validation": validation, **{s.name: d for s, d in ood}}
        if data_args.extra_train:
            train = add_extra_training_data(train, task, data_args.extra_train, files, ood)
        train, bias_desc = attach_probabilities(train, full_train, task, data_args, args, eval_splits)
    task_order = task.label_names
    task, train, validation, ood = align_labels(model_args, task, train, validation, ood)
    if data_args.max_eval_samples is not None:
        validation = validation.select(range(min(data_args.max_eval_samples, len(validation))))
    ood = [(s, evenly_spaced_rows(d, data_args.max_ood_samples)) for s, d in ood]
    validation, hard_source = attach_hard_flags(validation, task, data_args)
    return RunData(task, task_order, full_train, train, validation, ood, bias_desc, hard_source=hard_source)


# tokenizers without a recorded limit hold transformers' VERY_LARGE_INTEGER; a real limit is far below this
NO_TOKENIZER_LIMIT = 10**9


def position_limit(model_args: ModelArguments) -> int | None:
    """The longest input the model reads, in tokens: the smaller of its `max_position_embeddings` and its tokenizer's
    `model_max_length` (RoBERTa's 514 positions hold 512 tokens); None when neither records one."""
    config = auto_from_pretrained(
        transformers.AutoConfig, model_args.model_name_or_path, cache_dir=model_args.cache_dir
    )
    try:
        tokenizer = auto_from_pretrained(
            AutoTokenizer, model_args.tokenizer_name or model_args.model_name_or_path, cache_dir=model_args.cache_dir
        )
    except (OSError, ValueError):  # no tokenizer there: the tokenising phase says so; the positions still bound
        tokenizer = None
    return position_limit_of(config, tokenizer)


def position_limit_of(config: Any, tokenizer: Any) -> int | None:
    """The longest input a model of `config` read through `tokenizer` (or None) takes, in tokens (`position_limit`)."""
    limits = [getattr(config, "max_position_embeddings", None), getattr(tokenizer, "model_max_length", None)]
    limits = [n for n in limits if isinstance(n, int) and 0 < n < NO_TOKENIZER_LIMIT]
    return min(limits) if limits else None


def check_model_inputs(model_args: ModelArguments, data_args: DataArguments) -> None:
    """Before any data is read: the model (and `--tokenizer_name`) exist (`check_model_path`), and
    `--max_seq_length` fits the model's position limit (a longer input fails at the first step)."""
    check_model_path(model_args.model_name_or_path, "--model_name_or_path", model_args.cache_dir)
    if model_args.tokenizer_name:
        check_model_path(model_args.tokenizer_name, "--tokenizer_name", model_args.cache_dir, need_config=False)
    check_tokenizer_files(model_args)
    limit = position_limit(model_args)
    if limit is not None and data_args.max_seq_length > limit:
        raise InputError(
            f"--max_seq_length {data_args.max_seq_length} is above the {limit} tokens {model_args.model_name_or_path} "
            f"reads (its position limit): use --max_seq_length {limit} or less"
        )


def check_tokenizer_files(model_args: ModelArguments) -> None:
    """A local model folder read for its tokenizer holds a tokenizer's files (`run_files.holds_tokenizer_files`):
    without them transformers builds one whose every word is the unknown token, and the run would train on it."""
    flag = "--tokenizer_name" if model_args.tokenizer_name else "--model_name_or_path"
    source = model_args.tokenizer_name or model_args.model_name_or_path
    if os.path.isdir(source) and not holds_tokenizer_files(source):
        raise InputError(
            f"{flag} {source} holds no tokenizer files ({', '.join(TOKENIZER_FILES[:3])}, ...): transformers would "
            f"build one from {MODEL_CONFIG_NAME} alone that reads every word as unknown. Pass --tokenizer_name with "
            "the model the checkpoint was fine-tuned from (or save its tokenizer into the folder)"
        )


def attach_hard_flags(validation: Dataset, task: TaskSpec, data_args: DataArguments) -> tuple[Dataset, str | None]:
    """The dev set with its `hard` column as 0/1 (`hf_srnets.evaluation.easy_hard.hard_flags`: `--hard_subset`,
    the set's own column, the task's split under `--data_dir`) and where it came from; unchanged without a split."""
    own_dev_set = not data_args.validation_file
    flags, source = hard_flags(validation, task, data_args.hard_subset, data_args.data_dir, own_dev_set)
    if flags is None:
        return validation, None
    if HARD_COLUMN in validation.column_names:
        validation = validation.remove_columns(HARD_COLUMN)
    return validation.add_column(HARD_COLUMN, flags), source


def align_labels(
    model_args: ModelArguments, task: TaskSpec, train: Dataset, validation: Dataset, ood: list[tuple[EvalSet, Dataset]]
) -> tuple[TaskSpec, Dataset, Dataset, list[tuple[EvalSet, Dataset]]]:
    """Adopt a fine-tuned checkpoint's own label order (by name): remap gold ids and p_b/p_t columns to it."""
    config = auto_from_pretrained(
        transformers.AutoConfig, model_args.model_name_or_path, cache_dir=model_args.cache_dir
    )
    order = checkpoint_label_order(config, task, model_args.model_name_or_path)
    if order is None or tuple(order) == tuple(task.label_names):
        return task, train, validation, ood
    perm = label_permutation(task.label_names, order)
    old = tuple(task.label_names)
    ood = [
        (dataclasses.replace(s, label_names=tuple(order)), remap_dataset(d, perm)) if s.label_names == old else (s, d)
        for s, d in ood
    ]
    return reorder_task(task, order), remap_dataset(train, perm), remap_dataset(validation, perm), ood


def tokenize_data(
    data: RunData, model_args: ModelArguments, data_args: DataArguments, args: SRNetTrainingArguments
) -> None:
    """Load the tokenizer and tokenise every split (one text or a pair, truncated to `--max_seq_length`)."""
    source = model_args.tokenizer_name or model_args.model_name_or_path
    tokenizer = ensure_pad_token(auto_from_pretrained(AutoTokenizer, source, cache_dir=model_args.cache_dir), source)

    def tokenize(batch: dict[str, list]) -> dict[str, list]:
        texts = (batch["sentence1"],) + ((batch["sentence2"],) if "sentence2" in batch else ())
        return tokenizer(*texts, truncation=True, max_length=data_args.max_seq_length)

    with args.main_process_first(desc="tokenizing"):
        data.train_tok = data.train.map(tokenize, batched=True, desc="tokenizing train")
        data.validation_tok = data.validation.map(tokenize, batched=True, desc="tokenizing validation")
        data.ood_tok = [(s, d.map(tokenize, batched=True, desc=f"tokenizing {s.name}")) for s, d in data.ood]
    data.tokenizer = tokenizer
