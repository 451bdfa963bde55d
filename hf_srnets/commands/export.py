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

`main` parses the options (`hf_srnets.arguments.export_arguments`) and exports (`hf_srnets.jobs.export`).
"""

from __future__ import annotations

import logging
from typing import Any

from ..arguments.export_arguments import parse_args
from ..errors import run_script
from ..jobs.export import run_export


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Parse the options and export (module docstring); return `export_report.json`'s content."""
    return run_export(parse_args(argv, description=__doc__))


def script_main() -> None:
    """`main()` as `run_export.py` and `python -m hf_srnets.commands.export` run it, logging at INFO."""
    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", level=logging.INFO)
    main()


if __name__ == "__main__":
    raise SystemExit(run_script(script_main))
