"""`Auto*.from_pretrained` for the library and its commands, never running a model's own code.

A folder (or Hub model) whose `config.json` names a `model_type` transformers does not ship, with an `auto_map` to
Python files of its own, makes transformers ask "Do you wish to run the custom code? [y/N]" when
`trust_remote_code` is left unset, inside whatever command loads it, and answering `y` runs those files; without a
terminal the question becomes a bare `ValueError`. hf_srnets never asks: every load here passes
`trust_remote_code=False` (unless a caller of the Python API passes it) and turns transformers' refusal, or its
error for a type it does not know, into an `InputError` of one line naming the model, its type and the way out.

hf_srnets' own compact models keep their family's `model_type` (`bert`, ...), so they load here without their
modeling file (`hf_srnets.compact.loading`); the `auto_map` they carry serves plain transformers users, who pass
`trust_remote_code=True` themselves.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from typing import Any

import transformers

from ..errors import InputError
from ..run_files import MODEL_CONFIG_NAME

__all__ = ["auto_from_pretrained", "refusing_remote_code"]

KNOWN_TYPES_EXAMPLE = "bert, roberta, deberta-v2, distilbert, electra, modernbert"


def auto_from_pretrained(auto_class: Any, path: str, **kwargs: Any) -> Any:
    """`auto_class.from_pretrained(path, trust_remote_code=False, **kwargs)`, its refusals as `InputError`s."""
    kwargs.setdefault("trust_remote_code", False)
    with refusing_remote_code(path):
        return auto_class.from_pretrained(path, **kwargs)


@contextlib.contextmanager
def refusing_remote_code(path: str) -> Iterator[None]:
    """Turn transformers' "contains custom code" and "does not recognize this architecture" errors for `path`
    into one-line `InputError`s; every other error passes unchanged."""
    try:
        yield
    except ValueError as err:
        message = str(err)
        if "custom code" in message:
            raise InputError(_needs_its_code(path)) from None
        if "does not recognize this architecture" in message or "Unrecognized model" in message:
            raise InputError(_unknown_type(path)) from None
        raise


def _model_type(path: str) -> str | None:
    """The `model_type` of a local folder's config.json (None for a Hub id or an unreadable file)."""
    try:
        with open(os.path.join(path, MODEL_CONFIG_NAME), encoding="utf-8") as handle:
            return json.load(handle).get("model_type")
    except (OSError, ValueError, AttributeError):
        return None


def _needs_its_code(path: str) -> str:
    kind = _model_type(path)
    kind = f" of type {kind!r}" if kind else ""
    return (
        f"{path} is a model{kind} that transformers {transformers.__version__} does not ship: loading it would run "
        f"the Python files it carries ({MODEL_CONFIG_NAME}'s auto_map), which hf_srnets' commands never do. Use a "
        f"model of a type transformers ships ({KNOWN_TYPES_EXAMPLE}, ...), or read its code, load it yourself with "
        "trust_remote_code=True and pass the model object to the Python API."
    )


def _unknown_type(path: str) -> str:
    kind = _model_type(path)
    kind = f" of type {kind!r}" if kind else ""
    return (
        f"{path} is a model{kind} that transformers {transformers.__version__} does not know: check "
        f"{MODEL_CONFIG_NAME}'s model_type (types transformers ships: {KNOWN_TYPES_EXAMPLE}, ...), or upgrade "
        "transformers if the type is newer than it."
    )
