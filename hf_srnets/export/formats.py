"""The export formats of `run_export.py`, a registry like the library's other plugins (`hf_srnets.registry`).

A format is one module of this package that registers an `ExportFormat` (and one import in `export/__init__.py`):
its one name (`--format NAME`, the report's `"format"`), a line of help, the function that exports, the function
that imports its optional packages (called before anything is written, so a missing one is a one-line error naming
the pip extra), and the dataclass of its options, whose fields become `run_export.py` options in a group of their
own (`hf_srnets.arguments.export_arguments`); an option of another format than the one asked for is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..registry import describe, register

__all__ = ["EXPORT_FORMATS", "ExportFormat", "register_export_format"]


@dataclass(frozen=True, repr=False)
class ExportFormat:
    """One export format.

    name: `--format NAME`, one name everywhere (the report's `"format"` too).
    summary: what it serves and which models it takes, for `--format`'s help.
    export: `export(model_dir, output_dir, **options) -> report` (the format's `export_report.json` content).
    require: imports the format's optional packages, raising `MissingExtraError` naming the extra.
    options: the dataclass of the format's options (keyword arguments of `export`), or None.
    """

    name: str
    summary: str
    export: Callable[..., dict[str, Any]]
    require: Callable[[], Any]
    options: type | None = None

    def __repr__(self) -> str:
        return f"ExportFormat({self.name!r}: {describe(self.export)})"


EXPORT_FORMATS: dict[str, ExportFormat] = {}


def register_export_format(fmt: ExportFormat) -> ExportFormat:
    """Add `fmt` to `EXPORT_FORMATS` under its name (another format under a taken name is refused)."""
    return register(EXPORT_FORMATS, fmt.name, fmt, "export format")
