"""Mask files: coding (near-entropy `codec`, or the old bit-packing), tensor checksums, checked writing and reading,
the base-weights fingerprint, Hub resolution.

`srnet_config.json` records the sha256 of every tensor of `srnet_masks.safetensors` (`tensor_checksums`) and, under
the key `srnet_config.json`, of its own fields that say what the masks are (`config_checksum`: all but the checksums
and the fields naming where things came from, which an upload rewrites), so an edited `sparsity`, granularity or
target list is refused on load instead of being believed.

Every writer of a mask directory goes through `save_mask_files` and every reader of its masks through
`decode_masks`, so the encoding `srnet_config.json` records (`mask_encoding`) is honoured in one place.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn

from ..errors import InputError, MissingInputError, naming_path
from ..resources.model_location import looks_like_path
from ..run_files import detach_links
from .base import CONFIG_NAME, MASKS_NAME, PruningConfig
from .mask_codec import decode_mask, encode_mask

MASK_ENCODING = "gap-lzma-v1"  # `mask_encoding` of files `save_mask_files` writes (hf_srnets.pruning.mask_codec)
BITPACKED = None  # `mask_encoding` of files written before it was recorded: `pack_mask`, 1 bit per weight

CONFIG_KEY = CONFIG_NAME  # the `tensor_checksums` key of the config's own checksum
# fields the config checksum leaves out: the checksums themselves, and where the masks and files came from (local
# paths, which `hub_upload.make_config_portable` rewrites for an upload)
UNCHECKED_FIELDS = ("tensor_checksums", "base_model_name_or_path", "ticket_source", "random_like")

logger = logging.getLogger(__name__)


def pack_mask(mask: torch.Tensor) -> torch.Tensor:
    """Bit-pack a bool mask into uint8 (8 weights per byte)."""
    return torch.from_numpy(np.packbits(mask.detach().cpu().reshape(-1).numpy().astype(np.bool_)))


def unpack_mask(packed: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    """Inverse of `pack_mask`. Refuses a tensor that is not uint8 or not exactly ⌈n/8⌉ bytes for `shape`.

    (`np.unpackbits` would pad a short tensor with zeros, i.e. silently prune the weights it lacks.)
    """
    n = math.prod(shape)
    if packed.dtype != torch.uint8:
        raise ValueError(f"A packed mask must be uint8, got {packed.dtype}")
    if packed.numel() != math.ceil(n / 8):
        raise ValueError(
            f"A packed mask for shape {tuple(shape)} ({n} weights) has {math.ceil(n / 8)} bytes, got {packed.numel()}"
        )
    bits = np.unpackbits(packed.reshape(-1).numpy(), count=n).astype(np.bool_)
    return torch.from_numpy(bits).reshape(shape)


def tensor_checksum(tensor: torch.Tensor) -> str:
    """sha256 over a tensor's dtype, shape and bytes: what `srnet_config.json` records for each saved tensor."""
    digest = hashlib.sha256(f"{tensor.dtype}{tuple(tensor.shape)}".encode())
    digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def config_checksum(config: PruningConfig) -> str:
    """sha256 of the config's fields that say what the masks are (all but `UNCHECKED_FIELDS`), as sorted JSON."""
    fields = {k: v for k, v in config.to_dict().items() if k not in UNCHECKED_FIELDS}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def weights_fingerprint(model: nn.Module, names: list[str]) -> str:
    """sha256 over the named linear layers' weights (float32, C order): identifies the base weights.

    A masked layer counts with its frozen `base_layer`'s weight (`MaskedLayer.weight`), so masked and plain models
    agree.
    """
    digest = hashlib.sha256()
    for name in sorted(names):
        module = model.get_submodule(name)
        weight = module.weight
        digest.update(name.encode())
        digest.update(weight.detach().float().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:16]


def _read_masks_file(path: str, model_id: str | os.PathLike) -> dict[str, torch.Tensor]:
    if not os.path.isfile(path):
        raise MissingInputError(
            f"{model_id} has {CONFIG_NAME} but no {MASKS_NAME}: the mask directory is incomplete; save or download "
            "the masks again, or point to the complete mask directory."
        )
    try:
        return load_file(path)
    except Exception as err:  # truncated or overwritten file: safetensors cannot parse it
        raise InputError(f"{path} is damaged and cannot be read ({err}); save or download the masks again.") from err


def check_mask_encoding(config: PruningConfig, path: str) -> None:
    """`config.mask_encoding` is one this hf_srnets reads (`MASK_ENCODING`, or None: bit-packed); `path` is the
    masks file, whose directory's config records it."""
    if config.mask_encoding not in (BITPACKED, MASK_ENCODING):
        raise InputError(
            f"{os.path.join(os.path.dirname(path), CONFIG_NAME)} records mask_encoding={config.mask_encoding!r}, "
            f"which this hf_srnets cannot read (it reads {MASK_ENCODING!r} and bit-packed masks): upgrade hf_srnets."
        )


def _check_packed_masks(path: str, tensors: dict[str, torch.Tensor], config: PruningConfig) -> None:
    """Every mask `config.module_shapes` lists is present and a 1-d uint8 tensor; bit-packed ones have exactly
    ⌈n/8⌉ bytes. (An encoded mask's length depends on its content: `decode_masks` checks it decodes to n.)"""
    check_mask_encoding(config, path)
    packed_format = config.mask_encoding is BITPACKED
    for name, shape in config.module_shapes.items():
        if name not in tensors:
            raise InputError(
                f"{path} has no mask for {name!r} that {CONFIG_NAME} lists: the file is incomplete or belongs to "
                "another run; save or download the masks again."
            )
        packed = tensors[name]
        expected = math.ceil(math.prod(shape) / 8)
        if packed.dtype != torch.uint8 or packed.dim() != 1:
            what = (
                f"a bit-packed mask is a 1-d uint8 tensor ({expected} bytes)"
                if packed_format
                else (f"an encoded mask ({MASK_ENCODING}) is a 1-d uint8 tensor")
            )
            raise InputError(
                f"The mask {name!r} in {path} is a {packed.dtype} tensor of shape {tuple(packed.shape)}; "
                f"{what}. The file was not written by SRNetModel.save_pretrained or is damaged."
            )
        if packed_format and packed.numel() != expected:
            raise InputError(
                f"The mask {name!r} in {path} has {packed.numel()} bytes, but the layer's shape {tuple(shape)} needs "
                f"{expected}: the file is truncated or damaged; save or download the masks again."
            )


def read_checked_config(directory: str | os.PathLike) -> PruningConfig:
    """`srnet_config.json` of a mask directory, refused if its fields no longer match the checksum it recorded when
    saved (files written before it was recorded load unchecked)."""
    config = PruningConfig.from_pretrained(directory)
    check_mask_encoding(config, os.path.join(str(directory), MASKS_NAME))  # a newer hf_srnets's file: upgrade
    recorded = config.tensor_checksums.get(CONFIG_KEY)
    if recorded is None or recorded == config_checksum(config):
        return config
    config_path = os.path.join(str(directory), CONFIG_NAME)
    raise InputError(
        f"{config_path} was changed after the masks were saved: its fields (sparsity {config.sparsity}, "
        f"granularity {config.mask_granularity}, targets, shapes, ...) no longer match the checksum it recorded, so "
        "they may not describe the masks in "
        f"{MASKS_NAME}. Restore the file as saved, or save the masks again (what the masks are comes from the masks: "
        "a different sparsity needs a new search)."
    )


def _check_checksums(path: str, tensors: dict[str, torch.Tensor], config: PruningConfig) -> None:
    """Every tensor matches the checksum `srnet_config.json` records, and no tensor is unrecorded."""
    for key, checksum in config.tensor_checksums.items():
        if key == CONFIG_KEY:
            continue
        if key not in tensors:
            raise InputError(f"{path} lacks the tensor {key!r} that {CONFIG_NAME} records: the file is incomplete.")
        if tensor_checksum(tensors[key]) != checksum:
            raise InputError(
                f"The tensor {key!r} in {path} does not match the checksum in {CONFIG_NAME}: the file is damaged "
                "(or was changed after saving). Save or download the masks again."
            )
    unrecorded = sorted(set(tensors) - set(config.tensor_checksums) - {CONFIG_KEY})
    if unrecorded:
        raise InputError(
            f"{path} holds tensors that {CONFIG_NAME} does not record, e.g. {unrecorded[0]!r}: "
            "the two files do not belong together."
        )


def load_checked_tensors(directory: str, config: PruningConfig, model_id: str | os.PathLike) -> dict[str, torch.Tensor]:
    """Read `srnet_masks.safetensors` and check it against the config: every mask present, uint8, of the
    right length, and (for files that record them) every tensor's checksum. Raise `ValueError` naming the
    file and the key otherwise."""
    path = os.path.join(directory, MASKS_NAME)
    tensors = _read_masks_file(path, model_id)
    _check_packed_masks(path, tensors, config)
    if not config.tensor_checksums:
        logger.warning(
            f"{path} was written without checksums (an older hf_srnets): the masks are loaded unverified. "
            "Save them again with SRNetModel.save_pretrained to record checksums."
        )
        return tensors
    _check_checksums(path, tensors, config)
    return tensors


def resolve_directory(
    model_id: str | os.PathLike, revision: str | None, token: str | None, cache_dir: str | None = None
) -> str:
    """A local directory as is; otherwise a Hub snapshot (downloaded, or from the local cache when offline)."""
    if os.path.isdir(model_id):
        return str(model_id)
    if os.path.exists(model_id):
        raise InputError(f"{os.fspath(model_id)} is a file: give the folder the masks were saved into")
    if looks_like_path(os.fspath(model_id)):
        raise MissingInputError(
            f"{os.fspath(model_id)} does not exist: give the folder SRNetModel.save_pretrained wrote (with "
            f"{CONFIG_NAME}), or a Hub repo id (org/name)"
        )
    from huggingface_hub import snapshot_download

    kwargs = {
        "revision": revision,
        "token": token,
        "cache_dir": cache_dir,
        "allow_patterns": ["*.json", "*.safetensors", "*.md"],
    }
    try:
        return snapshot_download(str(model_id), **kwargs)
    except Exception as err:  # offline, missing repo, auth: fall back to a cached snapshot if there is one
        try:
            return snapshot_download(str(model_id), local_files_only=True, **kwargs)
        except Exception:
            raise OSError(
                f"{model_id!r} is not a local directory, could not be downloaded from the Hub ({err}) and is not in "
                "the local Hub cache. Check the path, or the repo id and your connection/token."
            ) from err


def encode_masks(masks: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Each bool mask (True = kept) as the 1-d uint8 tensor `codec.encode_mask` makes (`MASK_ENCODING`), several
    in torch's threads (at most 8: LZMA and numpy release the GIL; each mask is coded alone, so the bytes do not
    depend on the threads)."""
    workers = min(8, torch.get_num_threads(), max(1, len(masks)))
    if workers == 1:
        return {name: encode_mask(mask) for name, mask in masks.items()}
    with ThreadPoolExecutor(workers) as pool:
        return dict(zip(masks, pool.map(encode_mask, masks.values()), strict=True))


def save_mask_files(
    directory: str | os.PathLike,
    config: PruningConfig,
    masks: dict[str, torch.Tensor],
    extra: dict[str, torch.Tensor] | None = None,
) -> PruningConfig:
    """Write a mask directory: `srnet_masks.safetensors` (the encoded masks, keyed by module, and the `extra`
    tensors, e.g. a trained classifier or l0's log α) and `srnet_config.json` (a copy of `config` recording
    `mask_encoding` and the sha256 of every tensor and of its own fields). Returns the config written. Two saves of
    the same masks are byte-identical."""
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise InputError(
            f"{os.fspath(directory)} is a file: masks are saved into a folder ({CONFIG_NAME} and {MASKS_NAME}): give "
            "a folder path (new or existing)"
        )
    os.makedirs(directory, exist_ok=True)
    detach_links(directory)  # save_pretrained and save_file write in place: never through a link
    tensors = encode_masks(masks)
    tensors.update(extra or {})
    checksums = {key: tensor_checksum(tensor) for key, tensor in sorted(tensors.items())}
    written = dataclasses.replace(config, tensor_checksums=checksums, mask_encoding=MASK_ENCODING)
    written.tensor_checksums[CONFIG_KEY] = config_checksum(written)
    with naming_path(os.path.join(directory, CONFIG_NAME)):  # a full disk: an OSError naming the file
        written.save_pretrained(directory)
    # one metadata key only: safetensors writes the metadata map in a random order, so a second key would make
    # two saves of the same masks differ byte for byte (the shapes are in srnet_config.json)
    with naming_path(os.path.join(directory, MASKS_NAME)):
        save_file(tensors, os.path.join(directory, MASKS_NAME), metadata={"format": "pt"})
    return written


def decode_masks(tensors: dict[str, torch.Tensor], config: PruningConfig, path: str) -> dict[str, torch.Tensor]:
    """The bool masks (True = kept) of every module `config.module_shapes` lists, decoded as `config.mask_encoding`
    says (None: bit-packed). `tensors` come from `load_checked_tensors`; a mask that does not decode to exactly its
    shape's n entries raises `ValueError` naming `path` and the module."""
    check_mask_encoding(config, path)
    decode = unpack_mask if config.mask_encoding is BITPACKED else decode_mask
    masks = {}
    for name, shape in config.module_shapes.items():
        try:
            masks[name] = decode(tensors[name], tuple(shape))
        except ValueError as err:
            raise InputError(
                f"The mask {name!r} in {path} cannot be decoded ({err}): the file is truncated or damaged, or belongs "
                "to another model; save or download the masks again."
            ) from err
    return masks


def read_mask_dir(directory: str | os.PathLike) -> tuple[PruningConfig, dict[str, torch.Tensor]]:
    """The config and the decoded bool masks of a local mask directory, checked (`load_checked_tensors`)."""
    config = read_checked_config(directory)
    tensors = load_checked_tensors(str(directory), config, directory)
    return config, decode_masks(tensors, config, os.path.join(str(directory), MASKS_NAME))
