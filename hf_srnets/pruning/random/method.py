"""`random`: the Rand baseline (Robust Tickets §4.2): a ticket's per-matrix sparsity, random structure."""

from __future__ import annotations

import math
import os
from typing import Any

import torch

from ...errors import InputError
from ..base import CardContext, PruningConfig, PruningMethod, register_pruning_method
from ..mask_files import read_mask_dir
from ..masked_linear import MaskedLinear
from ..masked_model import MaskedModel
from .config import RandomConfig


def read_masks(directory: str | os.PathLike) -> tuple[PruningConfig, dict[str, torch.Tensor]]:
    """The config and the decoded binary masks (True = kept) of a saved hf_srnets mask directory."""

    return read_mask_dir(directory)


def check_same_modules(like: dict[str, list[int]], model: dict[str, list[int]], directory: str) -> None:
    """Refuse a ticket whose masked modules or shapes differ from the model's, naming the first mismatch."""
    for name in sorted(set(like) | set(model)):
        if name not in model:
            raise InputError(f"--random_like {directory} masks {name!r}, which this model does not mask.")
        if name not in like:
            raise InputError(f"--random_like {directory} has no mask for {name!r}, which this model masks.")
        if list(like[name]) != list(model[name]):
            raise InputError(
                f"--random_like {directory}: {name!r} is {tuple(like[name])} there but {tuple(model[name])} in this "
                "model; use a ticket of the same architecture and targets."
            )


def random_like_masks(zeros: dict[str, int], shapes: dict[str, list[int]], seed: int) -> dict[str, torch.Tensor]:
    """Per matrix, exactly `zeros[name]` zeros at positions drawn by `torch.randperm` (matrices in name order)."""
    generator = torch.Generator().manual_seed(seed)
    masks = {}
    for name in sorted(shapes):
        n = math.prod(shapes[name])
        mask = torch.ones(n, dtype=torch.bool)
        mask[torch.randperm(n, generator=generator)[: zeros[name]]] = False
        masks[name] = mask.reshape(shapes[name])
    return masks


@register_pruning_method
class RandomPruning(PruningMethod):
    """Random fixed masks shaped like a ticket's per-matrix sparsity; the weights train under them."""

    name = "random"
    config_class = RandomConfig
    layer_class = MaskedLinear
    citations = ("zheng2022robust",)  # the "Rand" baseline of Robust Tickets §4.2
    trains_scores = False

    @classmethod
    def prepare_config(cls, config: RandomConfig, training_args: Any, *, fresh_head: bool) -> RandomConfig:
        """Every weight trains (so `trainable_classifier` None is False); the seed defaults to `--seed`."""
        if not config.random_like:
            raise InputError("--pruning random needs --random_like DIR, the ticket whose per-matrix sparsity to copy.")
        if not os.path.isdir(config.random_like):
            raise InputError(f"--random_like {config.random_like} is not a directory: pass a saved mask directory.")
        seed = int(getattr(training_args, "seed", 42)) if config.random_seed is None else config.random_seed
        return config.resolved(trainable_classifier=bool(config.trainable_classifier), random_seed=seed)

    def initialize(self, srnet: MaskedModel) -> None:
        """The random masks; the model's config (`self.config`, `srnet.srnet_config`) records the ticket's sparsity."""
        cfg = self.config
        if cfg.random_like is None or cfg.random_seed is None:
            raise ValueError("RandomConfig needs random_like and random_seed (set by prepare_config).")
        like_config, like = read_masks(cfg.random_like)
        check_same_modules(like_config.module_shapes, cfg.module_shapes, cfg.random_like)
        zeros = {name: int((~mask).sum()) for name, mask in like.items()}
        srnet.set_masks(random_like_masks(zeros, cfg.module_shapes, cfg.random_seed))
        cfg.sparsity = sum(zeros.values()) / sum(mask.numel() for mask in like.values())
        srnet.train_weights_with_fixed_masks()

    @classmethod
    def card_settings(cls, config: RandomConfig, context: CardContext) -> dict[str, Any]:
        return {
            "sparsity": config.sparsity,
            "random_like": context.portable(config.random_like),
            "random_seed": config.random_seed,
        }

    @classmethod
    def search_description(cls, config: RandomConfig, context: CardContext) -> str:
        return (
            f"random masks with the per-matrix sparsity of `{context.portable(config.random_like)}` (seed "
            f"{config.random_seed}), weights trained under them (the Rand baseline of Robust Tickets §4.2)"
        )
