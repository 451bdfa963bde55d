"""What every export writes beside its weights, and how it reports: the model's config and tokenizer (so ONNX Runtime,
optimum or vLLM users find them where they look), `export_report.json` (format, seconds, sizes, the check), and
`ExportCheckError`, raised when an export does not give back what it was given."""

from __future__ import annotations

import logging
import os
from typing import Any

from ..errors import InputError, check_path_argument, naming_path
from ..resources.auto_loading import auto_from_pretrained
from ..resources.model_location import is_local_path
from ..run_files import ONNX_NAME, detach_links, holds_tokenizer_files, write_json

logger = logging.getLogger(__name__)

EXPORT_REPORT_NAME = "export_report.json"
# what an export writes besides a run's own file names (config, weights, tokenizer): the graph and its external data
EXPORT_NAMES = (f"{ONNX_NAME}*", EXPORT_REPORT_NAME)


class ExportCheckError(RuntimeError):
    """The exported files do not reproduce the source model (ONNX logits too far from PyTorch's, weights read back
    not identical): a bug of the exporter or of the runtime, never of the user's input, so it keeps its traceback."""


def load_tokenizer(model_dir: str) -> Any | None:
    """The tokenizer saved with the model, or None (logged) when the folder holds none (transformers would build an
    empty one from the config alone)."""
    from transformers import AutoTokenizer

    if is_local_path(model_dir) and not holds_tokenizer_files(model_dir):
        logger.warning(f"{model_dir} holds no tokenizer: the export writes none beside the model")
        return None
    try:
        return auto_from_pretrained(AutoTokenizer, model_dir)
    except (OSError, ValueError, TypeError) as err:
        logger.warning(f"{model_dir}: its tokenizer could not be loaded ({err}): the export writes none")
        return None


def check_export_paths(where: str, **paths: Any) -> None:
    """`InputTypeError` for an argument among `paths` (name -> value) that is not a path."""
    for name, value in paths.items():
        check_path_argument(value, where, name, "pass a folder path (str or os.PathLike)")


def check_number(value: Any, name: str, low: float, high: float, example: str) -> None:
    """`InputError` naming `name` unless `value` is a real number (not a bool, not a string) with low < value <= high
    (low ≤ value when low is 0 and high is 1: a fraction), checked before any model is loaded or folder made."""
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    fraction = low == 0 and high == 1
    inside = is_number and (low <= value <= high if fraction else low < value <= high) and value == value
    if not inside:
        where = f"in [{low:g}, {high:g}]" if fraction else f"a number above {low:g}"
        raise InputError(f"{name} must be {where}, got {value!r}: e.g. {name}={example}")


def check_finite_weights(model: Any, model_dir: str) -> None:
    """`InputError` naming the first parameter with a NaN or an infinity: such a model gives NaN logits, which the
    export's check would blame on the exporter (issue 70); checked before anything is written."""
    import torch

    for name, param in model.named_parameters():
        if not bool(torch.isfinite(param).all()):
            raise InputError(
                f"{model_dir} has non-finite weights ({name} holds NaN or infinity): its logits are NaN and no export "
                "can reproduce them; export the model of a run that trained without diverging"
            )


def prepare_output_dir(model_dir: str, output_dir: str) -> None:
    """Make `output_dir` for an export of `model_dir`: refused when it is the model's own folder (by real path, so a
    link to the folder is the folder: the export would overwrite what it reads), and every entry there named as a
    file the export writes that is a link (or a file with another hard link) unlinked first, since the exporters
    (`torch.onnx.export`, safetensors, `save_pretrained`) write their paths in place: never through a link into a
    file kept elsewhere."""
    if os.path.realpath(output_dir) == os.path.realpath(model_dir):
        raise InputError(
            f"output_dir {output_dir} is the model's own folder {model_dir} (its real path): the export would "
            "overwrite the model it reads; choose another output_dir."
        )
    os.makedirs(output_dir, exist_ok=True)
    detach_links(output_dir, also=EXPORT_NAMES)


def save_config_and_tokenizer(model: Any, tokenizer: Any | None, output_dir: str) -> None:
    """The model's config (and the tokenizer, when there is one) into `output_dir`, as `save_pretrained` writes
    them."""
    detach_links(output_dir)  # save_pretrained writes in place: never through a link into a file kept elsewhere
    with naming_path(output_dir):
        model.config.save_pretrained(output_dir)
        if tokenizer is not None:
            tokenizer.save_pretrained(output_dir)


def files_bytes(output_dir: str, prefix: str) -> int:
    """The bytes of the files of `output_dir` whose names start with `prefix` (a model and its external data)."""
    return sum(
        os.path.getsize(os.path.join(output_dir, name)) for name in os.listdir(output_dir) if name.startswith(prefix)
    )


def write_report(output_dir: str, report: dict[str, Any]) -> None:
    """`export_report.json` in `output_dir` (atomically, as every run record)."""
    write_json(os.path.join(output_dir, EXPORT_REPORT_NAME), report, indent=2)
