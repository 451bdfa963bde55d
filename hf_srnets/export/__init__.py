"""Exports of a saved classifier to the formats it is served or stored in (`python -m hf_srnets.commands.export`).

- `onnx`: `export_onnx`, a dense, merged or compact classifier as `model.onnx` with dynamic batch and sequence
  axes, checked against the PyTorch logits with ONNX Runtime (`pip install 'hf_srnets[onnx]'`).
- `compressed_tensors`: `export_compressed_tensors`, a merged element or N:M SRNet in the compressed-tensors sparse
  format (bitmask, or 2:4 where the pattern holds), read back to identical weights (`read_compressed_tensors`,
  `load_compressed_tensors`; `pip install 'hf_srnets[compressed-tensors]'`).
- `formats`: the registry of export formats (`EXPORT_FORMATS`, `register_export_format`): a format is one module
  that registers an `ExportFormat` (its name, export function, optional packages and options), imported here.
- `extras`: the optional packages, imported when an export runs; `MissingExtraError` names the extra.
- `files`: the config, tokenizer and `export_report.json` beside the weights; `ExportCheckError`.

The optional packages are imported only inside these functions, so importing this package needs none of them.
"""

from .compressed_tensors import (
    SPARSITY_FORMATS,
    export_compressed_tensors,
    load_compressed_tensors,
    read_compressed_tensors,
)
from .extras import MissingExtraError
from .files import EXPORT_REPORT_NAME, ONNX_NAME, ExportCheckError
from .formats import EXPORT_FORMATS, ExportFormat, register_export_format
from .onnx import export_onnx

__all__ = [
    "EXPORT_FORMATS",
    "EXPORT_REPORT_NAME",
    "ONNX_NAME",
    "SPARSITY_FORMATS",
    "ExportCheckError",
    "ExportFormat",
    "MissingExtraError",
    "export_compressed_tensors",
    "export_onnx",
    "load_compressed_tensors",
    "read_compressed_tensors",
    "register_export_format",
]
