"""A run's results as a printable markdown table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def results_table(results: dict[str, Any], rows: Sequence[tuple[str, str]]) -> str:
    """A small markdown table of `(set name, metric key)` rows read from `results`."""
    lines = ["| set | metric | value |", "|---|---|---|"]
    for name, key in rows:
        value = results.get(key)
        if value is not None:
            metric = key.split(f"{name}_", 1)[-1]
            lines.append(f"| {name} | {metric} | {100 * value:.2f} |")
    return "\n".join(lines)
