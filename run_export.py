#!/usr/bin/env python
"""Export a saved classifier: ONNX (checked with ONNX Runtime) or the compressed-tensors sparse format.

    python run_export.py out/mnli_hybrid50/merged --format onnx --output_dir onnx_hybrid50
    python run_export.py out/mnli_nm24/merged --format compressed-tensors --output_dir ct_nm24

The options and the files written are those of `hf_srnets.commands.export` (`main`).
"""

from __future__ import annotations

from hf_srnets.commands.export import main, script_main
from hf_srnets.errors import run_script

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(run_script(script_main))
