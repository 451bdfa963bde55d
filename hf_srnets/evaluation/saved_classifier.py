"""A saved classifier loaded to be scored (attacked, or its per-example losses measured): `load_saved_classifier`.

It accepts (a) a full checkpoint dir or Hub id (a fine-tuned `...ForSequenceClassification`), (b) an hf_srnets
mask dir (`srnet_config.json`: the masks are applied to the model they were searched on, `base_model_name_or_path`,
or to `base_model`, with `SRNetModel.from_pretrained`, then merged with `merge_and_unload()` so a forward pass costs
what a plain model's costs) and (c) a merged checkpoint (as (a)). Checkpoints load with
`hf_srnets.compact.load_pretrained_model`, so head-pruned ones (`--prune_heads`) load too. The model's label order
is read by name (`hf_srnets.data.label_alignment`), so callers can put its outputs in the task's order.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

from transformers import AutoConfig, AutoTokenizer

from ..compact.loading import check_model_path, load_classifier, load_pretrained_model
from ..data.label_alignment import checkpoint_label_order, is_fine_tuned_classifier
from ..data.tasks import TaskSpec
from ..errors import InputError
from ..masking import SRNetModel
from ..pruning import PruningConfig
from ..pruning.base import CONFIG_NAME, MASKS_NAME, TRAINABLE_PREFIX
from ..resources.auto_loading import auto_from_pretrained
from ..run_files import holds_tokenizer_files

logger = logging.getLogger(__name__)


@dataclass
class SavedClassifier:
    """A loaded classifier: the model (eval mode), its tokenizer, its labels in its own id order, and what it was
    loaded from (`kind`: "checkpoint" or "masks"; `base`: the weights masks were applied to)."""

    model: Any
    tokenizer: Any
    label_order: tuple[str, ...]
    kind: str
    base: str | None = None


def is_mask_dir(path: str) -> bool:
    """Whether `path` is a local hf_srnets mask dir (it holds `srnet_config.json`)."""
    return os.path.isfile(os.path.join(path, CONFIG_NAME))


def _label_order(model: Any, task: TaskSpec, name: str) -> tuple[str, ...]:
    hint = "attack it with the --task it was fine-tuned on"  # run_attack.py has no --task_labels
    return checkpoint_label_order(model.config, task, name, relabel_hint=hint) or tuple(task.label_names)


def _load_tokenizer(*candidates: str | None, cache_dir: str | None = None) -> Any:
    errors = []
    for path in candidates:
        if path is None:
            continue
        if os.path.isdir(path) and not holds_tokenizer_files(path):  # transformers would build an all-unknown one
            errors.append(f"{path}: no tokenizer files")
            continue
        try:
            return auto_from_pretrained(AutoTokenizer, path, cache_dir=cache_dir)
        except (OSError, ValueError) as err:
            errors.append(f"{path}: {err}")
    raise InputError(f"No tokenizer found ({'; '.join(errors)}); save one with the model or pass --base_model")


def _warn_without_head(path: str, base: str) -> None:
    from safetensors import safe_open

    with safe_open(os.path.join(path, MASKS_NAME), framework="pt") as f:
        saved = list(f.keys())
    if not any(k.startswith(TRAINABLE_PREFIX) and "classifier" in k for k in saved):
        logger.warning(
            f"{path} holds no classifier and its base {base} is not a fine-tuned classifier: the head is drawn at "
            "random on every load, so this attack measures a random classifier (train with --trainable_classifier)"
        )


def _load_masked(
    path: str, task: TaskSpec, base_model: str | None, cache_dir: str | None, check_fingerprint: bool
) -> SavedClassifier:

    config = PruningConfig.from_pretrained(path)
    base = base_model or config.base_model_name_or_path
    if not base:
        raise InputError(f"{path} does not name the model its masks were searched on; pass --base_model")
    check_model_path(base, "--base_model" if base_model else None, cache_dir)
    if is_fine_tuned_classifier(auto_from_pretrained(AutoConfig, base, cache_dir=cache_dir)):
        model = load_pretrained_model(base, cache_dir=cache_dir)
    else:  # a pre-trained encoder: a head of the task's size (the mask file holds the trained one, if any)
        _warn_without_head(path, base)
        model = load_classifier(base, task.label_names, cache_dir=cache_dir)
    order = _label_order(model, task, base)
    srnet = SRNetModel.from_pretrained(model, path, check_fingerprint=check_fingerprint)
    merged = srnet.merge_and_unload()
    tokenizer = _load_tokenizer(path, base, cache_dir=cache_dir)
    return SavedClassifier(merged.eval(), tokenizer, order, "masks", base)


def load_saved_classifier(
    model_name_or_path: str,
    task: TaskSpec,
    *,
    base_model: str | None = None,
    cache_dir: str | None = None,
    check_fingerprint: bool = True,
) -> SavedClassifier:
    """Load a saved classifier (see the module docstring); refuses a checkpoint without a trained classifier."""
    if is_mask_dir(model_name_or_path):
        return _load_masked(model_name_or_path, task, base_model, cache_dir, check_fingerprint)
    check_model_path(model_name_or_path, "--model_name_or_path", cache_dir)
    config = auto_from_pretrained(AutoConfig, model_name_or_path, cache_dir=cache_dir)
    if not is_fine_tuned_classifier(config):
        raise InputError(
            f"{model_name_or_path} is not a fine-tuned sequence classifier (config.architectures="
            f"{getattr(config, 'architectures', None)}): attacking it would attack a random head. Pass a fine-tuned "
            f"checkpoint, its merged/ dir, or an hf_srnets mask dir (with {CONFIG_NAME})."
        )
    model = load_pretrained_model(model_name_or_path, cache_dir=cache_dir)
    tokenizer = _load_tokenizer(model_name_or_path, base_model, cache_dir=cache_dir)
    order = _label_order(model, task, model_name_or_path)
    return SavedClassifier(model.eval(), tokenizer, order, "checkpoint", None)
