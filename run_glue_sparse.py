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
import sys
from typing import Any

import numpy as np
import torch
import transformers
import yaml
from datasets import Dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer, HfArgumentParser, set_seed

from hf_srnets.arguments import DataArguments, ModelArguments
from hf_srnets.bias.attach import attach_probabilities
from hf_srnets.card_info import (
    card_dataset,
)
from hf_srnets.data import (
    BIAS_COLUMN,
    TEACHER_COLUMN,
    EvalSet,
    SplitSource,
    TaskSpec,
    id_set_name,
    write_predictions,
)
from hf_srnets.data.splits import add_extra_training_data, evenly_spaced, load_splits, resolve_task
from hf_srnets.evaluation import primary_metric, results_table, score_predictions, softmax
from hf_srnets.hub import MERGED_DIR, HubUploadError, push_run, save_merged
from hf_srnets.label_alignment import (
    checkpoint_label_order,
    label_permutation,
    remap_dataset,
    reorder_task,
    to_task_order,
)
from hf_srnets.losses import LOSSES
from hf_srnets.masking import SRNetMaskConfig, SRNetModel
from hf_srnets.model_card import render_model_card
from hf_srnets.output_dir import prepare_output_dir
from hf_srnets.pruning import FixedMaskCallback, IMPCallback, imp_rounds
from hf_srnets.trainer import SRNetTrainer
from hf_srnets.training_args import SRNetTrainingArguments

logger = logging.getLogger(__name__)


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
    """Upload the run: the mask repo (or the full model when not pruning) and, if asked, the merged checkpoint.

    Every upload is tried; a failure names each upload still to do with its retry command (`hub.push_run`)."""
    merged = (model_args.hub_merged_model_id or f"{repo_id}-merged") if model_args.push_merged and pruned else None
    if push_to_hub or merged:
        push_run(
            args.output_dir,
            repo_id if push_to_hub else None,
            merged,
            token=args.hub_token,
            private=args.hub_private_repo,
            pruned=pruned,
        )


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
    if model_args.pruning != "none" and not args.do_train:
        # `--pruning mask` is a search: evaluating the initial mask and writing a card as if it had run is wrong
        logger.info(f"--pruning {model_args.pruning} searches a subnetwork: training is on (--do_train)")
        args.do_train = True
    if model_args.pruning in ("imp", "imp-rw"):
        imp_rounds(
            model_args.sparsity,
            model_args.imp_prune_ratio,
            model_args.imp_interval,
            rewind=model_args.pruning == "imp-rw",
        )
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


def align_labels(
    model_args: ModelArguments, task: TaskSpec, train: Dataset, validation: Dataset, ood: list[tuple[EvalSet, Dataset]]
) -> tuple[TaskSpec, Dataset, Dataset, list[tuple[EvalSet, Dataset]]]:
    """Adopt a fine-tuned checkpoint's own label order (by name): remap gold ids and p_b/p_t columns to it."""
    config = transformers.AutoConfig.from_pretrained(model_args.model_name_or_path, cache_dir=model_args.cache_dir)
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


def load_model(model_args: ModelArguments, task: TaskSpec) -> tuple[Any, bool]:
    """Load the classifier (labels in `task`'s order, see `align_labels`); return it and whether its head is new."""
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
    with prepare_output_dir(
        args.output_dir,
        overwrite=model_args.overwrite_output_dir,
        resume=args.resume_from_checkpoint,
        is_main_process=args.should_save,
        reads=files_read(model_args, data_args),
    ):
        return run(model_args, data_args, args)


def files_read(model_args: ModelArguments, data_args: DataArguments) -> list[str | None]:
    """What a run reads, which `--overwrite_output_dir` must never delete."""
    files = [model_args.model_name_or_path, model_args.tokenizer_name, model_args.mask_from]
    files += [data_args.train_file, data_args.validation_file, data_args.bias_predictions]
    files += [data_args.teacher_predictions, data_args.bias_vectors]
    return files + [spec.split("=", 1)[-1] for spec in [*data_args.ood_file, *data_args.extra_train]]


def run(model_args: ModelArguments, data_args: DataArguments, args: SRNetTrainingArguments) -> dict[str, Any]:
    """One run in a prepared output dir: data, model, training, evaluation, outputs."""
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
    task_order = task.label_names  # prediction files are read and written in this order
    task, train, validation, ood = align_labels(model_args, task, train, validation, ood)
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
    searched_on = model_args.model_name_or_path  # the weights the masks belong to
    if model_args.early_start_patience is not None:
        model, early_start_info = early_start(
            model, model_args.early_start_patience, args, task, train_tok, validation_tok, tokenizer, compute_metrics
        )
        fresh_head = False
        searched_on = os.path.join(args.output_dir, "early_start")
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
            base_model_name_or_path=searched_on,
        )
        model = SRNetModel(model, mask_config)
    elif model_args.pruning in ("imp", "imp-rw"):
        model = SRNetModel(
            model,
            SRNetMaskConfig(
                target_modules=model_args.target_modules,
                mask_classifier=model_args.mask_classifier,
                sparsity=model_args.sparsity,
                base_model_name_or_path=searched_on,
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
    results["torch_num_threads"] = torch.get_num_threads()  # bit-identical reruns need the same thread count
    results.update(early_start_info)
    if args.should_save:
        os.makedirs(args.output_dir, exist_ok=True)
        trainer.save_metrics("all", results, combined=False)
        if sparsity is not None:
            with open(os.path.join(args.output_dir, "sparsity_report.json"), "w") as f:
                json.dump(sparsity, f, indent=2)
        from hf_srnets.card_info import describe_splits, merged_card_info, run_card_info

        # the card states the data as read (files, subsets) and the effective settings of the saved model
        splits = describe_splits(
            task,
            data_args,
            train_rows=len(train),
            train_total=len(full_train),
            validation_rows=len(validation),
            ood=[(s, len(d)) for s, d in ood],
            id_name=id_name,
        )
        info = run_card_info(
            model_args,
            data_args,
            args,
            task=task,
            results=results,
            metric_rows=metric_rows,
            splits=splits,
            bias_desc=bias_desc,
            srnet=srnet,
            model=trainer.model,
            repo_id=repo_id if push_to_hub else None,
            random_head=srnet is not None and fresh_head and not srnet.srnet_config.trainable_classifier,
        )
        with open(os.path.join(args.output_dir, "README.md"), "w", encoding="utf-8") as f:
            f.write(render_model_card(info))
        merged_repo = model_args.hub_merged_model_id or f"{repo_id}-merged"
        if srnet is not None and (model_args.save_merged or model_args.push_merged):
            merged_at = merged_repo if model_args.push_merged else os.path.join(args.output_dir, MERGED_DIR)
            save_merged(srnet, args.output_dir, tokenizer, render_model_card(merged_card_info(info, merged_at)))

    if data_args.write_train_predictions:
        output = trainer.predict(
            train_tok.remove_columns([c for c in (BIAS_COLUMN, TEACHER_COLUMN) if c in train_tok.column_names])
        )
        if args.should_save:
            probs = to_task_order(softmax(output.predictions), label_permutation(task_order, task.label_names))
            write_predictions(data_args.write_train_predictions, train["id"], probs)
            logger.info(f"Wrote train-set predictions to {data_args.write_train_predictions}")

    if trainer.is_world_process_zero():
        rows = [(name, key) for name, key, _ in metric_rows]
        print(f"\nResults ({model_args.pruning}, loss={args.loss}, sparsity={100 * results['sparsity']:.1f}%):")
        print(results_table(results, rows))
    if args.should_save:  # last, so a failed upload leaves every local output in place
        push_outputs(model_args, args, srnet is not None, push_to_hub, repo_id)
    return results


if __name__ == "__main__":
    try:
        main()
    except HubUploadError as err:
        logger.error(str(err))
        sys.exit(1)
