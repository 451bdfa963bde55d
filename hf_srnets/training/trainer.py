"""`SRNetTrainer`: a `Trainer` that trains with a debiasing loss and, for an `SRNetModel`, searches its masks.

The private `Trainer` methods it overrides and the private attributes it reads are listed in `trainer_internals`
(checked against the installed transformers)."""

from __future__ import annotations

import contextlib
import inspect
import math
import os
import time
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import torch
from torch import nn
from torch.utils.data import Sampler
from transformers import Trainer
from transformers.trainer import TRAINING_ARGS_NAME
from transformers.trainer_utils import (
    PREFIX_CHECKPOINT_DIR,
    EvalLoopOutput,
    EvalPrediction,
    TrainOutput,
    get_last_checkpoint,
)
from transformers.utils import logging

from ..compact.remote_code import write_remote_code
from ..data.example_columns import EXAMPLE_COLUMNS
from ..errors import InputError, InputTypeError, check_model_argument, naming_path
from ..losses import DebiasingLoss
from ..masking import TRAINING_STATE_NAME, SRNetModel
from ..objectives import LossObjective, Objective, build_objective
from ..pruning.sharding import full_parameters
from ..run_files import TRAINER_STATE_NAME, detach_links
from .arguments import SRNetTrainingArguments
from .deepspeed import check_deepspeed_masks, enable_cpu_deepspeed, set_zero3_units, wants_cpu_deepspeed
from .fsdp import enable_cpu_fsdp, set_default_units, wants_cpu_fsdp
from .length_sorted_eval import (
    LengthSortedSampler,
    example_lengths,
    find_sorted_sampler,
    restore_if_per_example,
    restore_order,
)
from .resumed_loss import RUN_WIDE_METRICS, STATE_KEY, ResumedLoss, loss_record, resumed_loss, whole_run_metrics

logger = logging.get_logger(__name__)


def _check_arguments(model: Any, args: Any) -> None:
    """`InputTypeError` for a model that is no `nn.Module` or training arguments that are no
    `SRNetTrainingArguments` (a dict, transformers' own `TrainingArguments`): named here, not an `AttributeError`
    deep in the Trainer."""
    check_model_argument(model, "SRNetTrainer")
    if not isinstance(args, SRNetTrainingArguments):
        raise InputTypeError(
            f"SRNetTrainer: args must be SRNetTrainingArguments, got {type(args).__name__} {args!r:.80}: pass e.g. "
            "args=SRNetTrainingArguments(output_dir='out', loss='poe')"
        )


class SRNetTrainer(Trainer):
    """Trainer for debiased fine-tuning and SRNet mask search.

    - The training objective (`self.objective`, `hf_srnets.objectives`) is a `DebiasingLoss` passed as `loss`, else
      an `Objective` passed as `objective`, else the loss named by `args.loss`. `compute_loss` and `training_step`
      delegate to it (a step-level objective runs the whole step); the `bias_probs` and `teacher_probs` dataset
      columns reach it and survive column pruning.
    - When `model` is an `SRNetModel`, its pruning method's controller callbacks are added (threshold updates on
      the sparsity schedule, IMP rounds, pruned weights kept at 0; never twice: a callback of a class already
      present is skipped), the mask scores get their own optimiser group, checkpoints hold the scores and
      thresholds (so `resume_from_checkpoint` continues exactly), and `save_model` writes the config and
      entropy-coded masks only.
    - Loss components and the current sparsity are logged with the training loss. `train_loss` is the whole run's
      mean also after `resume_from_checkpoint` (`hf_srnets.training.resumed_loss`: checkpoints record the loss sum
      so far).
    - `args.select_best_after` restricts best-checkpoint selection to the end of training (appendix B.3.3).
    - `last_eval_output` keeps the output (logits, label ids) of the last evaluation loop, so the ID set's
      easy/hard metrics reuse the predictions `evaluate` made (`hf_srnets.evaluation.run_evaluation`);
      `eval_outputs` keeps the last one of each `metric_key_prefix` (the run's per-example prediction files are
      written from them).
    - With `args.eval_sort_by_length` (default), `evaluate` and `predict` batch the examples by length, longest
      first (`LengthSortedSampler`: dynamic padding then pads each batch to similar lengths), and put the
      predictions, label ids and inputs back in dataset order (`restore_order`) before `compute_metrics`, in
      `last_eval_output` and in `predict(...).predictions`. Results equal the unsorted loop's up to float noise
      of different padding. Not done with `dataloader_drop_last`, `batch_eval_metrics` or
      `eval_do_concat_batches=False` (outputs that are not one row per example), nor for datasets without
      `input_ids` lists (or a `length` column). (transformers' own `group_by_length` eval sampler shuffles
      megabatches and does not restore the order.)
    """

    loss_is_scaled_for_ga = False  # compute_loss returns a per-batch mean

    def __init__(
        self,
        model: nn.Module,
        args: SRNetTrainingArguments,
        *,
        loss: DebiasingLoss | None = None,
        objective: Objective | None = None,
        **kwargs: Any,
    ) -> None:
        _check_arguments(model, args)
        if loss is not None and objective is not None:
            raise ValueError("Pass a `loss` or an `objective` to SRNetTrainer, not both")
        if loss is not None:
            objective = LossObjective(loss)
        if objective is None:
            step, step_options = args.step_objective_settings()
            objective = build_objective(args.loss, step=step, step_options=step_options, **args.loss_settings())
        self.objective = objective
        self._loss_metrics: dict[str, list[torch.Tensor]] = defaultdict(list)
        self._saving_checkpoint = False
        self.last_eval_output: EvalLoopOutput | None = None
        self.eval_outputs: dict[str, EvalLoopOutput] = {}
        super().__init__(model=model, args=args, **kwargs)
        # compute_loss ignores `num_items_in_batch`: before transformers 5.19 (no `loss_is_scaled_for_ga`), this is
        # what makes training_step divide the loss by the accumulation steps; it also skips counting the items
        self.model_accepts_loss_kwargs = False
        if args.label_names is None:  # the wrapper's forward(*args, **kwargs) hides the base model's `labels`
            self.label_names = ["labels"]
        if isinstance(model, SRNetModel):
            self._add_method_callbacks(model)
        if self.is_fsdp_enabled:
            set_default_units(self.accelerator.state.fsdp_plugin, model)
        if self.is_deepspeed_enabled and isinstance(model, SRNetModel):
            stage = self.accelerator.state.deepspeed_plugin.zero_stage
            check_deepspeed_masks(model.method, stage)
            if stage == 3:
                set_zero3_units(model)

    def create_accelerator_and_postprocess(self) -> None:
        """The Trainer's accelerator; `--fsdp` and `--deepspeed` in a multi-process CPU run do what they say
        (`training.fsdp`, `training.deepspeed`)."""
        super().create_accelerator_and_postprocess()
        if wants_cpu_fsdp(self.accelerator, self.args):
            enable_cpu_fsdp(self.accelerator, self.args)
            self.is_fsdp_enabled = True
        if wants_cpu_deepspeed(self.args):
            enable_cpu_deepspeed(self.accelerator, self.args)
            self.is_deepspeed_enabled = True

    def _add_method_callbacks(self, srnet: SRNetModel) -> None:
        """Add the pruning method's callbacks, skipping any whose class (or a subclass) was passed already."""
        for callback in srnet.trainer_callbacks():
            if not any(isinstance(present, type(callback)) for present in self.callback_handler.callbacks):
                self.add_callback(callback)

    # -- columns and loss -------------------------------------------------------------------------------
    @property
    def srnet_model(self) -> SRNetModel | None:
        model = self.accelerator.unwrap_model(self.model) if hasattr(self, "accelerator") else self.model
        return model if isinstance(model, SRNetModel) else None

    def _set_signature_columns_if_needed(self) -> None:
        if self._signature_columns is None:
            model = self.model.get_base_model() if isinstance(self.model, SRNetModel) else self.model
            columns = list(inspect.signature(model.forward).parameters)
            kept = ["label", "label_ids", *self.label_names, *EXAMPLE_COLUMNS, *self.objective.requires]
            self._signature_columns = columns + kept

    def compute_loss(
        self,
        model: nn.Module,
        inputs: dict[str, Any],
        return_outputs: bool = False,
        num_items_in_batch: torch.Tensor | int | None = None,
    ) -> Any:
        loss, outputs, components = self.objective.compute_loss(model, inputs, training=model.training)
        srnet = self.srnet_model
        if model.training and srnet is not None:
            penalty = srnet.method.regularization(srnet, self.state.global_step, self.state.max_steps)
            if penalty is not None:  # e.g. λ·R(m) of the l0 method (Robust Tickets Eq. 8)
                components = {**components, "penalty": penalty.detach()}
                loss = loss + penalty
        if model.training:
            for key, value in components.items():  # kept as tensors: no device sync per step
                self._loss_metrics[f"loss_{key}"].append(value.detach())
        return (loss, outputs) if return_outputs else loss

    def training_step(
        self, model: nn.Module, inputs: dict[str, Any], num_items_in_batch: torch.Tensor | int | None = None
    ) -> torch.Tensor:
        """The objective's own step (several forward/backward passes), else the Trainer's."""
        loss = self.objective.training_step(self, model, inputs, num_items_in_batch)
        return super().training_step(model, inputs, num_items_in_batch) if loss is None else loss

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        if "loss" in logs and self._loss_metrics:  # a training log: add the loss components, averaged
            for key, values in sorted(self._loss_metrics.items()):  # same order on every process
                local = torch.stack(values).float().mean().to(self.args.device)
                logs[key] = self.accelerator.gather(local).mean().item()  # over processes, like `loss`
            self._loss_metrics.clear()
        srnet = self.srnet_model
        if srnet is not None and ("loss" in logs or "train_runtime" in logs):
            with full_parameters(srnet):  # every process logs (an all-gather under FSDP)
                logs["sparsity"] = srnet.sparsity_report()["sparsity"]
                method_metrics = srnet.method.log_metrics(srnet)
            # masks loaded from a file (--mask_from) are their own target: what they are comes from them, not from
            # the `sparsity` their config records as the search's goal
            target = srnet.method.target_sparsity(self.state.global_step, self.state.max_steps)
            logs["target_sparsity"] = target if srnet.is_search else logs["sparsity"]
            logs.update(method_metrics)
        super().log(logs, start_time)

    # -- evaluation ------------------------------------------------------------------------------------------
    def _sorts_eval(self) -> bool:
        args = self.args
        return (
            getattr(args, "eval_sort_by_length", False)
            and not args.dataloader_drop_last
            and not args.batch_eval_metrics
            and args.eval_do_concat_batches
        )

    def _get_eval_sampler(self, eval_dataset: Any) -> Sampler | None:
        """A `LengthSortedSampler` when `args.eval_sort_by_length` applies, else the Trainer's sampler."""
        if eval_dataset is not None and self._sorts_eval():
            column = getattr(self.model, "main_input_name", "input_ids")
            lengths = example_lengths(eval_dataset, column, self.args.length_column_name)
            if lengths is not None:
                return LengthSortedSampler(lengths)
        return super()._get_eval_sampler(eval_dataset)

    def evaluation_loop(self, dataloader: Any, *args: Any, **kwargs: Any) -> EvalLoopOutput:
        """The Trainer's loop, its outputs in dataset order; kept as `last_eval_output` (replacing the previous).

        For a length-sorted dataloader, `compute_metrics` gets predictions, label ids and inputs (and the
        per-example losses of `include_for_metrics`) in dataset order, as do the returned outputs.
        """
        sampler = find_sorted_sampler(dataloader)
        prefix = kwargs.get("metric_key_prefix", args[3] if len(args) > 3 else "eval")
        if sampler is None:
            self.last_eval_output = self.eval_outputs[prefix] = super().evaluation_loop(dataloader, *args, **kwargs)
            return self.last_eval_output
        order = sampler.order
        compute_metrics = self.compute_metrics
        if compute_metrics is not None:
            self.compute_metrics = lambda pred: compute_metrics(
                EvalPrediction(
                    predictions=restore_order(pred.predictions, order),
                    label_ids=restore_order(pred.label_ids, order),
                    inputs=restore_order(pred.inputs, order),
                    losses=restore_if_per_example(pred.losses, order),
                )
            )
        try:
            output = super().evaluation_loop(dataloader, *args, **kwargs)
        finally:
            self.compute_metrics = compute_metrics
        self.last_eval_output = EvalLoopOutput(
            predictions=restore_order(output.predictions, order),
            label_ids=restore_order(output.label_ids, order),
            metrics=output.metrics,
            num_samples=output.num_samples,
        )
        self.eval_outputs[prefix] = self.last_eval_output
        return self.last_eval_output

    # -- optimiser -------------------------------------------------------------------------------------------
    def create_optimizer(self, model: nn.Module | None = None) -> torch.optim.Optimizer:
        """The method's mask scores get `mask_learning_rate` and `mask_weight_decay` (default 0), those with a rate of
        their own (`score_learning_rates`: l0's `--l0_lagrangian_learning_rate`) a group each without weight decay;
        other trainable weights the usual groups, at the method's `weights_learning_rate` when it sets one
        (`--weight_learning_rate` with `--train_weights`), else `learning_rate`. Each group keeps the order of
        `named_parameters`."""
        opt_model = self.model if model is None else model
        if self.optimizer is not None or not isinstance(opt_model, SRNetModel):
            return super().create_optimizer(model)
        weights_lr = opt_model.srnet_config.weights_learning_rate or self.args.learning_rate
        decay = set(self.get_decay_parameter_names(opt_model))
        own_rates = opt_model.method.score_learning_rates(opt_model)
        own_ids = {id(param) for params, _ in own_rates for param in params}
        score_ids = {id(param) for param in opt_model.score_parameters()} - own_ids
        scores, decayed, other = [], [], []
        for name, param in opt_model.named_parameters():
            if not param.requires_grad or id(param) in own_ids:
                continue
            if id(param) in score_ids:
                scores.append(param)
            elif name in decay:
                decayed.append(param)
            else:
                other.append(param)
        groups = [
            {
                "params": scores,
                "weight_decay": self.args.mask_weight_decay,
                "lr": self.args.mask_learning_rate or self.args.learning_rate,
            },
            {"params": decayed, "weight_decay": self.args.weight_decay, "lr": weights_lr},
            {"params": other, "weight_decay": 0.0, "lr": weights_lr},
            *(
                {"params": [p for p in params if p.requires_grad], "weight_decay": 0.0, "lr": lr}
                for params, lr in own_rates
            ),
        ]
        optimizer_cls, optimizer_kwargs = self.get_optimizer_cls_and_kwargs(self.args, opt_model)
        self.optimizer = optimizer_cls([g for g in groups if g["params"]], **optimizer_kwargs)
        return self.optimizer

    # -- best-checkpoint selection (appendix B.3.3) ------------------------------------------------------
    def best_selection_start_step(self) -> int:
        start = math.ceil(self.args.select_best_after * self.state.max_steps)
        srnet = self.srnet_model
        if srnet is not None:
            start = max(start, srnet.method.selection_start_step(self.state.max_steps))
        return start

    def _determine_best_metric(self, metrics: dict[str, float], trial: Any) -> bool:
        if self.state.global_step < self.best_selection_start_step():
            return False
        return super()._determine_best_metric(metrics, trial)

    # -- the whole run's training loss and time across a resume ---------------------------------------------------
    def train(self, resume_from_checkpoint: str | bool | None = None, *args: Any, **kwargs: Any) -> TrainOutput:
        """`Trainer.train`; after a resume, `train_loss` is the mean over every step of the run and `train_runtime`
        the seconds of every step kept, not only those of this call (`hf_srnets.training.resumed_loss`)."""
        checkpoint = resume_from_checkpoint
        if isinstance(checkpoint, bool):
            checkpoint = get_last_checkpoint(self.args.output_dir) if checkpoint else None
        self.objective.check_model(self.model)
        self._resumed_loss = resumed_loss(checkpoint)
        self._train_call_start = time.monotonic()
        output = super().train(resume_from_checkpoint, *args, **kwargs)
        before = self._resumed_loss
        if before is None or before.global_step == 0:
            return output
        metrics = whole_run_metrics(output.metrics, output.global_step, before, self._total_loss_scalar)
        for entry in reversed(self.state.log_history):  # the final log entry holds the metrics train() logged
            if "train_loss" in entry:
                entry.update({k: metrics[k] for k in RUN_WIDE_METRICS if k in metrics})
                break
        return TrainOutput(output.global_step, metrics["train_loss"], metrics)

    def _run_loss_sum(self) -> float | None:
        """The sum of the training losses of every step so far, those before a resume included (None when the
        resumed checkpoint did not record theirs)."""
        before = getattr(self, "_resumed_loss", None) or ResumedLoss(0, 0.0)
        if before.loss_sum is None:
            return None
        pending = getattr(self, "_tr_loss", None)  # accumulated since the last log
        since = getattr(self, "_total_loss_scalar", 0.0) + (float(pending.item()) if pending is not None else 0.0)
        return before.loss_sum + since

    def _run_runtime(self) -> float | None:
        """Seconds of training so far, those before a resume included (None when the resumed checkpoint did not
        record theirs)."""
        before = getattr(self, "_resumed_loss", None) or ResumedLoss(0, 0.0, 0.0)
        if before.runtime is None:
            return None
        return before.runtime + time.monotonic() - getattr(self, "_train_call_start", time.monotonic())

    # -- saving and loading ----------------------------------------------------------------------------------
    def _save_checkpoint(self, model: nn.Module, trial: Any) -> None:
        self._saving_checkpoint = True
        self.state.stateful_callbacks[STATE_KEY] = loss_record(
            self._run_loss_sum(), self.state.global_step, self._run_runtime()
        )
        checkpoint = os.path.join(self.args.output_dir, f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}")
        if self.args.should_save:  # a checkpoint folder a former run left: its optimizer.pt, ... written anew
            detach_links(checkpoint)
        try:
            with naming_path(checkpoint):  # a full disk: one error line naming the checkpoint
                super()._save_checkpoint(model, trial)
        finally:
            self._saving_checkpoint = False

    def save_state(self) -> None:
        """`Trainer.save_state` (trainer_state.json); a full disk is raised naming the file (`errors.naming_path`)."""
        if self.args.should_save:
            detach_links(self.args.output_dir)
        with naming_path(os.path.join(self.args.output_dir, TRAINER_STATE_NAME)):
            super().save_state()

    def save_model(self, output_dir: str | None = None, _internal_call: bool = False) -> None:
        """`Trainer.save_model`; an OS error that names no file (a full disk met by torch.save or safetensors) is
        raised naming `output_dir` (`errors.naming_path`)."""
        with naming_path(output_dir if output_dir is not None else self.args.output_dir):
            srnet = self.srnet_model
            if srnet is not None and (self.is_fsdp_enabled or self.is_deepspeed_enabled):  # all gather, main writes
                with full_parameters(srnet):
                    self._save(output_dir)
                return
            super().save_model(output_dir, _internal_call)

    def _save(self, output_dir: str | None = None, state_dict: dict | None = None) -> None:
        srnet = self.srnet_model
        output_dir = output_dir if output_dir is not None else self.args.output_dir
        if self.args.should_save:  # transformers, torch.save and safetensors write through a link at their paths
            detach_links(output_dir)
        if srnet is None:  # a plain model: a compact one (a recovery stage) also gets its modeling file
            super()._save(output_dir, state_dict)
            write_remote_code(self.accelerator.unwrap_model(self.model), output_dir)
            return None
        if not self.args.should_save:
            return None
        os.makedirs(output_dir, exist_ok=True)
        logger.info(f"Saving SRNet masks to {output_dir}")
        if self._saving_checkpoint:
            # exact masks for a checkpoint that may become the final model, then the full search state
            srnet.save_training_state(output_dir)
        srnet.save_pretrained(output_dir)
        if self.processing_class is not None:
            self.processing_class.save_pretrained(output_dir)
        torch.save(self.args, os.path.join(output_dir, TRAINING_ARGS_NAME))
        return None

    def _load_from_checkpoint(self, resume_from_checkpoint: str, model: nn.Module | None = None) -> None:
        srnet = self.srnet_model
        with _refusing_another_models_weights(resume_from_checkpoint):
            if srnet is None:
                return super()._load_from_checkpoint(resume_from_checkpoint, model)
            if not os.path.isfile(os.path.join(resume_from_checkpoint, TRAINING_STATE_NAME)):
                raise ValueError(f"{resume_from_checkpoint} has no {TRAINING_STATE_NAME}: not an SRNet checkpoint")
            logger.info(f"Loading SRNet scores and thresholds from {resume_from_checkpoint}")
            srnet.load_training_state(resume_from_checkpoint)
        return None

    def _load_best_model(self) -> None:
        srnet = self.srnet_model
        if srnet is None:
            return super()._load_best_model()
        logger.info(f"Loading best SRNet from {self.state.best_model_checkpoint} (score: {self.state.best_metric}).")
        srnet.load_training_state(self.state.best_model_checkpoint)
        return None


@contextlib.contextmanager
def _refusing_another_models_weights(checkpoint: str) -> Iterator[None]:
    """torch's `load_state_dict` error ("size mismatch for ...", missing keys) on a checkpoint of another model as
    one `InputError` naming the checkpoint, its first mismatch and the fix."""
    try:
        yield
    except RuntimeError as err:
        if "Error(s) in loading state_dict" not in str(err):
            raise
        first = str(err).split("\n\t")[1] if "\n\t" in str(err) else str(err)
        raise InputError(
            f"--resume_from_checkpoint {checkpoint} holds the weights of another model ({first.strip()[:200]}): "
            "resume with the --model_name_or_path that run started from, or train this model without "
            "--resume_from_checkpoint."
        ) from err
