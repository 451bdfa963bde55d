"""Export a saved classifier to ONNX (ONNX Runtime) or to the compressed-tensors sparse format.

    python -m hf_srnets.commands.export out/mnli_hybrid50/merged --format onnx --output_dir onnx_hybrid50
    python -m hf_srnets.commands.export out/mnli_nm24/merged --format compressed-tensors --output_dir ct_nm24

`--format onnx` takes a dense, merged or compact classifier (compact checkpoints load with
`hf_srnets.load_pretrained_model`) and writes `model.onnx` (dynamic batch and sequence axes; inputs `input_ids`,
`attention_mask` and, where the model reads them, `token_type_ids`; output `logits`), checked with ONNX Runtime
against the PyTorch logits (max |Δ| ≤ `--tolerance`) on two batches of other shapes than the traced one.
`--format compressed-tensors` takes a merged element-level or N:M SRNet and writes `model.safetensors` with the sparse
Linear weights compressed (`--sparsity_format auto|bitmask|2:4`) and the sparsity config in `config.json`, read back
to identical weights. Both write the model's config, its tokenizer and `export_report.json` (format, seconds, file
size, the check) into `--output_dir`. They need optional packages: `pip install 'hf_srnets[onnx]'` or
`pip install 'hf_srnets[compressed-tensors]'`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Literal

from transformers import HfArgumentParser

from ..cli.parser import parse_dataclasses
from ..compact.loading import check_model_path
from ..errors import InputError, run_script
from ..export import SPARSITY_FORMATS, export_onnx, export_sparse_checkpoint
from ..export.onnx import DEFAULT_OPSET, MAX_OPSET, MIN_OPSET, TOLERANCE, check_opset, onnx_modules
from ..export.sparse_checkpoint import MIN_SPARSITY, compressed_tensors_module
from ..training.output_dir import acquire_lock

logger = logging.getLogger("export")

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


def parse_args(argv: list[str]) -> ExportArguments:
    """HfArgumentParser over `ExportArguments`; a leading argument without `--` is the model directory."""
    if argv and not argv[0].startswith("-"):
        argv = ["--model_dir", *argv]
    (args,) = parse_dataclasses(HfArgumentParser(ExportArguments), argv)  # an unknown flag: one error line
    return args


def check_output_dir(args: ExportArguments) -> None:
    """Refuse an --output_dir that is the model's own folder, or that holds files, unless --overwrite_output_dir."""
    if os.path.abspath(args.output_dir) == os.path.abspath(args.model_dir):
        raise InputError(f"--output_dir {args.output_dir} is the model's own folder: choose another --output_dir.")
    if args.overwrite_output_dir or not os.path.isdir(args.output_dir):
        return
    if [name for name in os.listdir(args.output_dir) if not name.startswith(".")]:  # hidden: the lock
        raise InputError(
            f"--output_dir {args.output_dir} is not empty: use another --output_dir, or --overwrite_output_dir true."
        )


def export(args: ExportArguments) -> dict[str, Any]:
    """The export `args` ask for; its report."""
    if args.format == "onnx":
        return export_onnx(args.model_dir, args.output_dir, opset=args.opset, tolerance=args.tolerance)
    return export_sparse_checkpoint(
        args.model_dir, args.output_dir, sparsity_format=args.sparsity_format, min_sparsity=args.min_sparsity
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Export the model (module docstring) under the output dir's lock; return `export_report.json`'s content."""
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    check_model_path(args.model_dir, flag="model_dir")
    check_output_dir(args)
    if args.format == "onnx":  # a missing optional package is refused before anything is written
        onnx_modules()
    else:
        compressed_tensors_module()
    created = not os.path.exists(args.output_dir)
    lock = acquire_lock(args.output_dir)  # one writer per dir; it makes the dir
    try:
        return export(args)
    finally:
        lock.release()
        if created:
            remove_if_empty(args.output_dir)


def remove_if_empty(folder: str) -> None:
    """Remove `folder` if nothing is in it: a failed export leaves no empty folder it made."""
    with contextlib.suppress(OSError):  # not empty: the export's files, or the lock of a run that came since
        os.rmdir(folder)


def script_main() -> None:
    """`main()` as `run_export.py` and `python -m hf_srnets.commands.export` run it, logging at INFO."""
    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", level=logging.INFO)
    main()


if __name__ == "__main__":
    raise SystemExit(run_script(script_main))
