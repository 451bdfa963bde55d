"""Exports of a saved classifier to the formats it is served or stored in (`python -m hf_srnets.commands.export`).

- `onnx`: `export_onnx`, a dense, merged or compact classifier as `model.onnx` with dynamic batch and sequence
  axes, checked against the PyTorch logits with ONNX Runtime (`pip install 'hf_srnets[onnx]'`).
- `sparse_checkpoint`: `export_sparse_checkpoint`, a merged element or N:M SRNet in the compressed-tensors sparse
  format (bitmask, or 2:4 where the pattern holds), read back to identical weights (`read_sparse_checkpoint`,
  `load_sparse_checkpoint`; `pip install 'hf_srnets[compressed-tensors]'`).
- `extras`: the optional packages, imported when an export runs; `MissingExtraError` names the extra.
- `files`: the config, tokenizer and `export_report.json` beside the weights; `ExportCheckError`.

The optional packages are imported only inside these functions, so importing this package needs none of them.
"""

from .extras import MissingExtraError
from .files import EXPORT_REPORT_NAME, ONNX_NAME, ExportCheckError
from .onnx import export_onnx
from .sparse_checkpoint import (
    SPARSITY_FORMATS,
    export_sparse_checkpoint,
    load_sparse_checkpoint,
    read_sparse_checkpoint,
)

__all__ = [
    "EXPORT_REPORT_NAME",
    "ONNX_NAME",
    "SPARSITY_FORMATS",
    "ExportCheckError",
    "MissingExtraError",
    "export_onnx",
    "export_sparse_checkpoint",
    "load_sparse_checkpoint",
    "read_sparse_checkpoint",
]
