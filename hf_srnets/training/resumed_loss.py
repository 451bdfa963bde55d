"""The whole run's mean training loss and training time across a resume: what each checkpoint records, and the
values it gives.

`Trainer.train` reports `train_loss` as the mean over the steps of *that call*: after `--resume_from_checkpoint`
it covers only the steps after the resume. `SRNetTrainer` records in every checkpoint's `trainer_state.json`
(`stateful_callbacks["SRNetRunLoss"]`) the sum of the training losses of every step so far, and a resumed run
reports (sum before the resume + sum after it) / all steps: the mean an uninterrupted run reports, up to float
rounding. A checkpoint without the record (written by an older hf_srnets) cannot give it: the mean then covers the
steps after the resume, and `train_loss_from_step` says from which step.

`train_runtime` likewise covers one call; each checkpoint also records the seconds of training so far, and a resumed
run reports them plus its own call's (`train_runtime_from_step` when the checkpoint lacks the record), so a sweep's
budget counts the steps a run kept, whether or not it was interrupted.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from ..run_files import TRAINER_STATE_NAME

STATE_KEY = "SRNetRunLoss"  # the entry of TrainerState.stateful_callbacks (saved in trainer_state.json)
RUN_WIDE_METRICS = ("train_loss", "train_loss_from_step", "train_runtime", "train_runtime_from_step")


@dataclass(frozen=True)
class ResumedLoss:
    """What a checkpoint says about the steps before a resume: how many, the sum of their losses and the seconds
    they took to train (None when the checkpoint does not record it)."""

    global_step: int
    loss_sum: float | None
    runtime: float | None = None


def loss_record(loss_sum: float | None, global_step: int, runtime: float | None = None) -> dict[str, Any]:
    """The `stateful_callbacks` entry a checkpoint at `global_step` records (None: the value is not known)."""
    return {"loss_sum": loss_sum, "global_step": global_step, "runtime": runtime}


def resumed_loss(checkpoint: str | None) -> ResumedLoss | None:
    """The steps and loss sum before a resume from `checkpoint` (None: not resuming or no trainer state)."""
    if checkpoint is None or not os.path.isfile(os.path.join(checkpoint, TRAINER_STATE_NAME)):
        return None
    with open(os.path.join(checkpoint, TRAINER_STATE_NAME), encoding="utf-8") as f:
        state = json.load(f)
    record = (state.get("stateful_callbacks") or {}).get(STATE_KEY)
    step = int(state.get("global_step", 0))
    if not isinstance(record, dict) or record.get("global_step") != step:
        return ResumedLoss(step, None)
    loss_sum, runtime = record.get("loss_sum"), record.get("runtime")
    return ResumedLoss(step, None if loss_sum is None else float(loss_sum), None if runtime is None else float(runtime))


def whole_run_metrics(
    metrics: dict[str, Any], global_step: int, before: ResumedLoss, loss_sum_since: float
) -> dict[str, Any]:
    """`metrics` of a resumed `train()` with `train_loss` and `train_runtime` over the whole run (steps
    1..`global_step`), from `loss_sum_since`, the sum of the losses of the steps this call trained (the Trainer's
    `_total_loss_scalar`: its own `train_loss` divides that sum by the steps of this call from transformers 5.2x on,
    by all `global_step` steps before, as in 5.17); a value the checkpoint lacks covers this call's steps only, and
    `train_loss_from_step` / `train_runtime_from_step` name the first step it covers."""
    metrics = dict(metrics)
    after = global_step - before.global_step
    if before.loss_sum is None:
        metrics["train_loss_from_step"] = before.global_step + 1
        metrics["train_loss"] = loss_sum_since / max(after, 1)
    else:
        metrics["train_loss"] = (before.loss_sum + loss_sum_since) / max(global_step, 1)
    if before.runtime is None:
        metrics["train_runtime_from_step"] = before.global_step + 1
    elif "train_runtime" in metrics:
        metrics["train_runtime"] = before.runtime + metrics["train_runtime"]
    return metrics
