"""The victim of an attack: a saved classifier loaded for attacking, and `HFClassifier`, the batched, cached query
function the recipes call (`hf_srnets.attack.base.Classifier`).

`load_victim` loads a checkpoint, a merged checkpoint or an hf_srnets mask dir (applied to its base and merged, so
queries cost what a plain model costs) with `hf_srnets.evaluation.saved_classifier.load_saved_classifier`. The
model's labels are aligned with the task's by name (`hf_srnets.data.label_alignment`): `HFClassifier` returns
probabilities in the task's label order, so gold labels and predictions agree whatever the checkpoint's id order.

Queries are counted as TextAttack's goal function counts them (Morris et al. 2020, `GoalFunction.get_results`):
every text submitted is one query, whether the LRU cache answers it or the model does (the count is increased
before the cache is looked up), and repeats within one call count each time. The cache only saves model time; it
is emptied with the count at the start of every example (TextAttack clears it after each attacked example), so
no example or recipe is answered from another's predictions.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..data.label_alignment import label_permutation, to_task_order
from ..data.tasks import TaskSpec
from ..errors import InputError
from ..evaluation.saved_classifier import SavedClassifier, is_mask_dir, load_saved_classifier
from .base import Text

logger = logging.getLogger(__name__)


@dataclass
class Victim(SavedClassifier):
    """A loaded victim (`hf_srnets.evaluation.saved_classifier.SavedClassifier`) and its weights' fingerprint."""

    @property
    def fingerprint(self) -> str:
        """`weights_fingerprint` of the model as attacked (computed once)."""
        if not hasattr(self, "_fingerprint"):
            self._fingerprint = weights_fingerprint(self.model)
        return self._fingerprint


def weights_fingerprint(model: Any) -> str:
    """sha256 over the model's parameters and buffers as loaded (names, dtypes, shapes and bytes, in name order):
    the same for the same weights however they were stored (checkpoint, masks applied to a base, merged), and
    different when a model is retrained at the same path."""
    import hashlib

    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        flat = tensor.detach().cpu().contiguous().reshape(-1)
        digest.update(f"{name}|{flat.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(flat.view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def load_victim(
    model_name_or_path: str,
    task: TaskSpec,
    *,
    base_model: str | None = None,
    cache_dir: str | None = None,
    check_fingerprint: bool = True,
) -> Victim:
    """Load the model to attack (`load_saved_classifier`); a mask dir whose base weights are not those the masks
    were searched on is refused with the option that allows it."""
    try:
        loaded = load_saved_classifier(
            model_name_or_path,
            task,
            base_model=base_model,
            cache_dir=cache_dir,
            check_fingerprint=check_fingerprint,
        )
    except ValueError as err:
        if not is_mask_dir(model_name_or_path) or "fingerprint" not in str(err):
            raise
        raise InputError(f"{err} (run_attack.py: --no_check_fingerprint)") from err
    return Victim(**vars(loaded))


class HFClassifier:
    """Class probabilities of a transformers classifier for a list of `Text`s, in the task's label order.

    Eval mode, no gradients, batches of `batch_size` padded to their longest input (inputs sorted by length), an
    LRU cache of up to `cache_size` texts (0 disables it), forward passes in `precision` ("fp32", or "bf16":
    `torch.autocast` with bfloat16, probabilities from the logits in fp32). `num_queries` counts every text
    submitted since the last `reset()`, cached or not (see the module docstring); `model_queries` counts the texts
    the model ran on (all examples) and `cache_hits` the others; `query_budget` is read by the recipes (None:
    unlimited).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        label_order: Sequence[str] | None = None,
        task_labels: Sequence[str] | None = None,
        batch_size: int = 32,
        max_length: int | None = 512,
        cache_size: int = 2**16,
        query_budget: int | None = None,
        precision: str = "fp32",
    ) -> None:
        if precision not in ("fp32", "bf16"):
            raise InputError(f"precision must be 'fp32' or 'bf16', got {precision!r}")
        if batch_size < 1:
            raise InputError(f"batch_size must be >= 1, got {batch_size}; pass --batch_size 32 for example")
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.max_length = max_length
        self.cache_size = cache_size
        self.query_budget = query_budget
        self.precision = precision
        self.num_queries = 0
        self.model_queries = 0
        self.cache_hits = 0
        self.model_seconds = 0.0  # time spent in tokenisation and forward passes
        self._cache: OrderedDict[Text, np.ndarray] = OrderedDict()
        same = label_order is None or task_labels is None or list(label_order) == list(task_labels)
        self._perm = None if same else label_permutation(task_labels, label_order)
        self.device = next(model.parameters()).device

    def reset(self) -> None:
        """Start a new example: `num_queries` back to 0 and the cache emptied."""
        self.num_queries = 0
        self._cache.clear()

    def __call__(self, texts: list[Text]) -> np.ndarray:
        keys = [tuple(t) for t in texts]
        todo = list(dict.fromkeys(k for k in keys if k not in self._cache))
        self.cache_hits += len(keys) - len(todo)  # repeats within the call count as hits too
        start = time.perf_counter()
        fresh = dict(zip(todo, self._predict(todo))) if todo else {}
        self.model_seconds += time.perf_counter() - start
        self.num_queries += len(keys)
        self.model_queries += len(todo)
        out = []
        for key in keys:
            if key in fresh:
                probs = fresh[key]
            else:
                probs = self._cache[key]
                self._cache.move_to_end(key)
            out.append(probs)
        for key, probs in fresh.items():
            self._remember(key, probs)
        return np.stack(out) if out else np.zeros((0, len(self.model.config.id2label)), dtype=np.float32)

    def _remember(self, key: Text, probs: np.ndarray) -> None:
        if self.cache_size <= 0:
            return
        self._cache[key] = probs
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    @torch.no_grad()
    def _predict(self, texts: list[Text]) -> list[np.ndarray]:
        order = sorted(range(len(texts)), key=lambda i: sum(len(t) for t in texts[i]))
        result: list[np.ndarray | None] = [None] * len(texts)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            columns = list(zip(*(texts[i] for i in idx)))
            enc = self.tokenizer(
                *[list(c) for c in columns],
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="pt",
            ).to(self.device)
            with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.precision == "bf16"):
                logits = self.model(**enc).logits
            probs = torch.softmax(logits.float(), dim=-1).cpu().numpy()
            if self._perm is not None:
                probs = to_task_order(probs, self._perm)
            for i, row in zip(idx, probs):
                result[i] = row
        return result  # type: ignore[return-value]


def build_classifier(victim: Victim, task: TaskSpec, **options: Any) -> HFClassifier:
    """`HFClassifier` of a loaded victim, answering in `task`'s label order (`options`: batch size, cache, budget)."""
    return HFClassifier(
        victim.model, victim.tokenizer, label_order=victim.label_order, task_labels=task.label_names, **options
    )
