#!/usr/bin/env python
"""Fine-tune or search a sparse and robust subnetwork (SRNet) of a BERT-family model, then evaluate ID and OOD.

    accelerate launch run_glue_sparse.py --model_name_or_path bert-base-uncased --task mnli \\
        --pruning mask --loss poe --sparsity 0.5 --bias_predictions bias/bias_train.jsonl --output_dir out

A single `.json` or `.yaml` argument is read as the whole configuration.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import transformers
import yaml
from datasets import Dataset, concatenate_datasets
from transformers import AutoModelForSequenceClassification, AutoTokenizer, HfArgumentParser, set_seed

from hf_srnets.data import (
    BIAS_COLUMN,
    TEACHER_COLUMN,
    EvalSet,
    SplitSource,
    TaskSpec,
    add_probability_column,
    custom_task,
    get_task,
    id_set_name,
    load_file,
    load_source,
    ood_file_set,
    read_predictions,
    write_predictions,
)
from hf_srnets.evaluation import primary_metric, results_table, score_predictions, softmax
from hf_srnets.hub import MERGED_DIR, HubUploadError, push_masks, push_merged, save_merged, upload_folder
from hf_srnets.losses import LOSSES
from hf_srnets.masking import SRNetMaskConfig, SRNetModel
from hf_srnets.model_card import render_model_card
from hf_srnets.pruning import FixedMaskCallback, IMPCallback, imp_rounds
from hf_srnets.trainer import SRNetTrainer
from hf_srnets.training_args import SRNetTrainingArguments

logger = logging.getLogger(__name__)


@dataclass
class ModelArguments:
    model_name_or_path: str = field(metadata={"help": "Hub id or local dir of the model to fine-tune or prune."})
    tokenizer_name: str | None = field(default=None, metadata={"help": "Tokenizer, if not the model's."})
    cache_dir: str | None = field(default=None, metadata={"help": "Where Hub downloads are cached."})
    pruning: str = field(
        default="none",
        metadata={
            "help": "none (full fine-tuning), mask (mask training), imp or imp-rw (iterative magnitude "
            "pruning, with rewinding to the starting weights: Algorithm 1)."
        },
    )
    imp_prune_ratio: float = field(default=0.1, metadata={"help": "IMP: Δs pruned per round (Table 4: 10%)."})
    imp_interval: float = field(default=0.1, metadata={"help": "IMP: Δt between rounds, fraction of t_max (0.1)."})
    mask_from: str | None = field(
        default=None,
        metadata={
            "help": "Fine-tune a found subnetwork in isolation (paradigm b): apply the masks saved in this "
            "dir or Hub repo to the model and train its remaining weights; pruned weights stay 0."
        },
    )
    sparsity: float = field(default=0.5, metadata={"help": "Target sparsity s of each prunable matrix."})
    initial_sparsity: float | None = field(
        default=None, metadata={"help": "Start sparsity s_i: enables the cubic schedule s_i -> s (§5.2: 0.7 -> 0.9)."}
    )
    schedule_end: float = field(default=0.8, metadata={"help": "Fraction of training where the cubic ramp ends."})
    mask_init: str = field(default="hard", metadata={"help": "hard (appendix Eq. 1) or soft (Eq. 2)."})
    mask_alpha: float = field(default=2.0, metadata={"help": "α of the hard init (Table 4: 2)."})
    mask_threshold: float = field(default=0.01, metadata={"help": "φ of the hard init (Table 4: 0.01)."})
    threshold_update_interval: int | None = field(
        default=None, metadata={"help": "Δt_φ in steps; default: --eval_steps (Table 4), else 1000."}
    )
    sparsity_scope: str = field(default="local", metadata={"help": "local (per matrix, the paper) or global."})
    mask_classifier: bool = field(default=True, metadata={"help": "Mask the classifier weight W_cls too."})
    trainable_classifier: bool | None = field(
        default=None,
        metadata={"help": "Train the classifier with the masks; default: only if it is newly initialised."},
    )
    target_modules: str | None = field(
        default=None, metadata={"help": "Regex of linear layers to mask; default: the paper's θ_pr per architecture."}
    )
    early_start_patience: int | None = field(
        default=None,
        metadata={
            "help": "Early start (appendix E.1): fine-tune the full model with CE first, stop once the ID dev "
            "metric has not improved for this many evaluations, and search from the best checkpoint."
        },
    )
    save_merged: bool = field(
        default=False, metadata={"help": "Also write OUTPUT_DIR/merged: a plain checkpoint, pruned weights = 0."}
    )
    push_merged: bool = field(
        default=False,
        metadata={"help": "Upload the merged checkpoint (implies --save_merged)."},
    )
    hub_merged_model_id: str | None = field(
        default=None, metadata={"help": "Hub repo of the merged checkpoint; default: <hub_model_id>-merged."}
    )


@dataclass
class DataArguments:
    task: str = field(default="mnli", metadata={"help": "mnli, qqp, fever, or custom (with --task_labels)."})
    data_dir: str | None = field(default=None, metadata={"help": "Local data dir (layout in README)."})
    train_file: str | None = field(default=None, metadata={"help": "Training file (.tsv, .csv, .jsonl)."})
    validation_file: str | None = field(default=None, metadata={"help": "ID dev file."})
    # "extend": repeated flags add up (argparse's default would keep only the last one)
    ood_file: list[str] = field(
        default_factory=list, metadata={"help": "NAME=PATH, repeatable: extra OOD sets.", "action": "extend"}
    )
    extra_train: list[str] = field(
        default_factory=list,
        metadata={
            "help": "NAME=PATH[xK], repeatable: mix this training data in, K copies (OOD-informed search, §4.5).",
            "action": "extend",
        },
    )
    no_default_ood: bool = field(default=False, metadata={"help": "Skip the task's default OOD sets."})
    task_labels: str | None = field(default=None, metadata={"help": "Comma-separated label names for --task custom."})
    max_seq_length: int = field(default=128, metadata={"help": "Truncation length (Table 3: 128)."})
    max_train_samples: int | None = field(default=None, metadata={"help": "Use only the first N training rows."})
    max_eval_samples: int | None = field(default=None, metadata={"help": "Use only the first N ID dev rows."})
    max_ood_samples: int | None = field(
        default=None, metadata={"help": "Use N rows of each OOD set, drawn evenly across it (keeps HANS cells)."}
    )
    bias_predictions: str | None = field(default=None, metadata={"help": "JSON lines {id, probs} of p_b on train."})
    teacher_predictions: str | None = field(default=None, metadata={"help": "JSON lines {id, probs} of p_t on train."})
    bias_model: str | None = field(
        default=None, metadata={"help": "overlap|claim: compute p_b with run_bias_model's model when no file is given."}
    )
    bias_vectors: str | None = field(default=None, metadata={"help": "Word vectors for --bias_model."})
    write_train_predictions: str | None = field(
        default=None,
        metadata={
            "help": "After training, write the model's softmax on the train set here "
            "(teacher predictions for --loss confreg)."
        },
    )


def early_start(
    model: Any,
    patience: int,
    args: SRNetTrainingArguments,
    task: TaskSpec,
    train_tok: Dataset,
    validation_tok: Dataset,
    tokenizer: Any,
    compute_metrics: Any,
) -> tuple[Any, dict[str, Any]]:
    """Appendix E.1: CE fine-tuning with early stopping on the ID dev metric; return the best model and the steps.

    The checkpoint is kept in `<output_dir>/early_start`.
    """
    from transformers import EarlyStoppingCallback

    from hf_srnets.collator import SRNetDataCollator

    ft_args = dataclasses.replace(
        args,
        output_dir=os.path.join(args.output_dir, "early_start"),
        loss="ce",
        load_best_model_at_end=True,
        metric_for_best_model=task.metric,
        greater_is_better=True,
        save_strategy="steps",
        save_steps=args.eval_steps,
        save_total_limit=2,
        select_best_after=0.0,
        mask_learning_rate=None,
    )
    trainer = SRNetTrainer(
        model=model,
        args=ft_args,
        train_dataset=train_tok,
        eval_dataset=validation_tok,
        processing_class=tokenizer,
        data_collator=SRNetDataCollator(tokenizer),
        compute_metrics=compute_metrics,
        callbacks=[EarlyStoppingCallback(early_stopping_patience=patience)],
    )
    trainer.train()
    trainer.save_model()
    state = trainer.state
    info = {
        "early_start_steps": state.global_step,
        "early_start_planned_steps": state.max_steps,
        "early_start_steps_saved": state.max_steps - state.global_step,
        "early_start_best_step": state.best_global_step,
        f"early_start_best_{task.metric}": state.best_metric,
    }
    logger.info(
        f"Early start: fine-tuning stopped at step {state.global_step} of {state.max_steps} "
        f"(best at {state.best_global_step}); searching from there"
    )
    return trainer.model, info


def push_outputs(
    model_args: ModelArguments, args: SRNetTrainingArguments, pruned: bool, push_to_hub: bool, repo_id: str
) -> None:
    """Upload the run: the mask repo (or the full model when not pruning) and, if asked, the merged checkpoint."""
    if push_to_hub:
        if pruned:
            push_masks(args.output_dir, repo_id, token=args.hub_token, private=args.hub_private_repo)
        else:
            files = ["*.json", "*.safetensors", "*.txt", "*.model", "README.md"]
            upload_folder(args.output_dir, repo_id, files, token=args.hub_token, private=args.hub_private_repo)
        logger.info(f"Pushed {args.output_dir} to the Hub: {repo_id}")
    if model_args.push_merged and pruned:
        merged_repo = model_args.hub_merged_model_id or f"{repo_id}-merged"
        push_merged(args.output_dir, merged_repo, token=args.hub_token, private=args.hub_private_repo)
        logger.info(f"Pushed the merged checkpoint to the Hub: {merged_repo}")


def dict_to_argv(config: dict[str, Any]) -> list[str]:
    """`{"sparsity": 0.5, "do_train": True}` -> `["--sparsity", "0.5", "--do_train", "true"]`; lists spread."""
    argv: list[str] = []
    for key, value in config.items():
        if isinstance(value, list):
            argv += [f"--{key}", *map(str, value)]
        elif isinstance(value, bool):
            argv += [f"--{key}", str(value).lower()]
        elif value is not None:
            argv += [f"--{key}", str(value)]
    return argv


def config_to_argv(path: str) -> list[str]:
    """Turn a JSON or YAML config file into command-line arguments."""
    with open(path, encoding="utf-8") as f:
        config = json.load(f) if path.endswith(".json") else yaml.safe_load(f)
    if not isinstance(config, dict):
        raise ValueError(f"{path} must hold a mapping of argument names to values")
    return dict_to_argv(config)


def parse_args(argv: list[str] | None = None) -> tuple[ModelArguments, DataArguments, SRNetTrainingArguments]:
    """Parse flags; a leading `.json`/`.yaml` file gives the configuration and later flags override it."""
    parser = HfArgumentParser((ModelArguments, DataArguments, SRNetTrainingArguments))
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0].endswith((".json", ".yaml", ".yml")):
        argv = config_to_argv(argv[0]) + argv[1:]
    return parser.parse_args_into_dataclasses(args=argv)


def validate_args(model_args: ModelArguments, data_args: DataArguments, args: SRNetTrainingArguments) -> None:
    if model_args.pruning not in ("none", "mask", "imp", "imp-rw"):
        raise ValueError(f"--pruning must be none, mask, imp or imp-rw, got {model_args.pruning!r}")
    if model_args.early_start_patience is not None and not (args.eval_strategy == "steps" and args.eval_steps):
        raise ValueError(
            "--early_start_patience needs --eval_strategy steps --eval_steps N (the patience counts evaluations)"
        )
    if model_args.mask_from and model_args.pruning != "none":
        raise ValueError("--mask_from fine-tunes a fixed subnetwork: use it with --pruning none")
    if not 0.0 <= model_args.sparsity < 1.0:
        raise ValueError(f"--sparsity must be in [0, 1), got {model_args.sparsity}")
    if model_args.pruning in ("imp", "imp-rw"):
        imp_rounds(model_args.sparsity, model_args.imp_prune_ratio, model_args.imp_interval)
    if model_args.pruning != "mask":
        mask_search_only = {
            "--initial_sparsity": model_args.initial_sparsity,
            "--threshold_update_interval": model_args.threshold_update_interval,
            "--mask_learning_rate": args.mask_learning_rate,
        }
        given = [flag for flag, value in mask_search_only.items() if value is not None]
        if given:
            raise ValueError(
                f"{', '.join(given)} configure mask training and would do nothing with --pruning "
                f"{model_args.pruning}: use --pruning mask, or drop them."
            )
    needs = LOSSES[args.loss].requires
    if "bias_probs" in needs and not (data_args.bias_predictions or data_args.bias_model):
        raise ValueError(
            f"--loss {args.loss} needs bias predictions: pass --bias_predictions FILE "
            "(from run_bias_model.py) or --bias_model overlap|claim."
        )
    if "teacher_probs" in needs and not data_args.teacher_predictions:
        raise ValueError(
            f"--loss {args.loss} needs --teacher_predictions FILE: write one with "
            "--write_train_predictions from a CE fine-tuned model."
        )
    if data_args.bias_model not in (None, "overlap", "claim"):
        raise ValueError(
            f"--bias_model must be 'overlap' (sentence pairs) or 'claim' (claim only), got {data_args.bias_model!r}"
        )
    for spec in data_args.ood_file:
        if "=" not in spec:
            raise ValueError(f"--ood_file expects NAME=PATH, got {spec!r}")


def resolve_task(data_args: DataArguments) -> TaskSpec:
    if data_args.task == "custom":
        if not data_args.task_labels:
            raise ValueError("--task custom needs --task_labels, e.g. --task_labels negative,positive")
        return custom_task([n.strip() for n in data_args.task_labels.split(",")])
    return get_task(data_args.task)


def load_splits(
    task: TaskSpec, data_args: DataArguments, cache_dir: str | None
) -> tuple[Dataset, Dataset, list[tuple[EvalSet, Dataset]]]:
    def load(source: SplitSource, file: str | None, labels: tuple[str, ...], name: str) -> Dataset:
        if file:
            return load_file(file, labels, name=f"{name} ({file})", aliases=task.label_aliases)
        return load_source(
            source, labels, name=name, data_dir=data_args.data_dir, aliases=task.label_aliases, cache_dir=cache_dir
        )

    train = load(task.train, data_args.train_file, task.label_names, f"{task.name} train")
    validation = load(task.validation, data_args.validation_file, task.label_names, f"{task.name} validation")
    ood: list[tuple[EvalSet, Dataset]] = []
    if not data_args.no_default_ood:
        for eval_set in task.ood:
            ood.append((eval_set, load(eval_set.source, None, eval_set.label_names, eval_set.name)))
    for spec in data_args.ood_file:
        eval_set = ood_file_set(spec, task)
        path = eval_set.source.local_paths[0]
        ood.append(
            (
                eval_set,
                load_file(path, eval_set.label_names, name=f"{eval_set.name} ({path})", aliases=task.label_aliases),
            )
        )
    return train, validation, ood


EXTRA_TRAIN_PATTERN = re.compile(r"^(?P<name>[\w.-]+)=(?P<path>.+?)(?:x(?P<copies>\d+))?$")
# HANS (2-way) mixed into 3-way NLI training: non-entailment is trained as contradiction; HANS is scored with
# neutral and contradiction collapsed, so either non-entailment class counts as correct there.
NLI_EXTRA_ALIASES = {"non-entailment": "contradiction", "non_entailment": "contradiction"}


def add_extra_training_data(
    train: Dataset, task: TaskSpec, specs: list[str], data_args: DataArguments, ood: list[tuple[EvalSet, Dataset]]
) -> Dataset:
    """Append `NAME=PATH[xK]` sets to the training data (ids prefixed `NAME[#k]:`); refuse evaluation sets."""
    eval_paths = {
        os.path.abspath(p) for p in [data_args.validation_file, *[o.split("=", 1)[1] for o in data_args.ood_file]] if p
    }
    if data_args.data_dir:
        for source in [task.validation, *(s.source for s, _ in ood)]:
            eval_paths |= {os.path.abspath(os.path.join(data_args.data_dir, rel)) for rel in source.local_paths}
    eval_pairs = [set(zip(d["sentence1"], d["sentence2"])) for _, d in ood if "sentence2" in d.column_names]
    columns = [c for c in ("id", "sentence1", "sentence2", "label") if c in train.column_names]
    parts = [train.select_columns(columns)]
    aliases = {**task.label_aliases, **(NLI_EXTRA_ALIASES if "entailment" in task.label_names else {})}
    for spec in specs:
        match = EXTRA_TRAIN_PATTERN.match(spec)
        if match is None:
            raise ValueError(f"--extra_train expects NAME=PATH or NAME=PATHxK, got {spec!r}")
        name, path, copies = match["name"], match["path"], int(match["copies"] or 1)
        if os.path.abspath(path) in eval_paths:
            raise ValueError(
                f"--extra_train {spec}: {path} is also an evaluation set; training on it would leak "
                "test data. Use the set's training split (e.g. hans/heuristics_train_set.tsv)."
            )
        extra = load_file(path, task.label_names, name=f"{name} ({path})", aliases=aliases)
        if "sentence2" in extra.column_names:
            pairs = set(zip(extra["sentence1"], extra["sentence2"]))
            for seen in eval_pairs:
                if len(pairs & seen) > len(pairs) / 2:
                    raise ValueError(
                        f"--extra_train {spec}: most of its pairs are in an evaluation set; refusing "
                        "to train on evaluation data."
                    )
        extra = extra.select_columns(columns)
        for k in range(copies):
            prefix = f"{name}:" if copies == 1 else f"{name}#{k}:"
            parts.append(extra.map(lambda row, p=prefix: {"id": p + row["id"]}, desc=f"adding {name}"))
        logger.info(f"Added {copies} x {len(extra)} examples of {name} to the training set")
    return concatenate_datasets(parts)


def evenly_spaced(dataset: Dataset, n: int | None) -> Dataset:
    if n is None or n >= len(dataset):
        return dataset
    return dataset.select(np.linspace(0, len(dataset) - 1, n).round().astype(int).tolist())


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
                from hf_srnets.bias import compute_bias_predictions, save_bias_predictions

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


def load_model(model_args: ModelArguments, task: TaskSpec) -> tuple[Any, bool]:
    """Load the classifier; return it and whether its classification head was newly initialised."""
    config = transformers.AutoConfig.from_pretrained(model_args.model_name_or_path, cache_dir=model_args.cache_dir)
    saved_labels = getattr(config, "num_labels", None)
    finetuned = bool(getattr(config, "architectures", None)) and any(
        a.endswith("ForSequenceClassification") for a in config.architectures
    )
    if finetuned and saved_labels != task.num_labels:
        raise ValueError(
            f"{model_args.model_name_or_path} is a classifier with {saved_labels} labels, but task {task.name!r} "
            f"has {task.num_labels} ({list(task.label_names)}). Use a checkpoint fine-tuned on this task, or the "
            "pre-trained model."
        )
    id2label = dict(enumerate(task.label_names))
    model, info = AutoModelForSequenceClassification.from_pretrained(
        model_args.model_name_or_path,
        num_labels=task.num_labels,
        id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
        cache_dir=model_args.cache_dir,
        output_loading_info=True,
    )
    fresh_head = any(("classifier" in k or "pooler" in k) for k in info.get("missing_keys", []))
    return model, fresh_head


def main(argv: list[str] | None = None) -> dict[str, Any]:
    model_args, data_args, args = parse_args(argv)
    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        level=logging.INFO,
        handlers=[logging.StreamHandler(sys.stdout)],
    )
    transformers.utils.logging.set_verbosity(args.get_process_log_level())
    validate_args(model_args, data_args, args)
    set_seed(args.seed)
    task = resolve_task(data_args)
    # The Trainer would create the repo at start-up and push the whole output dir with its own card;
    # hf_srnets pushes the masks (or the model) and its card once everything is saved locally.
    push_to_hub, args.push_to_hub = args.push_to_hub, False
    repo_id = args.hub_model_id or os.path.basename(os.path.normpath(args.output_dir))
    if data_args.bias_model is not None:
        task = dataclasses.replace(task, bias_model=data_args.bias_model)

    with args.main_process_first(desc="loading data"):  # the main process writes caches first
        full_train, validation, ood = load_splits(task, data_args, model_args.cache_dir)
        train = full_train
        if data_args.max_train_samples is not None:
            train = full_train.select(range(min(data_args.max_train_samples, len(full_train))))
        eval_splits = {"validation": validation, **{s.name: d for s, d in ood}}
        if data_args.extra_train:
            train = add_extra_training_data(train, task, data_args.extra_train, data_args, ood)
        train, bias_desc = attach_probabilities(train, full_train, task, data_args, args, eval_splits)
    if data_args.max_eval_samples is not None:
        validation = validation.select(range(min(data_args.max_eval_samples, len(validation))))
    ood = [(s, evenly_spaced(d, data_args.max_ood_samples)) for s, d in ood]

    tokenizer = AutoTokenizer.from_pretrained(
        model_args.tokenizer_name or model_args.model_name_or_path, cache_dir=model_args.cache_dir
    )

    def tokenize(batch: dict[str, list]) -> dict[str, list]:
        texts = (batch["sentence1"],) + ((batch["sentence2"],) if "sentence2" in batch else ())
        return tokenizer(*texts, truncation=True, max_length=data_args.max_seq_length)

    with args.main_process_first(desc="tokenizing"):
        train_tok = train.map(tokenize, batched=True, desc="tokenizing train")
        validation_tok = validation.map(tokenize, batched=True, desc="tokenizing validation")
        ood_tok = [(s, d.map(tokenize, batched=True, desc=f"tokenizing {s.name}")) for s, d in ood]

    def compute_metrics(eval_pred: Any) -> dict[str, float]:
        return score_predictions(task, eval_pred.predictions, eval_pred.label_ids)

    model, fresh_head = load_model(model_args, task)
    early_start_info: dict[str, Any] = {}
    if model_args.early_start_patience is not None:
        model, early_start_info = early_start(
            model, model_args.early_start_patience, args, task, train_tok, validation_tok, tokenizer, compute_metrics
        )
        fresh_head = False
    callbacks: list[Any] = []
    if model_args.pruning == "mask":
        interval = model_args.threshold_update_interval or (
            args.eval_steps if args.eval_strategy == "steps" and args.eval_steps else 1000
        )
        trainable_classifier = (
            fresh_head if model_args.trainable_classifier is None else model_args.trainable_classifier
        )
        if fresh_head and not trainable_classifier:
            logger.warning("The classifier is newly initialised but --trainable_classifier false: it stays random.")
        mask_config = SRNetMaskConfig(
            target_modules=model_args.target_modules,
            mask_classifier=model_args.mask_classifier,
            trainable_classifier=trainable_classifier,
            sparsity=model_args.sparsity,
            initial_sparsity=model_args.initial_sparsity,
            sparsity_schedule="cubic" if model_args.initial_sparsity is not None else "constant",
            schedule_end=model_args.schedule_end,
            mask_init=model_args.mask_init,
            alpha=model_args.mask_alpha,
            init_threshold=model_args.mask_threshold,
            threshold_update_interval=int(interval),
            sparsity_scope=model_args.sparsity_scope,
            base_model_name_or_path=model_args.model_name_or_path,
        )
        model = SRNetModel(model, mask_config)
    elif model_args.pruning in ("imp", "imp-rw"):
        model = SRNetModel(
            model,
            SRNetMaskConfig(
                target_modules=model_args.target_modules,
                mask_classifier=model_args.mask_classifier,
                sparsity=model_args.sparsity,
                base_model_name_or_path=model_args.model_name_or_path,
            ),
            initialize=False,
        )
        model.train_weights_with_fixed_masks()
        callbacks.append(
            IMPCallback(
                model,
                model_args.sparsity,
                model_args.imp_prune_ratio,
                model_args.imp_interval,
                rewind=model_args.pruning == "imp-rw",
            )
        )
    elif model_args.mask_from:
        model = SRNetModel.from_pretrained(model, model_args.mask_from, check_fingerprint=False)
        model.train_weights_with_fixed_masks()
        callbacks.append(FixedMaskCallback(model))
        logger.info(
            f"Fine-tuning the subnetwork of {model_args.mask_from} "
            f"({100 * model.sparsity_report()['sparsity']:.1f}% sparse) in isolation"
        )
        logger.info(model.print_trainable_parameters())

    from hf_srnets.collator import SRNetDataCollator

    trainer = SRNetTrainer(
        callbacks=callbacks,
        model=model,
        args=args,
        train_dataset=train_tok if args.do_train else None,
        eval_dataset=validation_tok,
        processing_class=tokenizer,
        data_collator=SRNetDataCollator(tokenizer),
        compute_metrics=compute_metrics,
    )

    results: dict[str, Any] = {}
    if args.do_train:
        train_result = trainer.train(resume_from_checkpoint=args.resume_from_checkpoint)
        trainer.save_model()
        results.update({f"train_{k}" if not k.startswith("train") else k: v for k, v in train_result.metrics.items()})
        results["train_steps"] = train_result.global_step
        trainer.save_state()

    metric_rows: list[tuple[str, str, dict[str, Any]]] = []
    id_name = id_set_name(task)
    id_metrics = trainer.evaluate(validation_tok, metric_key_prefix=f"eval_{id_name}")
    results.update(id_metrics)
    id_source = task.validation if not data_args.validation_file else SplitSource()
    metric_rows.append((id_name, f"eval_{id_name}_{task.metric}", card_dataset(id_name, id_source)))
    for eval_set, dataset in ood_tok:
        output = trainer.predict(dataset, metric_key_prefix=f"eval_{eval_set.name}")
        heuristics = dataset["heuristic"] if "heuristic" in dataset.column_names else None
        scores = score_predictions(task, output.predictions, np.asarray(dataset["label"]), eval_set, heuristics)
        results.update({f"eval_{eval_set.name}_{k}": v for k, v in scores.items()})
        key = f"eval_{eval_set.name}_{primary_metric(task, eval_set)}"
        metric_rows.append((eval_set.name, key, card_dataset(eval_set.name, eval_set.source)))

    srnet = trainer.srnet_model
    sparsity = srnet.sparsity_report() if srnet is not None else None
    results["sparsity"] = sparsity["sparsity"] if sparsity else 0.0
    results["train_examples"] = len(train)
    results.update(early_start_info)
    if args.should_save:
        os.makedirs(args.output_dir, exist_ok=True)
        trainer.save_metrics("all", results, combined=False)
        if sparsity is not None:
            with open(os.path.join(args.output_dir, "sparsity_report.json"), "w") as f:
                json.dump(sparsity, f, indent=2)
        info = {
            "title": os.path.basename(os.path.normpath(args.output_dir)),
            "task": task.name,
            "base_model": model_args.model_name_or_path,
            "pruning": model_args.pruning,
            "schedule": schedule_description(model_args),
            "loss": args.loss,
            "bias_model": bias_desc,
            "sparsity_report": sparsity,
            "results": results,
            "metric_rows": metric_rows,
            "datasets": TASK_DATASETS.get(task.name, []),
            "usage": usage_snippet(model_args, repo_id if push_to_hub else args.output_dir),
            "training_args": card_training_args(model_args, data_args, args, len(train)),
        }
        with open(os.path.join(args.output_dir, "README.md"), "w", encoding="utf-8") as f:
            f.write(render_model_card(info))
        merged_repo = model_args.hub_merged_model_id or f"{repo_id}-merged"
        if srnet is not None and (model_args.save_merged or model_args.push_merged):
            merged_info = {
                **info,
                "merged": True,
                "usage": merged_usage(
                    merged_repo if model_args.push_merged else os.path.join(args.output_dir, MERGED_DIR)
                ),
            }
            save_merged(srnet, args.output_dir, tokenizer, render_model_card(merged_info))

    if data_args.write_train_predictions:
        output = trainer.predict(
            train_tok.remove_columns([c for c in (BIAS_COLUMN, TEACHER_COLUMN) if c in train_tok.column_names])
        )
        if args.should_save:
            write_predictions(data_args.write_train_predictions, train["id"], softmax(output.predictions))
            logger.info(f"Wrote train-set predictions to {data_args.write_train_predictions}")

    if trainer.is_world_process_zero():
        rows = [(name, key) for name, key, _ in metric_rows]
        print(f"\nResults ({model_args.pruning}, loss={args.loss}, sparsity={100 * results['sparsity']:.1f}%):")
        print(results_table(results, rows))
    if args.should_save:  # last, so a failed upload leaves every local output in place
        push_outputs(model_args, args, srnet is not None, push_to_hub, repo_id)
    return results


TASK_DATASETS = {
    "mnli": ["nyu-mll/glue", "jhu-cogsci/hans"],
    "qqp": ["nyu-mll/glue", "google-research-datasets/paws"],
}


def card_dataset(name: str, source: SplitSource) -> dict[str, Any]:
    """The model-index `dataset` entry: the Hub id when the set is on the Hub, else its name."""
    entry: dict[str, Any] = {"name": name, "type": source.hub_path or name}
    if source.hub_config:
        entry["config"] = source.hub_config
    if source.hub_split:
        entry["split"] = source.hub_split
    return entry


def schedule_description(model_args: ModelArguments) -> str | None:
    if model_args.mask_from:
        return f"weights fine-tuned in isolation under the fixed masks of `{model_args.mask_from}` (paradigm b)"
    if model_args.pruning in ("imp", "imp-rw"):
        return (
            f"iterative magnitude pruning (Algorithm 1): {model_args.imp_prune_ratio:.0%} of each matrix every "
            f"{model_args.imp_interval} of training up to {model_args.sparsity:.0%}"
            + (", weights rewound to the starting checkpoint" if model_args.pruning == "imp-rw" else "")
        )
    if model_args.pruning != "mask":
        return None
    init = f"{model_args.mask_init} init (appendix Eq. {1 if model_args.mask_init == 'hard' else 2})"
    if model_args.initial_sparsity is None:
        return f"mask training, sparsity fixed at {model_args.sparsity}, {init}"
    return (
        f"mask training, cubic sparsity schedule {model_args.initial_sparsity} -> {model_args.sparsity} "
        f"(reached at {model_args.schedule_end} of training), {init}"
    )


def merged_usage(path: str) -> str:
    return (
        "from transformers import AutoModelForSequenceClassification\n"
        f'model = AutoModelForSequenceClassification.from_pretrained("{path}")  # pruned weights are exactly 0'
    )


def usage_snippet(model_args: ModelArguments, output_dir: str) -> str:
    if model_args.pruning == "none":
        return (
            f"from transformers import AutoModelForSequenceClassification\n"
            f'model = AutoModelForSequenceClassification.from_pretrained("{output_dir}")'
        )
    return (
        "from transformers import AutoModelForSequenceClassification\n"
        "from hf_srnets.masking import SRNetModel\n\n"
        f'base = AutoModelForSequenceClassification.from_pretrained("{model_args.model_name_or_path}")\n'
        f'srnet = SRNetModel.from_pretrained(base, "{output_dir}")\n'
        "model = srnet.merge_and_unload()  # a plain transformers model, pruned weights are 0"
    )


def card_training_args(
    model_args: ModelArguments, data_args: DataArguments, args: SRNetTrainingArguments, num_train: int
) -> dict[str, Any]:
    out = {
        "pruning": model_args.pruning,
        "loss": args.loss,
        "training examples": num_train,
        "learning_rate": args.learning_rate,
        "per_device_train_batch_size": args.per_device_train_batch_size,
        "num_train_epochs": args.num_train_epochs,
        "max_steps": args.max_steps,
        "seed": args.seed,
        "max_seq_length": data_args.max_seq_length,
    }
    if model_args.pruning == "mask":
        out.update(
            {
                "sparsity": model_args.sparsity,
                "initial_sparsity": model_args.initial_sparsity,
                "mask_init": model_args.mask_init,
                "mask_learning_rate": args.mask_learning_rate,
                "threshold_update_interval": model_args.threshold_update_interval,
                "select_best_after": args.select_best_after,
            }
        )
    return out


if __name__ == "__main__":
    try:
        main()
    except HubUploadError as err:
        logger.error(str(err))
        sys.exit(1)
