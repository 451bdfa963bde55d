"""`export_compressed_tensors`: a merged element-level or N:M SRNet (a plain checkpoint whose pruned weights are
exactly 0) in the compressed-tensors sparse format: each sparse weight stored as its nonzero values and a bitmask
of where they go, the sparsity config in `config.json`'s `quantization_config`.

Two formats (`--sparsity_format`):
- `bitmask` (compressed-tensors `sparse-bitmask`): per weight `<layer>.compressed` (the nonzero values, row by row),
  `<layer>.bitmask` (1 bit per weight, packed along the input dim), `<layer>.row_offsets` and `<layer>.shape`.
- `2:4` (`sparse-24-bitmask`): for weights with at most 2 nonzero of every 4 consecutive inputs; `<layer>.compressed`
  holds 2 values per group ([out, in/2]), `<layer>.bitmask` which two, `<layer>.shape` ([2, 1]).
- `auto`: 2:4 when every compressed weight holds the pattern, else bitmask.

Which weights: every `nn.Linear` weight with at least `min_sparsity` (10%) exact zeros, which for an SRNet are the
pruned encoder matrices (θ_pr), not the embeddings, LayerNorms or a dense classifier. The sparsity config names
them as llm-compressor does: `targets: ["Linear"]` and the dense Linear layers in `ignore` (or the sparse layers by
name, when they are fewer). Embeddings, norms, biases and ignored layers are stored as they are.

The files are those compressed-tensors 0.14 (the last release with its sparse compressors) writes:
`tests/export/fixtures/compressed_tensors_v0_14/` holds its output, which this module reproduces tensor for tensor.
compressed-tensors 0.15 (April 2026) dropped the sparse compressors, vLLM its Sparse24 kernels (vllm#36799), and
transformers 5 reads no sparsity config; what the installed library still provides is used (the config classes
that validate and spell the sparsity config, the bit packing). `read_compressed_tensors` reads the weights back
(the check after every export: every tensor identical, `torch.equal`), `load_compressed_tensors` the model.

Refused with an `InputError` naming the fix: a compact model (units physically removed: its config cannot say its
shapes to a compressed-tensors reader), a model without sparse weights, `2:4` where a weight breaks the pattern.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import torch
from torch import nn

from ..compact import INTERMEDIATE_SIZES_ATTR, PRUNED_HEADS_ATTR, load_pretrained_model
from ..compact.semi_structured import two_four_break
from ..errors import InputError, MissingInputError, naming_path
from ..resources.auto_loading import auto_from_pretrained
from ..run_files import MODEL_CONFIG_NAME, SAFE_WEIGHTS_NAME, write_json
from .extras import COMPRESSED_TENSORS_EXTRA, MissingExtraError, require
from .files import (
    ExportCheckError,
    check_export_paths,
    check_finite_weights,
    check_number,
    load_tokenizer,
    prepare_output_dir,
    save_config_and_tokenizer,
    write_report,
)
from .formats import ExportFormat, register_export_format

logger = logging.getLogger(__name__)

SPARSITY_FORMATS = ("auto", "bitmask", "2:4")
MIN_SPARSITY = 0.1
LIBRARY_FORMATS = {"bitmask": "sparse-bitmask", "2:4": "sparse-24-bitmask"}  # compressed-tensors' names
FORMAT_PARAMETERS = {
    "bitmask": ("shape", "compressed", "bitmask", "row_offsets"),
    "2:4": ("shape", "compressed", "bitmask"),
}


def compressed_tensors_module(what: str = "--format compressed-tensors") -> Any:
    """compressed_tensors, or the one-line error naming the extra that installs it."""
    (module,) = require(what, COMPRESSED_TENSORS_EXTRA, "compressed_tensors")
    return module


def zero_fraction(weight: torch.Tensor) -> float:
    return float((weight == 0).sum()) / max(1, weight.numel())


def choose_format(targets: dict[str, torch.Tensor], requested: str) -> str:
    """The format to write, "bitmask" or "2:4", for `requested` ("auto": 2:4 when every target holds the pattern);
    `InputError` when "2:4" is asked of a weight that breaks it."""
    if requested not in SPARSITY_FORMATS:
        raise InputError(f"--sparsity_format must be one of {', '.join(SPARSITY_FORMATS)}, got {requested!r}.")
    if requested == "bitmask":
        return requested
    breaks = {name: why for name, weight in targets.items() if (why := two_four_break(weight)) is not None}
    if not breaks:
        return "2:4"
    name, why = next(iter(breaks.items()))
    if requested == "auto":
        logger.info(f"bitmask, not 2:4: {len(breaks)} compressed weights break the 2:4 pattern ({name}: {why})")
        return "bitmask"
    raise InputError(
        f"--sparsity_format 2:4: {len(breaks)} of the {len(targets)} sparse weights break the 2:4 pattern ({name}: "
        f"{why}): use --sparsity_format bitmask (or auto), or prune with --mask_granularity nm --nm_n 2 --nm_m 4"
    )


def _two_four_mask(weight: torch.Tensor) -> torch.Tensor:
    """2 kept positions in every 4 consecutive inputs: the nonzero ones, completed with zeros (the largest |w|, as
    compressed-tensors chooses them, so the bitmask is the library's bit for bit)."""
    rows, cols = weight.shape
    groups = weight.reshape(rows, cols // 4, 4)
    keep = groups.abs().topk(2, dim=-1).indices
    return torch.zeros(groups.shape, dtype=torch.bool).scatter_(-1, keep, True).reshape(rows, cols)


def compress_weight(weight: torch.Tensor, fmt: str, pack_bitmasks: Any) -> dict[str, torch.Tensor]:
    """The compressed tensors of one 2-D weight (names local to its layer: `shape`, `compressed`, `bitmask` and,
    for bitmask, `row_offsets`)."""
    weight = weight.detach().cpu()
    if fmt == "2:4":
        mask = _two_four_mask(weight)
        return {
            "shape": torch.tensor(list(weight.shape)).reshape(-1, 1),
            "compressed": weight[mask].reshape(weight.shape[0], weight.shape[1] // 2),
            "bitmask": pack_bitmasks(mask),
        }
    mask = weight != 0
    counts = mask.sum(dim=-1)
    return {
        "shape": torch.tensor(list(weight.shape)),
        "compressed": weight[mask],
        "bitmask": pack_bitmasks(mask),
        "row_offsets": torch.cumsum(counts, 0) - counts,
    }


def decompress_weight(parts: dict[str, torch.Tensor], unpack_bitmasks: Any) -> torch.Tensor:
    """The dense weight of one layer's compressed tensors (either format: the bitmask says where the values go)."""
    shape = parts["shape"].flatten().tolist()
    mask = unpack_bitmasks(parts["bitmask"], shape)
    dense = torch.zeros(shape, dtype=parts["compressed"].dtype)
    dense[mask] = parts["compressed"].flatten()
    return dense


def compressed_state(
    state: dict[str, torch.Tensor], targets: set[str], fmt: str, pack_bitmasks: Any
) -> dict[str, torch.Tensor]:
    """`state` with each target layer's weight replaced by its compressed tensors; the rest unchanged (a tensor that
    shares memory with an earlier one is copied, as safetensors stores no shared tensors)."""
    out: dict[str, torch.Tensor] = {}
    seen: set[int] = set()
    for key, tensor in state.items():
        layer = key.removesuffix(".weight")
        if key.endswith(".weight") and layer in targets:
            out.update({f"{layer}.{name}": t for name, t in compress_weight(tensor, fmt, pack_bitmasks).items()})
            continue
        tensor = tensor.detach().cpu().contiguous()
        out[key] = tensor.clone() if tensor.data_ptr() in seen else tensor
        seen.add(tensor.data_ptr())
    return out


def sparsity_config(
    library: Any, fmt: str, targets: list[str], linears: dict[str, torch.Tensor], structure: str
) -> dict[str, Any]:
    """The `quantization_config` entry: compressed-tensors' method and version, and its sparsity config (format,
    targets, ignore, global sparsity of the Linear weights, structure) spelled by the library's own config class."""
    from compressed_tensors.base import (
        COMPRESSION_VERSION_NAME,
        QUANTIZATION_METHOD,
        QUANTIZATION_METHOD_NAME,
        SPARSITY_CONFIG_NAME,
        TRANSFORM_CONFIG_NAME,
    )
    from compressed_tensors.config import SparsityCompressionConfig

    dense = sorted(set(linears) - set(targets))
    names, ignore = (["Linear"], dense) if len(targets) >= len(dense) else (sorted(targets), [])
    zeros = sum(int((w == 0).sum()) for w in linears.values())
    config = SparsityCompressionConfig.load_from_registry(
        LIBRARY_FORMATS[fmt],
        targets=names,
        ignore=ignore,
        global_sparsity=zeros / sum(w.numel() for w in linears.values()),
        sparsity_structure=structure,
    )
    return {
        QUANTIZATION_METHOD_NAME: QUANTIZATION_METHOD,
        COMPRESSION_VERSION_NAME: library.__version__,
        SPARSITY_CONFIG_NAME: config.model_dump(),
        TRANSFORM_CONFIG_NAME: {},
    }


def refuse_compact(model_dir: str) -> None:
    """A compact checkpoint (heads or FFN units removed, recorded in its config) is refused: a compressed-tensors
    reader builds the model from the config, which cannot say those shapes, and its pruned units are gone, not 0."""
    from transformers import AutoConfig

    config = auto_from_pretrained(AutoConfig, model_dir)
    recorded = [a for a in (PRUNED_HEADS_ATTR, INTERMEDIATE_SIZES_ATTR) if getattr(config, a, None)]
    if recorded:
        raise InputError(
            f"{model_dir} is a compact model (units physically removed, {recorded[0]} in its {MODEL_CONFIG_NAME}): "
            "compressed-tensors stores a merged model's pruned weights as zeros; export the merged checkpoint "
            "saved without --save_compact, or this one with --format onnx"
        )


def sparse_targets(
    model: nn.Module, model_dir: str, min_sparsity: float
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """(every Linear weight, those with at least `min_sparsity` zeros); `InputError` when none is sparse."""
    linears = {name: m.weight.detach() for name, m in model.named_modules() if isinstance(m, nn.Linear)}
    targets = {name: w for name, w in linears.items() if zero_fraction(w) >= min_sparsity}
    if not targets:
        raise InputError(
            f"{model_dir} has no sparse nn.Linear weight (none with {min_sparsity:.0%} or more exact zeros): the "
            "compressed-tensors sparse formats store a merged element or N:M SRNet (a run's merged/ checkpoint); "
            "export a dense model with --format onnx"
        )
    return linears, targets


def write_compressed_tensors(
    model: nn.Module, tokenizer: Any, output_dir: str, state: dict[str, torch.Tensor], quantization: dict[str, Any]
) -> None:
    """`model.safetensors` (the compressed state), `config.json` with `quantization_config`, the tokenizer."""
    from compressed_tensors.base import QUANTIZATION_CONFIG_NAME
    from safetensors.torch import save_file

    path = os.path.join(output_dir, SAFE_WEIGHTS_NAME)
    with naming_path(path):
        save_file(state, path, metadata={"format": "pt"})
    save_config_and_tokenizer(model, tokenizer, output_dir)
    config_path = os.path.join(output_dir, MODEL_CONFIG_NAME)
    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    config[QUANTIZATION_CONFIG_NAME] = quantization
    write_json(config_path, config, indent=2, sort_keys=True)  # replaced, never written through


def read_compressed_tensors(path: str) -> dict[str, torch.Tensor]:
    """The dense state dict of a checkpoint `export_compressed_tensors` (or compressed-tensors 0.14) wrote: its
    sparsity config parsed by the library's config class, each compressed layer's weight rebuilt from its values
    and bitmask, the other tensors as stored."""
    check_export_paths("read_compressed_tensors", path=path)
    if not os.path.isfile(os.path.join(path, MODEL_CONFIG_NAME)):
        raise MissingInputError(
            f"{path} has no {MODEL_CONFIG_NAME}: give the folder run_export.py --format compressed-tensors wrote"
        )
    compressed_tensors_module("reading a compressed-tensors checkpoint")
    from compressed_tensors.base import QUANTIZATION_CONFIG_NAME, SPARSITY_CONFIG_NAME
    from compressed_tensors.config import SparsityCompressionConfig
    from compressed_tensors.utils import unpack_bitmasks
    from safetensors.torch import load_file

    with open(os.path.join(path, MODEL_CONFIG_NAME), encoding="utf-8") as f:
        recorded = (json.load(f).get(QUANTIZATION_CONFIG_NAME) or {}).get(SPARSITY_CONFIG_NAME)
    if not recorded:
        raise InputError(f"{path}: its {MODEL_CONFIG_NAME} records no compressed-tensors sparsity config")
    config = SparsityCompressionConfig.load_from_registry(recorded["format"], **recorded)
    fmt = {v: k for k, v in LIBRARY_FORMATS.items()}.get(config.format)
    if fmt is None:
        raise InputError(f"{path}: sparsity format {config.format!r} is not one of {sorted(LIBRARY_FORMATS.values())}")
    stored = load_file(os.path.join(path, SAFE_WEIGHTS_NAME))
    layers = {key.removesuffix(".bitmask") for key in stored if key.endswith(".bitmask")}
    compressed = {f"{layer}.{name}" for layer in layers for name in FORMAT_PARAMETERS[fmt]}
    state = {key: t for key, t in stored.items() if key not in compressed}
    for layer in sorted(layers):
        parts = {name: stored[f"{layer}.{name}"] for name in FORMAT_PARAMETERS[fmt]}
        state[f"{layer}.weight"] = decompress_weight(parts, unpack_bitmasks)
    return state


def load_compressed_tensors(path: str) -> nn.Module:
    """The sequence classifier of a compressed-tensors sparse checkpoint, its weights decompressed (eval mode):
    what transformers 5, which reads no sparsity config, cannot load by itself."""
    from compressed_tensors.base import QUANTIZATION_CONFIG_NAME
    from transformers import AutoConfig, AutoModelForSequenceClassification

    state = read_compressed_tensors(path)
    config = auto_from_pretrained(AutoConfig, path)
    if hasattr(config, QUANTIZATION_CONFIG_NAME):
        delattr(config, QUANTIZATION_CONFIG_NAME)
    dtype = next(t.dtype for t in state.values() if t.is_floating_point())
    model = AutoModelForSequenceClassification.from_config(config, dtype=dtype)
    model.load_state_dict(state, strict=True)
    return model.eval()


def check_round_trip(source: dict[str, torch.Tensor], output_dir: str) -> None:
    """`ExportCheckError` unless the checkpoint in `output_dir` reads back to `source`, tensor for tensor."""
    restored = read_compressed_tensors(output_dir)
    missing, extra = sorted(set(source) - set(restored)), sorted(set(restored) - set(source))
    if missing or extra:
        raise ExportCheckError(f"{output_dir}: read back, tensors are missing ({missing[:3]}) or extra ({extra[:3]})")
    differ = [k for k, t in source.items() if t.dtype != restored[k].dtype or not torch.equal(t.cpu(), restored[k])]
    if differ:
        raise ExportCheckError(
            f"{output_dir}: {len(differ)} tensors differ from the model's after reading back: {differ[:3]}"
        )


def _bytes(state: dict[str, torch.Tensor]) -> int:
    return sum(t.numel() * t.element_size() for t in state.values())


def export_compressed_tensors(
    model_dir: str, output_dir: str, *, sparsity_format: str = "auto", min_sparsity: float = MIN_SPARSITY
) -> dict[str, Any]:
    """Write the merged SRNet saved in `model_dir` as a compressed-tensors sparse checkpoint in `output_dir` (module
    docstring), read it back, check every tensor identical, write `export_report.json`; return the report."""
    check_export_paths("export_compressed_tensors", model_dir=model_dir, output_dir=output_dir)
    check_number(min_sparsity, "min_sparsity", 0.0, 1.0, "0.1")
    library = compressed_tensors_module()
    from compressed_tensors.utils import pack_bitmasks

    refuse_compact(model_dir)
    model = load_pretrained_model(model_dir)
    check_finite_weights(model, model_dir)
    linears, targets = sparse_targets(model, model_dir, min_sparsity)
    fmt = choose_format(targets, sparsity_format)
    structure = "2:4" if all(two_four_break(w) is None for w in targets.values()) else "unstructured"
    source = {k: t.detach().cpu() for k, t in model.state_dict().items()}
    start = time.perf_counter()
    state = compressed_state(source, set(targets), fmt, pack_bitmasks)
    try:
        quantization = sparsity_config(library, fmt, list(targets), linears, structure)
    except (KeyError, ValueError) as err:
        raise MissingExtraError(
            f"compressed-tensors {library.__version__} does not know the {LIBRARY_FORMATS[fmt]} format ({err}): "
            "pip install 'hf_srnets[compressed-tensors]'"
        ) from err
    prepare_output_dir(model_dir, output_dir)
    write_compressed_tensors(model, load_tokenizer(model_dir), output_dir, state, quantization)
    seconds = time.perf_counter() - start
    check_round_trip(source, output_dir)
    target_keys = {f"{name}.weight" for name in targets}
    report = {
        "format": "compressed-tensors",
        "source": model_dir,
        "sparsity_format": LIBRARY_FORMATS[fmt],
        "sparsity_structure": structure,
        "seconds": round(seconds, 3),
        "file_bytes": os.path.getsize(os.path.join(output_dir, SAFE_WEIGHTS_NAME)),
        "dense_bytes": _bytes(source),
        "compressed_layers": len(targets),
        "compressed_layers_dense_bytes": _bytes({k: source[k] for k in target_keys}),
        "compressed_layers_bytes": _bytes(state) - _bytes({k: t for k, t in source.items() if k not in target_keys}),
        "global_sparsity": quantization["sparsity_config"]["global_sparsity"],
        "identical_after_reading_back": True,
        "compressed_tensors_version": library.__version__,
    }
    write_report(output_dir, report)
    logger.info(
        f"{output_dir}: {LIBRARY_FORMATS[fmt]}, {len(targets)} layers, {report['file_bytes'] / 1e6:.2f} MB "
        f"(dense {report['dense_bytes'] / 1e6:.2f} MB) in {seconds:.2f} s; identical after reading back"
    )
    return report


@dataclass
class CompressedTensorsOptions:
    """`--format compressed-tensors`'s options (`export_compressed_tensors`'s keyword arguments)."""

    _argument_group_name: ClassVar[str] = "--format compressed-tensors"

    sparsity_format: Literal["auto", "bitmask", "2:4"] = field(
        default="auto",
        metadata={
            "help": "compressed-tensors: auto (2:4 where every sparse weight holds the pattern, else bitmask), "
            "bitmask (sparse-bitmask) or 2:4 (sparse-24-bitmask)."
        },
    )
    min_sparsity: float = field(
        default=MIN_SPARSITY,
        metadata={"help": "compressed-tensors: an nn.Linear weight with at least this share of zeros is compressed."},
    )

    def __post_init__(self) -> None:
        if self.sparsity_format not in SPARSITY_FORMATS:
            raise InputError(
                f"--sparsity_format must be one of {', '.join(SPARSITY_FORMATS)}, got {self.sparsity_format!r}."
            )
        if not 0.0 < self.min_sparsity < 1.0:
            raise InputError(f"--min_sparsity must be in (0, 1), got {self.min_sparsity}.")


register_export_format(
    ExportFormat(
        name="compressed-tensors",
        summary="merged element or N:M SRNets: sparse weights compressed",
        export=export_compressed_tensors,
        require=compressed_tensors_module,
        options=CompressedTensorsOptions,
    )
)
