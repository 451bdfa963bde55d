"""The optional packages an export needs, imported only when it runs: `require` turns a missing one into a one-line
error naming the pip extra that installs it (`pip install 'hf_srnets[onnx]'`), so the rest of hf_srnets works
without them."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import InputError

ONNX_EXTRA = "onnx"
COMPRESSED_TENSORS_EXTRA = "compressed-tensors"


class MissingExtraError(InputError, ImportError):
    """An optional package an export needs is not installed (still an `ImportError` to code that catches one)."""


def require(what: str, extra: str, *modules: str) -> list[ModuleType]:
    """Import `modules` (top-level package names) for `what` (e.g. "--format onnx"); a missing one raises
    `MissingExtraError` naming all of them and the extra that installs them."""
    loaded = []
    for name in modules:
        try:
            loaded.append(importlib.import_module(name))
        except ImportError as err:
            raise MissingExtraError(
                f"{what} needs {' and '.join(m.replace('_', '-') for m in modules)} ({name} is not installed: "
                f"{err}): pip install 'hf_srnets[{extra}]'"
            ) from err
    return loaded
