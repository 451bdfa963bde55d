"""Per-example losses of a saved model on a tokenised set: the l_it of RMC's loss variance (Du et al. 2023, §5.1).

l_it = −log softmax(z_t(x_i))_{y_i}, the cross-entropy of model t on example i, in eval mode without gradients, in
batches padded to their longest input. The model's outputs are put in the task's label order by name
(`hf_srnets.data.label_alignment`) before the loss, so a checkpoint with another `id2label` order scores the same.
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from datasets import Dataset
from torch import nn
from tqdm.auto import tqdm
from transformers import DataCollatorWithPadding

from ..data.label_alignment import label_permutation
from ..data.tasks import TaskSpec
from ..evaluation.saved_classifier import load_saved_classifier
from ..masking.targets import LAYER_PATTERNS
from ..metrics.sparsity import sparsity_report
from ..run_files import RESULTS_NAME

logger = logging.getLogger(__name__)

MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


@dataclass
class ExampleScores:
    """Per-example cross-entropy losses and predicted label ids (in the task's order), in dataset order."""

    losses: np.ndarray
    predictions: np.ndarray

    def summary(self, labels: np.ndarray) -> dict[str, float]:
        return {"mean_loss": float(self.losses.mean()), "accuracy": float((self.predictions == labels).mean())}


@torch.no_grad()
def example_losses(
    model: nn.Module,
    dataset: Dataset,
    tokenizer: Any,
    *,
    label_order: tuple[str, ...] | None = None,
    task_labels: tuple[str, ...] | None = None,
    batch_size: int = 64,
    device: str | torch.device = "cpu",
    desc: str = "scoring",
) -> ExampleScores:
    """l_i = CE(z(x_i), y_i) for every row of a tokenised `dataset` (its `label` ids in `task_labels` order; the
    model's logits in `label_order`, its own id order by label name; None: the same order)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}: e.g. --batch_size 64")
    if "label" not in dataset.column_names:
        raise ValueError("The dataset has no 'label' column: per-example losses need the gold labels")
    same = label_order is None or task_labels is None or tuple(label_order) == tuple(task_labels)
    # column j of the reordered logits is the model's column for the task's label j
    columns = None if same else [list(label_order).index(name) for name in task_labels]
    inputs = dataset.select_columns([c for c in MODEL_INPUTS if c in dataset.column_names])
    labels = torch.tensor(dataset["label"], dtype=torch.long)
    if (labels < 0).any():
        raise ValueError("The dataset has unlabelled rows (label -1): losses need gold labels")
    pad = DataCollatorWithPadding(tokenizer)
    model = model.to(device).eval()
    losses, predictions = [], []
    for start in tqdm(range(0, len(inputs), batch_size), desc=desc, leave=False):
        batch = pad([inputs[i] for i in range(start, min(start + batch_size, len(inputs)))])
        logits = model(**{k: v.to(device) for k, v in batch.items()}).logits.float().cpu()
        if columns is not None:
            logits = logits[:, columns]
        gold = labels[start : start + len(logits)]
        losses.append(F.cross_entropy(logits, gold, reduction="none"))
        predictions.append(logits.argmax(dim=-1))
    return ExampleScores(torch.cat(losses).numpy(), torch.cat(predictions).numpy())


def load_scoring_model(path: str, task: TaskSpec, *, cache_dir: str | None = None) -> tuple[nn.Module, Any, tuple]:
    """A saved model (a run dir of masks, a merged dir or a checkpoint; `load_saved_classifier`), its tokenizer and
    its label order as task label names; the order is a permutation of `task.label_names`."""
    loaded = load_saved_classifier(path, task, cache_dir=cache_dir)
    label_permutation(task.label_names, loaded.label_order)  # raises if the names differ
    return loaded.model, loaded.tokenizer, tuple(loaded.label_order)


def measured_sparsity(model: nn.Module, path: str) -> tuple[float, str]:
    """The model's sparsity and where it comes from: the run's results file (`sparsity`, of θ_pr) when the
    directory holds one, else the `sparsity_report` of the nonzero weights of the encoder's linear layers."""
    results = os.path.join(path, RESULTS_NAME)
    if os.path.isfile(results):
        with open(results, encoding="utf-8") as f:
            value = json.load(f).get("sparsity")
        if value is not None:
            return float(value), RESULTS_NAME
    pattern = re.compile(LAYER_PATTERNS.get(getattr(model.config, "model_type", ""), LAYER_PATTERNS["bert"]))
    kept = {
        name: module.weight != 0
        for name, module in model.named_modules()
        if isinstance(module, nn.Linear) and pattern.search(name)
    }
    return sparsity_report(kept)["sparsity"], "zero weights of the encoder's linear layers"
