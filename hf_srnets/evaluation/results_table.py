"""Turning a model's outputs and a run's results into probabilities and a printable table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def softmax(logits: np.ndarray) -> np.ndarray:
    """softmax(z)_c = exp(z_c − max z) / Σ_k exp(z_k − max z), over the last axis."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=-1, keepdims=True)


def results_table(results: dict[str, Any], rows: Sequence[tuple[str, str]]) -> str:
    """A small markdown table of `(set name, metric key)` rows read from `results`."""
    lines = ["| set | metric | value |", "|---|---|---|"]
    for name, key in rows:
        value = results.get(key)
        if value is not None:
            metric = key.split(f"{name}_", 1)[-1]
            lines.append(f"| {name} | {metric} | {100 * value:.2f} |")
    return "\n".join(lines)
