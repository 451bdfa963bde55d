"""The model phase of a run: load the classifier, optionally early-start it, wrap it with the pruning method."""

from __future__ import annotations

import dataclasses
import logging
import os
from typing import Any

import torch
from torch.utils.data import DataLoader
from transformers import EarlyStoppingCallback

from ..arguments.glue_sparse_arguments import RunArguments
from ..compact import head_importance, heads_per_layer, heads_to_prune, keep_layers, narrow_ffn, prune_heads
from ..compact.loading import load_classifier
from ..data import TaskSpec
from ..errors import InputError
from ..export.onnx_classifier import OnnxClassifier, is_onnx_export
from ..export.torch_int8 import quantize_torch_int8
from ..masking import SRNetModel
from ..run_files import EARLY_START_DIR
from ..training.arguments import SRNetTrainingArguments
from ..training.collator import SRNetDataCollator
from ..training.trainer import SRNetTrainer
from .data import RunData
from .pad_token import set_model_pad_token

logger = logging.getLogger(__name__)


def load_model(model_name_or_path: str, task: TaskSpec, cache_dir: str | None) -> tuple[Any, bool]:
    """Load the classifier (labels in `task`'s order, see `align_labels`); return it and whether its head is new.

    Head-pruned checkpoints (written by a `--prune_heads` run) load too (`hf_srnets.compact.loading.load_classifier`).
    """
    if is_onnx_export(model_name_or_path):  # evaluated only (`check_onnx_run`)
        return OnnxClassifier(model_name_or_path), False
    model, info = load_classifier(model_name_or_path, task.label_names, cache_dir=cache_dir, output_loading_info=True)
    missing = info.get("missing_keys", [])
    fresh_head = any(("classifier" in k or "pooler" in k or k.startswith("score.")) for k in missing)
    return model, fresh_head


def training_options(run: RunArguments) -> list[str]:
    """The options of `run` that would train, prune or reshape its model."""
    asked = {
        "--do_train": run.training.do_train,
        "--pruning": run.pruning is not None,
        "--mask_from": bool(run.model.mask_from),
        "--student_layers": run.model.student_layers is not None,
        "--student_ffn_size": run.model.student_ffn_size is not None,
        "--prune_heads": run.model.prune_heads > 0,
        "--early_start_patience": run.model.early_start_patience is not None,
    }
    return [flag for flag, given in asked.items() if given]


def check_onnx_run(run: RunArguments) -> None:
    """An ONNX export is evaluated, nothing else: refuse what would train, prune or reshape it, naming the option."""
    refused = training_options(run) + (["--quantize int8"] if run.model.quantize != "none" else [])
    if refused:
        raise InputError(
            f"--model_name_or_path {run.model.model_name_or_path} is an ONNX export, which a run evaluates only "
            f"(--do_eval): drop {', '.join(refused)}, or give the PyTorch model it was exported from "
            "(export_report.json's source); an INT8 graph is made by run_export.py --format onnx --quantize int8"
        )


def quantized_for_eval(model: Any, run: RunArguments) -> tuple[Any, dict[str, Any]]:
    """`model` with PyTorch's dynamic INT8 Linear layers (`--quantize int8`), which a run evaluates only, on the
    CPU; and the settings for the results."""
    refused = training_options(run)
    if refused:
        raise InputError(
            f"--quantize int8 evaluates a trained model (--do_eval): drop {', '.join(refused)}, train first and "
            "evaluate the saved model (or its merged/ folder) in a second run with --quantize int8"
        )
    if not run.training.use_cpu and torch.cuda.is_available():
        raise InputError(
            "--quantize int8 runs PyTorch's INT8 kernels on the CPU, and this machine has a GPU the run would move "
            "the model to: add --use_cpu"
        )
    return quantize_torch_int8(model)


def early_start(
    model: Any, patience: int, args: SRNetTrainingArguments, data: RunData, compute_metrics: Any
) -> tuple[Any, dict[str, Any]]:
    """Appendix E.1: CE fine-tuning with early stopping on the ID dev metric; return the best model and the steps.

    The checkpoint is kept in `<output_dir>/early_start`.
    """
    task = data.task
    ft_args = dataclasses.replace(
        args,
        output_dir=os.path.join(args.output_dir, EARLY_START_DIR),
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
        train_dataset=data.train_tok,
        eval_dataset=data.validation_tok,
        processing_class=data.tokenizer,
        data_collator=SRNetDataCollator(data.tokenizer),
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


def compact_heads(model: Any, run: RunArguments, data: RunData, fresh_head: bool) -> dict[str, Any]:
    """`--prune_heads f`: remove the ⌊f·H⌋ heads of lowest importance on the run's training data (Du et al. 2023,
    §3.1 and appendix A); return `heads_pruned` ({layer: [heads]}) and `heads_kept_per_layer` for the results."""
    fraction, samples = run.model.prune_heads, run.model.head_importance_samples
    if fresh_head:
        logger.warning(
            "--prune_heads: the classifier is newly initialised, so head importance measures a random head; "
            "start from a fine-tuned checkpoint or use --early_start_patience for meaningful scores"
        )
    columns = [
        c for c in ("input_ids", "attention_mask", "token_type_ids", "label") if c in data.train_tok.column_names
    ]
    train = data.train_tok.select_columns(columns)
    if samples is not None:
        train = train.select(range(min(samples, len(train))))
    loader = DataLoader(
        train, batch_size=run.training.per_device_train_batch_size, collate_fn=SRNetDataCollator(data.tokenizer)
    )
    importance = head_importance(model, loader)
    heads = heads_to_prune(importance, fraction)
    prune_heads(model, heads)
    kept = heads_per_layer(model)
    removed = sum(len(h) for h in heads.values())
    logger.info(
        f"Head pruning: removed {removed} of {removed + sum(kept)} heads (importance on {len(train)} training "
        f"examples); heads kept per layer: {kept}; removed: {heads}"
    )
    return {"heads_pruned": {str(k): v for k, v in heads.items()}, "heads_kept_per_layer": kept}


def build_model(run: RunArguments, data: RunData, compute_metrics: Any) -> tuple[Any, bool, dict[str, Any]]:
    """The model to train: loaded, cut to `--student_layers` and `--student_ffn_size`, early-started if asked,
    head-pruned by `--prune_heads`, wrapped with the pruning method or the masks of `--mask_from`. Returns it,
    whether its classifier is newly initialised, and the info for the results (early start, layers and heads
    kept, the student's FFN width)."""
    model, fresh_head = load_model(run.model.model_name_or_path, data.task, run.model.cache_dir)
    if isinstance(model, OnnxClassifier):
        check_onnx_run(run)
        return model, False, {"onnx_export": model.export_report}
    set_model_pad_token(model, data.tokenizer)
    if run.model.quantize == "int8":
        model, settings = quantized_for_eval(model, run)
        return model, False, {"quantization": settings}
    info: dict[str, Any] = {}
    if run.model.student_layers is not None:
        info["student_layers_kept"] = keep_layers(model, run.model.student_layers)
    if run.model.student_ffn_size is not None:
        narrow_ffn(model, run.model.student_ffn_size)
        info["student_ffn_size"] = run.model.student_ffn_size
    searched_on = run.model.model_name_or_path  # the weights the masks belong to
    if run.model.early_start_patience is not None:
        model, early = early_start(model, run.model.early_start_patience, run.training, data, compute_metrics)
        info.update(early)
        fresh_head = False
        searched_on = os.path.join(run.training.output_dir, EARLY_START_DIR)
    if run.model.prune_heads > 0:
        info.update(compact_heads(model, run, data, fresh_head))
    if run.pruning is not None:  # the options stay as parsed: the model holds the config the run resolves
        config = run.pruning.resolved(base_model_name_or_path=searched_on)
        model = SRNetModel(model, run.method.prepare_config(config, run.training, fresh_head=fresh_head))
    elif run.model.mask_from:
        model = SRNetModel.from_pretrained(model, run.model.mask_from, check_fingerprint=False)
        # the run's masks now belong to the weights it retrains from (a ticket may come from a search on others,
        # Robust Tickets §3.3); every weight trains and is saved, the classifier too
        model.srnet_config.base_model_name_or_path = searched_on
        model.srnet_config.trainable_classifier = True
        model.record_fingerprint()
        model.train_weights_with_fixed_masks()
        logger.info(
            f"Fine-tuning the subnetwork of {run.model.mask_from} "
            f"({100 * model.sparsity_report()['sparsity']:.1f}% sparse) in isolation"
        )
        logger.info(model.print_trainable_parameters())
    return model, fresh_head, info
