"""The command line of `run_export.py` (`python -m hf_srnets.commands.export`), parsing only: `ExportArguments` (the
model, the format, where to write it) and each registered format's options (`hf_srnets.export.formats`: one group of
options a format), checked as they are parsed. The export itself is `hf_srnets.jobs.export`."""

from __future__ import annotations

import dataclasses
import types
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..export import EXPORT_FORMATS
from .parser import parse_command


def _formats_help() -> str:
    return " or ".join(f"{fmt.name} ({fmt.summary})" for fmt in EXPORT_FORMATS.values()) + "."


@dataclass
class ExportArguments:
    """The model to export, the format, where to write it; `format_options` holds the chosen format's options."""

    model_dir: str = field(
        metadata={"help": "A saved classifier: a run's merged/ checkpoint or any model dir (also the first argument)."}
    )
    format: str = field(metadata={"help": _formats_help(), "choices": list(EXPORT_FORMATS)})  # `_current_formats`
    output_dir: str = field(metadata={"help": "Where the exported model, its config, tokenizer and report go."})
    overwrite_output_dir: bool = field(
        default=False, metadata={"help": "Write into a non-empty --output_dir (default: refuse)."}
    )
    format_options: dict[str, Any] = field(default_factory=dict, metadata={"cli": False})

    def __post_init__(self) -> None:
        if self.format not in EXPORT_FORMATS:
            raise InputError(f"--format must be one of {', '.join(EXPORT_FORMATS)}, got {self.format!r}.")


def parse_args(argv: list[str] | None = None, description: str | None = None) -> ExportArguments:
    """`ExportArguments` from `argv` (default: the command line), the model directory possibly first, with the chosen
    format's options in `format_options`; an option of another format, changed from its default, is refused."""
    _current_formats()
    with_options = [fmt for fmt in EXPORT_FORMATS.values() if fmt.options is not None]
    args, *options = parse_command(
        [ExportArguments, *(fmt.options for fmt in with_options)], argv, first="model_dir", description=description
    )
    for fmt, values in zip(with_options, options):
        if fmt.name == args.format:
            args.format_options = dataclasses.asdict(values)
            continue
        changed = [f"--{f.name}" for f in dataclasses.fields(values) if getattr(values, f.name) != f.default]
        if changed:
            raise InputError(
                f"{', '.join(changed)} would do nothing with --format {args.format}: drop it, or use --format "
                f"{fmt.name}."
            )
    return args


def _current_formats() -> None:
    """`--format`'s choices and help from the registry as it is now: a format registered after this module was
    imported (a plugin) is one of them."""
    format_field = ExportArguments.__dataclass_fields__["format"]
    format_field.metadata = types.MappingProxyType({"help": _formats_help(), "choices": list(EXPORT_FORMATS)})
