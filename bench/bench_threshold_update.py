#!/usr/bin/env python
"""What mask training adds to a step: the threshold update (Algorithm 2, lines 14-16) and the masked forward/backward.

`bench/bench_trainer_overhead.py` measures the whole step against the plain `Trainer`; this script splits
mask-PoE's extra time into its two sources, on BERT-shaped weights (random, `--shape base` is BERT-base's 72
linear layers of the encoder):

1. **The threshold update.** `update_thresholds` on the SRNet (every `threshold_update_interval` steps, so its
   cost per step is its time divided by the interval), local and global scope; and the selection primitive it
   rests on, timed alone on the largest layer's scores: `kthvalue`, a full `sort`, and `topk` of the k smallest.
   Each primitive's k-th value is checked against the others (they must agree exactly).
2. **The masked forward and backward.** One forward and backward of the model on a fixed batch, plain vs wrapped
   in `SRNetModel` (scores trainable, weights frozen), in the given precision (autocast).

    python bench/bench_threshold_update.py --device cuda --shape base --precision fp16 --json out.json
    python bench/bench_threshold_update.py --shape tiny --repeats 2            # the suite's CPU run

Prints milliseconds (median of `--repeats`, each after `--warmup` untimed calls; CUDA synchronised around each).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_trainer_overhead import SHAPES, machine  # noqa: E402  (this folder: the same shapes and machine facts)


def timed_ms(fn: Callable[[], Any], device: str, warmup: int, repeats: int) -> float:
    import torch

    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times)


def selection_primitives(flat: Any, k: int) -> dict[str, Callable[[], Any]]:
    """The k-th smallest value (1-based) of a flat tensor by three primitives."""
    return {
        "kthvalue": lambda: flat.kthvalue(k).values,
        "sort": lambda: flat.sort().values[k - 1],
        "topk": lambda: flat.topk(k, largest=False, sorted=False).values.max(),
    }


def build_srnet(args: argparse.Namespace) -> tuple[Any, Any]:
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    from hf_srnets.masking import SRNetModel
    from hf_srnets.pruning import ThresholdConfig

    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, num_labels=3, **SHAPES[args.shape])
    plain = BertForSequenceClassification(config).to(args.device)
    wrapped = SRNetModel(BertForSequenceClassification(config), ThresholdConfig(sparsity=0.5, mask_init="soft"))
    return plain, wrapped.to(args.device)


def selection_times(args: argparse.Namespace, srnet: Any) -> dict[str, Any]:
    from hf_srnets.pruning.threshold.thresholds import update_thresholds

    scores = [layer.mask_scores for layer in srnet.masked_layers().values()]
    largest = max(scores, key=lambda s: s.numel()).detach().reshape(-1)
    k = largest.numel() // 2 + 1
    primitives = selection_primitives(largest, k)
    values = {name: float(fn()) for name, fn in primitives.items()}
    if len(set(values.values())) != 1:
        raise SystemExit(f"error: the primitives disagree on the k-th smallest value: {values}")
    out: dict[str, Any] = {
        "layers": len(scores),
        "scores": sum(s.numel() for s in scores),
        "largest_layer": largest.numel(),
        "primitive_ms": {name: timed_ms(fn, args.device, args.warmup, args.repeats) for name, fn in primitives.items()},
    }
    for scope in ("local", "global"):
        srnet.srnet_config.sparsity_scope = scope
        out[f"update_{scope}_ms"] = timed_ms(lambda: update_thresholds(srnet, 0.5), args.device, 1, args.repeats)
    return out


def step_times(args: argparse.Namespace, plain: Any, srnet: Any) -> dict[str, float]:
    import torch

    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(1000, 2000, (args.batch_size, args.max_length), generator=generator).to(args.device)
    labels = torch.randint(0, 3, (args.batch_size,), generator=generator).to(args.device)
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(args.precision)

    def step(model: Any) -> Callable[[], None]:
        def run() -> None:
            with torch.autocast(args.device, dtype=dtype, enabled=dtype is not None):
                loss = model(input_ids=ids, labels=labels).loss
            loss.backward()
            model.zero_grad(set_to_none=True)

        return run

    return {
        "plain_forward_backward_ms": timed_ms(step(plain), args.device, args.warmup, args.repeats),
        "masked_forward_backward_ms": timed_ms(step(srnet), args.device, args.warmup, args.repeats),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="tiny")
    parser.add_argument("--precision", choices=["fp32", "fp16", "bf16"], default="fp32")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--max_length", type=int, default=128)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None, help="write the settings, machine and results here")
    args = parser.parse_args(argv)

    plain, srnet = build_srnet(args)
    result = {
        "settings": vars(args),
        "machine": machine(args.device),
        "selection": selection_times(args, srnet),
        "step": step_times(args, plain, srnet),
    }
    print(json.dumps(result, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
