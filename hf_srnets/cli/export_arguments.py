"""The command line of `run_export.py` (`python -m hf_srnets.commands.export`), parsing only: `ExportArguments` (the
model, the format, where to write it, each format's options), checked as they are parsed. The export itself is
`hf_srnets.runner.export`, over the formats of `hf_srnets.export`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..errors import InputError
from ..export import SPARSITY_FORMATS
from ..export.onnx import DEFAULT_OPSET, MAX_OPSET, MIN_OPSET, TOLERANCE, check_opset
from ..export.sparse_checkpoint import MIN_SPARSITY
from .parser import parse_command

FORMATS = ("onnx", "compressed-tensors")
FORMAT_OPTIONS = {"sparsity_format": "compressed-tensors", "min_sparsity": "compressed-tensors", "opset": "onnx",
                  "tolerance": "onnx"}  # fmt: skip


@dataclass
class ExportArguments:
    """The model to export, the format, where to write it, and each format's options."""

    model_dir: str = field(
        metadata={"help": "A saved classifier: a run's merged/ checkpoint or any model dir (also the first argument)."}
    )
    format: Literal["onnx", "compressed-tensors"] = field(
        metadata={
            "help": "onnx (ONNX Runtime; dense, merged or compact models) or compressed-tensors (merged "
            "element or N:M SRNets: sparse weights compressed)."
        }
    )
    output_dir: str = field(metadata={"help": "Where the exported model, its config, tokenizer and report go."})
    sparsity_format: Literal["auto", "bitmask", "2:4"] = field(
        default="auto",
        metadata={
            "help": "compressed-tensors: auto (2:4 where every sparse weight holds the pattern, else bitmask), "
            "bitmask (sparse-bitmask) or 2:4 (sparse-24-bitmask)."
        },
    )
    min_sparsity: float = field(
        default=MIN_SPARSITY,
        metadata={"help": "compressed-tensors: an nn.Linear weight with at least this share of zeros is compressed."},
    )
    opset: int = field(
        default=DEFAULT_OPSET,
        metadata={
            "help": f"onnx: the ONNX opset, {MIN_OPSET}-{MAX_OPSET} (the attention exports from {MIN_OPSET} on, "
            f"torch's exporter goes up to {MAX_OPSET})."
        },
    )
    tolerance: float = field(
        default=TOLERANCE, metadata={"help": "onnx: the largest |ONNX Runtime logit - PyTorch logit| accepted."}
    )
    overwrite_output_dir: bool = field(
        default=False, metadata={"help": "Write into a non-empty --output_dir (default: refuse)."}
    )

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise InputError(f"--format must be one of {', '.join(FORMATS)}, got {self.format!r}.")
        if self.sparsity_format not in SPARSITY_FORMATS:
            raise InputError(
                f"--sparsity_format must be one of {', '.join(SPARSITY_FORMATS)}, got {self.sparsity_format!r}."
            )
        unused = [f"--{name}" for name, fmt in FORMAT_OPTIONS.items() if fmt != self.format and _changed(self, name)]
        if unused:
            raise InputError(
                f"{', '.join(unused)} would do nothing with --format {self.format}: drop it, or use --format "
                f"{FORMAT_OPTIONS[unused[0][2:]]}."
            )
        if not 0.0 < self.min_sparsity < 1.0:
            raise InputError(f"--min_sparsity must be in (0, 1), got {self.min_sparsity}.")
        if not self.tolerance > 0:
            raise InputError(f"--tolerance must be positive, got {self.tolerance}.")
        check_opset(self.opset)


def _changed(args: ExportArguments, name: str) -> bool:
    """Whether option `name` differs from its default."""
    return getattr(args, name) != ExportArguments.__dataclass_fields__[name].default


def parse_args(argv: list[str] | None = None, description: str | None = None) -> ExportArguments:
    """`ExportArguments` from `argv` (default: the command line); the model directory may come first."""
    (args,) = parse_command([ExportArguments], argv, first="model_dir", description=description)
    return args
