"""The model phase of a run: load the classifier, optionally early-start it, wrap it with the pruning method."""

from __future__ import annotations

import dataclasses
import logging
import os
from typing import Any

from transformers import AutoModelForSequenceClassification, EarlyStoppingCallback

from ..collator import SRNetDataCollator
from ..data import TaskSpec
from ..masking import SRNetModel
from ..trainer import SRNetTrainer
from ..training_args import SRNetTrainingArguments
from .data import RunData
from .options import RunArguments

logger = logging.getLogger(__name__)


def load_model(model_name_or_path: str, task: TaskSpec, cache_dir: str | None) -> tuple[Any, bool]:
    """Load the classifier (labels in `task`'s order, see `align_labels`); return it and whether its head is new."""
    id2label = dict(enumerate(task.label_names))
    model, info = AutoModelForSequenceClassification.from_pretrained(
        model_name_or_path,
        num_labels=task.num_labels,
        id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
        cache_dir=cache_dir,
        output_loading_info=True,
    )
    fresh_head = any(("classifier" in k or "pooler" in k) for k in info.get("missing_keys", []))
    return model, fresh_head


def early_start(
    model: Any, patience: int, args: SRNetTrainingArguments, data: RunData, compute_metrics: Any
) -> tuple[Any, dict[str, Any]]:
    """Appendix E.1: CE fine-tuning with early stopping on the ID dev metric; return the best model and the steps.

    The checkpoint is kept in `<output_dir>/early_start`.
    """
    task = data.task
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


def build_model(run: RunArguments, data: RunData, compute_metrics: Any) -> tuple[Any, bool, dict[str, Any]]:
    """The model to train: loaded, early-started if asked, wrapped with the pruning method or the masks of
    `--mask_from`. Returns it, whether its classifier is newly initialised, and the early-start info."""
    model, fresh_head = load_model(run.model.model_name_or_path, data.task, run.model.cache_dir)
    info: dict[str, Any] = {}
    searched_on = run.model.model_name_or_path  # the weights the masks belong to
    if run.model.early_start_patience is not None:
        model, info = early_start(model, run.model.early_start_patience, run.training, data, compute_metrics)
        fresh_head = False
        searched_on = os.path.join(run.training.output_dir, "early_start")
    if run.pruning is not None:
        run.pruning.base_model_name_or_path = searched_on
        run.method.prepare_config(run.pruning, run.training, fresh_head=fresh_head)
        model = SRNetModel(model, run.pruning)
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
