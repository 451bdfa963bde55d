"""Compact checkpoints that load without hf_srnets: `AutoModelForSequenceClassification.from_pretrained(path,
trust_remote_code=True)`, the way models with an architecture of their own are published on the Hub.

A compact model (heads and FFN units removed, `hf_srnets.compact.compact_model`) has per-layer shapes its config
cannot state in transformers' own terms, so stock `from_pretrained` fails with size mismatches.
`write_remote_code` saves beside the weights a small modeling file (`modeling_srnet_compact.py`, no import but
torch and transformers) whose class is the stock classifier with those parts resized, and writes to config.json

- `srnet_compact_layout`: what differs from the stock model of the same config: `linear` ({module path:
  [in_features, out_features, has_bias]}), `attributes` ({module path: {name: int}}, the head counts attention
  modules keep) and `eager_attention` (attention modules left with no heads, which run the eager attention:
  `hf_srnets.compact.heads`);
- `auto_map` = {"AutoModelForSequenceClassification": "modeling_srnet_compact.SRNetCompact<Stock class>"}.

The layout is found by building the stock model of the saved config on the meta device and comparing it with the
compact one, module by module, so it holds for every architecture with compact export (BERT family, ModernBERT,
Llama-family decoders) without a table per architecture. The forward is the stock one. A model whose shapes the
config states (one FFN width, no heads removed) needs none of this and gets none.
"""

from __future__ import annotations

import copy
import json
import os
from typing import Any

import torch
import transformers
from torch import nn

from ..errors import InputError, check_path_argument, check_plain_model_argument
from ..run_files import MODEL_CONFIG_NAME, REMOTE_CODE_NAME, detach_links, replaced_file, write_json
from .layout import is_compact_config

REMOTE_CODE_FILE = REMOTE_CODE_NAME
REMOTE_CODE_MODULE = os.path.splitext(REMOTE_CODE_FILE)[0]  # what auto_map names
LAYOUT_ATTR = "srnet_compact_layout"
AUTO_MAP_KEY = "AutoModelForSequenceClassification"
CLASS_PREFIX = "SRNetCompact"

MODELING_TEMPLATE = '''"""A compact SRNet (sparse and robust subnetwork, found with hf_srnets): a {base} with attention
heads and FFN units removed, loadable with transformers alone:

    from transformers import AutoModelForSequenceClassification
    model = AutoModelForSequenceClassification.from_pretrained(PATH, trust_remote_code=True)

The config's `srnet_compact_layout` lists the linear layers whose shapes differ from the stock {base} of this
config ([in_features, out_features, has_bias]), the attributes that differ (head counts) and the attention modules
left with no heads (they run the eager attention). This class builds the stock model, then resizes those parts
before the weights load; the forward is the stock one. Written by hf_srnets.compact.remote_code.
"""

import copy
import warnings

from torch import nn
from transformers import {base}


class {name}({base}):
    def __init__(self, config, *args, **kwargs):
        super().__init__(config, *args, **kwargs)
        apply_compact_layout(self, getattr(config, "{layout_attr}", None) or {{}})


def check_linear_entry(path, entry):
    fine = isinstance(entry, (list, tuple)) and len(entry) == 3 and isinstance(entry[2], bool)
    if not (fine and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in entry[:2])):
        raise ValueError(
            f"the config's {layout_attr}['linear'][{{path!r}}] is {{entry!r}}, not [in_features, out_features, "
            "has_bias] (two non-negative integers and true/false): the config was edited or damaged; export the "
            "model again with hf_srnets (--save_compact or run_export.py)"
        )
    return entry


def apply_compact_layout(model, layout):
    for path, entry in layout.get("linear", {{}}).items():
        in_features, out_features, bias = check_linear_entry(path, entry)
        parent_path, _, name = path.rpartition(".")
        parent = model.get_submodule(parent_path)
        old = getattr(parent, name)
        with warnings.catch_warnings():  # "Initializing zero-element tensors is a no-op": a layer left with no heads
            warnings.simplefilter("ignore", UserWarning)
            new = nn.Linear(in_features, out_features, bias=bias, device=old.weight.device, dtype=old.weight.dtype)
        setattr(parent, name, new)
    for path, values in layout.get("attributes", {{}}).items():
        module = model.get_submodule(path)
        for name, value in values.items():
            setattr(module, name, value)
    for path in layout.get("eager_attention", []):
        module = model.get_submodule(path)
        module.config = copy.deepcopy(module.config)
        module.config._attn_implementation = "eager"
'''


def _stock_model(model: Any) -> nn.Module:
    """The stock classifier of `model`'s config, on the meta device (no memory, no initialisation)."""
    config = copy.deepcopy(model.config)
    for attr in (LAYOUT_ATTR, "auto_map"):
        if hasattr(config, attr):
            delattr(config, attr)
    with torch.device("meta"):
        return type(model)(config)


def _head_counts(module: nn.Module) -> dict[str, int]:
    """The integer attributes of a module that count heads (`num_attention_heads`, `all_head_size`, `n_heads`: what
    head removal sets, `hf_srnets.compact.heads`); other integers set at construction (an MLP's original width) may
    be stale after units are removed, and the forward does not read them."""
    return {k: v for k, v in vars(module).items() if type(v) is int and "head" in k}


def _runs_eager_alone(module: nn.Module, model: Any) -> bool:
    config = getattr(module, "config", None)
    return (
        config is not None
        and config is not model.config
        and getattr(config, "_attn_implementation", None) == "eager"
        and getattr(model.config, "_attn_implementation", None) != "eager"
    )


def compact_layout(model: Any) -> dict[str, Any]:
    """What differs between `model` and the stock model of its config (module docstring), as JSON values."""
    stock = dict(_stock_model(model).named_modules())
    linear: dict[str, list[Any]] = {}
    attributes: dict[str, dict[str, int]] = {}
    eager: list[str] = []
    for path, module in model.named_modules():
        reference = stock.get(path)
        if reference is None or type(reference) is not type(module):
            raise ValueError(
                f"{type(model).__name__}.{path} is not in the stock model of its config: only heads and FFN units "
                "may be removed for a checkpoint that loads without hf_srnets"
            )
        if isinstance(module, nn.Linear) and module.weight.shape != reference.weight.shape:
            linear[path] = [module.in_features, module.out_features, module.bias is not None]
        changed = {k: v for k, v in _head_counts(module).items() if _head_counts(reference).get(k, v) != v}
        if changed:
            attributes[path] = changed
        if _runs_eager_alone(module, model):
            eager.append(path)
    return {"linear": linear, "attributes": attributes, "eager_attention": eager}


def remote_class_name(model: Any) -> str:
    return CLASS_PREFIX + type(model).__name__


def write_remote_code(model: Any, directory: str) -> bool:
    """After `model.save_pretrained(directory)`: for a compact model, write the modeling file and add the layout
    and `auto_map` to config.json (module docstring); return whether it did. A model whose class transformers
    does not export (a custom one) gets none, since the file imports its stock class from transformers."""
    base = type(model).__name__
    if not is_compact_config(model.config) or not hasattr(transformers, base):
        return False
    name = remote_class_name(model)
    source = MODELING_TEMPLATE.format(base=base, name=name, layout_attr=LAYOUT_ATTR)
    with replaced_file(os.path.join(directory, REMOTE_CODE_FILE)) as f:
        f.write(source)
    path = os.path.join(directory, MODEL_CONFIG_NAME)
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    config[LAYOUT_ATTR] = compact_layout(model)
    config["auto_map"] = {**config.get("auto_map", {}), AUTO_MAP_KEY: f"{REMOTE_CODE_MODULE}.{name}"}
    write_json(path, config, indent=2, sort_keys=True)
    return True


def forget_remote_code(config: Any) -> None:
    """Drop the layout and `auto_map` entry a loaded compact checkpoint carries, so a model saved again (trained,
    shrunk further) never points at a modeling file or layout that is not beside it; `write_remote_code` writes
    them anew."""
    if hasattr(config, LAYOUT_ATTR):
        delattr(config, LAYOUT_ATTR)
    auto_map = getattr(config, "auto_map", None)
    if isinstance(auto_map, dict) and str(auto_map.get(AUTO_MAP_KEY, "")).startswith(REMOTE_CODE_MODULE + "."):
        rest = {k: v for k, v in auto_map.items() if k != AUTO_MAP_KEY}
        if rest:
            config.auto_map = rest
        else:
            delattr(config, "auto_map")


def save_pretrained_model(model: Any, directory: str, **kwargs: Any) -> None:
    """`model.save_pretrained(directory, **kwargs)`, and for a compact model the modeling file and config entries
    that let `AutoModelForSequenceClassification.from_pretrained(directory, trust_remote_code=True)` load it without
    hf_srnets (`write_remote_code`). `hf_srnets.load_pretrained_model` loads either."""
    check_plain_model_argument(model, "save_pretrained_model")
    check_path_argument(directory, "save_pretrained_model", "directory", "pass the folder to save into")
    if os.path.exists(directory) and not os.path.isdir(directory):  # transformers logs it and saves nothing
        raise InputError(f"save_pretrained_model: {os.fspath(directory)} is a file: give a folder (new or existing)")
    forget_remote_code(model.config)  # entries a loaded checkpoint carried: written anew below if still compact
    detach_links(directory)  # save_pretrained writes in place: never through a link into a file kept elsewhere
    model.save_pretrained(directory, **kwargs)
    write_remote_code(model, directory)
