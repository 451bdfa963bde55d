"""The sparsity report of a set of binary masks (True = kept): the fraction pruned over all of them (the paper's
reference count, Win-win §4.1.4) and per matrix."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch


def sparsity_report(masks: Mapping[str, torch.Tensor]) -> dict[str, Any]:
    """`sparsity` (pruned / prunable over all masks; 0 without any), `num_prunable`, `num_pruned` and
    `per_module` (each mask's pruned fraction) of boolean `masks` keyed by matrix name."""
    per_module: dict[str, float] = {}
    zeros = total = 0
    for name, mask in masks.items():
        n, z = mask.numel(), int((~mask).sum())
        per_module[name] = z / n
        zeros += z
        total += n
    return {
        "sparsity": zeros / total if total else 0.0,
        "num_prunable": total,
        "num_pruned": zeros,
        "per_module": per_module,
    }
