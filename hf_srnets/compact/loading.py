"""`load_pretrained_model`: load a sequence classifier saved by hf_srnets, compact (head- or FFN-pruned) or not;
`load_classifier`: the same with a head of a task's labels.

A head-pruned checkpoint (`config.srnet_pruned_heads` in its config.json, written by
`hf_srnets.compact.prune_heads`) has smaller Q/K/V and output projections than its config describes, and one with
FFN widths that differ between layers (`config.srnet_intermediate_sizes`, written by
`hf_srnets.compact.prune_ffn_units` / `compact_model`) smaller FFN matrices, so plain
`AutoModelForSequenceClassification.from_pretrained` fails with size mismatches. The loader builds the model from
the config, removes the recorded heads (`prune_heads`), gives each layer its recorded FFN width
(`set_ffn_widths`), then loads the saved weights into it: every parameter is
read from the checkpoint, and a mismatch or a missing encoder weight raises `ValueError` instead of being
reinitialised. Only a missing classification head (`classifier`/`pooler`) is allowed, as `from_pretrained` allows
it, with a warning and its names in the loading info. Without the record it is `from_pretrained`.

    >>> from hf_srnets import load_pretrained_model
    >>> model = load_pretrained_model("out/mnli_heads20")  # 116 of 144 heads
    >>> model = load_pretrained_model("out/mnli_neuron70_compact")  # FFN widths per layer, fewer heads
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import pickle
import re
from collections.abc import Iterator, Sequence
from typing import Any

import torch
from transformers import AutoConfig, AutoModelForSequenceClassification
from transformers.utils import cached_file

from ..errors import InputError, MissingInputError, check_path_argument
from ..resources.auto_loading import auto_from_pretrained
from ..resources.model_location import is_local_path, looks_like_path
from ..run_files import (
    MODEL_CONFIG_NAME,
    ONNX_NAME,
    SAFE_WEIGHTS_INDEX_NAME,
    SAFE_WEIGHTS_NAME,
    SRNET_CONFIG_NAME,
    WEIGHTS_INDEX_NAME,
    WEIGHTS_NAME,
)
from .families import model_family
from .family_compaction import shrink_family_model
from .heads import prune_heads
from .layout import INTERMEDIATE_SIZES_ATTR, PRUNED_HEADS_ATTR, is_compact_config
from .neurons import set_ffn_widths
from .remote_code import forget_remote_code

logger = logging.getLogger(__name__)

HUB_KWARGS = ("cache_dir", "revision", "token", "local_files_only", "force_download", "subfolder")
HEAD_KEYS = ("classifier", "pooler")  # weights a checkpoint may lack (a new task head), as in from_pretrained
WEIGHT_FILES = (SAFE_WEIGHTS_NAME, SAFE_WEIGHTS_INDEX_NAME, WEIGHTS_NAME)
SAVED_WEIGHTS = (*WEIGHT_FILES, WEIGHTS_INDEX_NAME)  # any of them: a saved model's weights are there


def _weight_file(path: str, hub: dict[str, Any]) -> str:
    for name in WEIGHT_FILES:
        found = cached_file(path, name, _raise_exceptions_for_missing_entries=False, **hub)
        if found:
            return found
    raise InputError(f"{path}: no weights found (looked for {', '.join(WEIGHT_FILES)})")


def _read_state_dict(path: str, hub: dict[str, Any]) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    found = _weight_file(path, hub)
    if found.endswith(".bin"):
        return torch.load(found, map_location="cpu", weights_only=True)
    if not found.endswith(".index.json"):
        return load_file(found)
    with open(found, encoding="utf-8") as f:
        shards = sorted(set(json.load(f)["weight_map"].values()))
    state: dict[str, torch.Tensor] = {}
    for shard in shards:
        state.update(load_file(cached_file(path, shard, **hub)))
    return state


def _load_weights(model: Any, state: dict[str, torch.Tensor], path: str) -> list[str]:
    try:
        result = model.load_state_dict(state, strict=False)
    except RuntimeError as err:  # size mismatches
        raise InputError(
            f"{path}: the saved weights do not fit the head-pruned model / the FFN widths its config records: {err}"
        ) from None
    missing = list(result.missing_keys)
    unexpected = list(result.unexpected_keys)
    lost = [k for k in missing if not any(part in k for part in HEAD_KEYS)]
    if unexpected or lost:
        raise InputError(
            f"{path}: the checkpoint does not match {type(model).__name__} (missing: {lost[:5]}, unexpected: "
            f"{unexpected[:5]}); save compact models with save_pretrained of the sequence classifier"
        )
    if missing:
        logger.warning(f"{path}: {missing} not in the checkpoint and newly initialised (a new classification head)")
    return missing


MODEL_HELP = (
    f"give the directory of a saved model (with {MODEL_CONFIG_NAME}: an hf_srnets run's --output_dir or merged/) or "
    "a Hub id"
)


def check_model_path(
    path: str, flag: str | None = "--model_name_or_path", cache_dir: str | None = None, *, need_config: bool = True
) -> None:
    """Refuse, as `InputError`, a model that cannot be loaded: a local path that does not exist, a file, a
    directory without `config.json` (a mask dir is named as such), or a name that is neither a directory nor a Hub
    model reachable (or cached, offline). `flag` names the option in the message; `need_config=False` (a tokenizer)
    takes any directory."""
    what = f"{flag} {path}" if flag else path
    if os.path.isdir(path):
        if not need_config:
            return
        if os.path.isfile(os.path.join(path, MODEL_CONFIG_NAME)):
            if not any(os.path.isfile(os.path.join(path, name)) for name in (*SAVED_WEIGHTS, ONNX_NAME)):
                raise InputError(
                    f"{what} holds {MODEL_CONFIG_NAME} but no weights ({', '.join(SAVED_WEIGHTS)}): a save that did "
                    "not finish, or a folder of its config alone; save the model again, or point at the folder of its "
                    "weights"
                )
            return
        if os.path.isfile(os.path.join(path, SRNET_CONFIG_NAME)):
            raise InputError(
                f"{what} holds hf_srnets masks ({SRNET_CONFIG_NAME}) but no {MODEL_CONFIG_NAME}, so it is not a "
                f"model: apply them with --mask_from {path} to their base model, or use the run's merged/ checkpoint"
            )
        raise InputError(f"{what} has no {MODEL_CONFIG_NAME}, so it is not a saved model: {MODEL_HELP}")
    if os.path.exists(path):
        raise InputError(f"{what} is a file, not a model directory: {MODEL_HELP}")
    if looks_like_path(path):
        raise MissingInputError(f"{what} does not exist: {MODEL_HELP}")
    try:
        auto_from_pretrained(AutoConfig, path, cache_dir=cache_dir)
    except (OSError, ValueError) as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise MissingInputError(
            f"{what} is no local directory, and no Hub model of that name could be loaded ({reason}): {MODEL_HELP}"
        ) from None


_PICKLED_GLOBAL = re.compile(r"Unsupported global: GLOBAL (\S+)")  # torch's weights-only unpickler names the object


@contextlib.contextmanager
def naming_damaged_weights(path: str) -> Iterator[None]:
    """Turn safetensors' error on a damaged weights file (empty, cut short, overwritten: "header too small",
    "incomplete metadata", ...), which names no file, into an `InputError` naming it and the fix; and so torch's
    refusal of a `pytorch_model.bin` holding pickled objects (`torch.load(weights_only=True)`, transformers' way)."""
    from safetensors import SafetensorError

    try:
        yield
    except pickle.UnpicklingError as err:  # torch.load(weights_only=True) met a pickled object, not only tensors
        single = os.path.join(path, WEIGHTS_NAME)
        where = single if is_local_path(path) and os.path.isfile(single) else f"a weights file of {path}"
        found = _PICKLED_GLOBAL.search(f"{err} {err.__context__}")
        what = f" ({found.group(1)})" if found else ""
        raise InputError(
            f"{where} holds pickled Python objects besides tensors{what}, so it is refused: loading it could run "
            f"code. Use a model saved as {SAFE_WEIGHTS_NAME} (save_pretrained's default) from a source you trust."
        ) from None
    except SafetensorError as err:
        single = os.path.join(path, SAFE_WEIGHTS_NAME)
        where = single if is_local_path(path) and os.path.isfile(single) else f"a weights file of {path}"
        raise InputError(
            f"{where} is damaged and cannot be read ({err}): it was cut short or overwritten; save the model again "
            "(or download it again)."
        ) from err


def load_pretrained_model(path: str, *, output_loading_info: bool = False, **kwargs: Any) -> Any:
    """`AutoModelForSequenceClassification` from `path` (dir or Hub id), compact or not (module docstring).

    `kwargs` are those of `from_pretrained`: config overrides (`num_labels`, `id2label`, ...) and Hub options
    (`cache_dir`, `revision`, `token`, ...). With `output_loading_info`, returns `(model, info)` with
    `info["missing_keys"]` as `from_pretrained` does. The model is returned in eval mode. A damaged weights file
    raises `InputError` naming it.
    """
    check_path_argument(path, "load_pretrained_model", "path", "pass a saved model's folder or a Hub id")
    if is_local_path(path):  # a Hub id's errors are from_pretrained's
        check_model_path(path, flag=None)
        refuse_onnx_only(path)
    with naming_damaged_weights(path):
        return _load_pretrained_model(path, output_loading_info, kwargs)


def refuse_onnx_only(path: str) -> None:
    """An ONNX export (model.onnx, no PyTorch weights) is no PyTorch model: say what takes it instead."""
    if os.path.isfile(os.path.join(path, ONNX_NAME)) and not any(
        os.path.isfile(os.path.join(path, name)) for name in SAVED_WEIGHTS
    ):
        raise InputError(
            f"{path} is an ONNX export ({ONNX_NAME}, no PyTorch weights): run_glue_sparse.py --model_name_or_path "
            f"{path} --do_eval evaluates it; to load, prune or export a model, give the folder it was exported from "
            "(export_report.json's source)"
        )


def _load_pretrained_model(path: str, output_loading_info: bool, kwargs: dict[str, Any]) -> Any:
    """`load_pretrained_model` once `path` is checked."""
    hub = {k: kwargs[k] for k in HUB_KWARGS if k in kwargs}
    config = auto_from_pretrained(AutoConfig, path, **hub)
    if not is_compact_config(config):
        model, info = auto_from_pretrained(AutoModelForSequenceClassification, path, output_loading_info=True, **kwargs)
        check_body_loaded(path, info.get("missing_keys", []), config)
        return (model, info) if output_loading_info else model
    config, unused = auto_from_pretrained(AutoConfig, path, return_unused_kwargs=True, **kwargs)
    unused = {k: v for k, v in unused.items() if k not in HUB_KWARGS}
    if unused:
        raise ValueError(
            f"load_pretrained_model: {sorted(unused)} are not supported for a compact checkpoint ({path}); "
            "pass config overrides and Hub options only"
        )
    recorded = getattr(config, PRUNED_HEADS_ATTR, None) or {}
    widths = getattr(config, INTERMEDIATE_SIZES_ATTR, None)
    model = architecture_from_config(config)
    missing = _load_weights(model, _read_state_dict(path, hub), path)  # refuses a missing body itself
    model.eval()
    removed = sum(len(v) for v in recorded.values())
    logger.info(f"Loaded compact {path}: {removed} heads removed ({recorded}), FFN widths {widths or 'uniform'}")
    info = {"missing_keys": missing, "unexpected_keys": [], "mismatched_keys": [], "error_msgs": []}
    return (model, info) if output_loading_info else model


def is_head_key(key: str) -> bool:
    """A weight of the classification head (or the pooler before it): new where a pre-trained encoder is loaded as
    a classifier, as it should be."""
    return any(part in key for part in HEAD_KEYS) or key.startswith(("score.", "head."))  # decoders, ModernBERT


def check_body_loaded(path: str, missing: Sequence[str], config: Any) -> None:
    """`InputError` when weights of the model's body are missing from `path`'s weights file: transformers would
    draw them at random and the model would evaluate as noise, with only its load report saying so (issue 70: a
    compressed-tensors export loaded this way scored 0.25 against its source's 0.56)."""
    body = [key for key in missing if not is_head_key(key)]
    if not body:
        return
    if getattr(config, "quantization_config", None):
        fix = (
            f"it is a compressed checkpoint ({MODEL_CONFIG_NAME} has a quantization_config, e.g. a compressed-tensors "
            "export of run_export.py): load the merged model it was exported from, or its decompressed weights "
            "(hf_srnets.export.read_compressed_tensors)"
        )
    else:
        fix = f"its weights do not match its {MODEL_CONFIG_NAME}: point at the folder the model was saved to"
    raise InputError(
        f"{path}: {len(body)} weights of the model's body are not in its weights file (e.g. {body[0]}) and would be "
        f"drawn at random; {fix}"
    )


def architecture_from_config(config: Any) -> Any:
    """A sequence classifier of the shapes `config` describes, the heads and FFN units it records as removed
    (compact checkpoints) removed too, with freshly initialised weights: what `load_pretrained_model` loads the
    saved weights into, and, alone, a model of a saved one's exact shapes (to time it where its weights are not).
    `config` is changed: its record of removed heads is rewritten as they are removed, and the remote-code entries
    of a checkpoint saved for loading without hf_srnets are dropped (`remote_code.forget_remote_code`)."""
    forget_remote_code(config)
    recorded = getattr(config, PRUNED_HEADS_ATTR, None) or {}
    widths = getattr(config, INTERMEDIATE_SIZES_ATTR, None)
    check_compact_record(config, recorded, widths)
    setattr(config, PRUNED_HEADS_ATTR, None)  # prune_heads records them again as it removes them
    model = AutoModelForSequenceClassification.from_config(config)
    if model_family(model) is not None:  # ModernBERT, Llama-family decoders
        shrink_family_model(model, recorded, widths)
    else:
        _shrink(model, recorded, widths)
    return model


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_compact_record(config: Any, recorded: Any, widths: Any) -> None:
    """`InputError` naming the entry when a compact config's record is malformed (hand-edited, or written by
    something else): `srnet_pruned_heads` must map layer indices to lists of head indices, `srnet_intermediate_sizes`
    be one non-negative integer width per layer. Without this a width "wide" was a raw ValueError deep in the
    rebuild (issue 70)."""
    fix = f"the {MODEL_CONFIG_NAME} was changed by hand or by another tool: save the model again with hf_srnets"
    if not isinstance(recorded, dict) or not all(
        str(k).isdigit() and isinstance(v, list) and all(_is_count(h) for h in v) for k, v in recorded.items()
    ):
        raise InputError(
            f"{PRUNED_HEADS_ATTR} must map layer indices to lists of head indices, got {recorded!r}: {fix}"
        )
    if widths is not None and (not isinstance(widths, list) or not all(_is_count(w) for w in widths)):
        raise InputError(
            f"{INTERMEDIATE_SIZES_ATTR} must be a list of non-negative integer widths, one a layer, got {widths!r}: "
            f"{fix}"
        )  # one a layer: set_ffn_widths says how many


def _shrink(model: Any, recorded: dict[str, Any], widths: list[int] | None) -> None:
    if recorded:
        prune_heads(model, recorded, whole_layers=True)  # compact_model may have removed a layer's attention
    if widths:
        set_ffn_widths(model, widths)


def load_classifier(
    path: str, label_names: Sequence[str], *, cache_dir: str | None = None, output_loading_info: bool = False
) -> Any:
    """`load_pretrained_model` with a head of `label_names` (id k is `label_names[k]`): the classifier of a task,
    whether `path` is a fine-tuned checkpoint or a pre-trained encoder whose head is drawn new."""
    id2label = dict(enumerate(label_names))
    return load_pretrained_model(
        path,
        num_labels=len(label_names),
        id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
        cache_dir=cache_dir,
        output_loading_info=output_loading_info,
    )
