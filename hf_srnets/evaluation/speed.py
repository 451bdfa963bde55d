"""Inference speed of saved models against the dense one: throughput and latency per batch size, alternating.

`measure_speed(models, ...)` times each model's forward pass on the same seeded inputs (random token ids of one
length, attention mask all ones: an encoder's cost depends on the shape, not the tokens) at each batch size. Each
round runs every model once per batch size, in an order that rotates by one each round, so load drift on the
machine hits all models alike; one untimed warm-up forward per model and batch size comes first. Throughput is
examples/s over a round's `batches` forwards, the median over rounds; latency is the median time of one forward
(ms). `×dense` is the reference model's time over this model's (above 1: faster), for both. On CUDA the clock
waits for the GPU (`torch.cuda.synchronize`). `bench/bench_speed.py` is the command line.
"""

from __future__ import annotations

import platform
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn
from transformers import AutoConfig

from ..compact.loading import architecture_from_config, load_pretrained_model
from ..errors import InputError
from ..resources.auto_loading import auto_from_pretrained
from ..resources.cpu import cpuinfo_values

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


@dataclass(frozen=True)
class SpeedRow:
    """One model at one batch size: examples/s and ms per forward, and both relative to the reference model."""

    model: str
    batch_size: int
    examples_per_s: float
    latency_ms: float
    throughput_vs_dense: float
    latency_vs_dense: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def cpu_name() -> str:
    """The CPU's model name and logical CPU count (from /proc/cpuinfo), else what `platform` knows."""
    names = cpuinfo_values("model name") or []
    return f"{names[0]} ({len(names)} logical CPUs)" if names else platform.processor() or "unknown"


def load_for_speed(path: str, device: str, dtype: str, *, shapes_only: bool = False) -> nn.Module:
    """A saved (merged, compact or plain) classifier on `device` in `dtype`, in eval mode; `InputError` for an
    unknown dtype, a CUDA device without CUDA, or float16 on CPU. With `shapes_only`, a classifier of the shapes its
    config.json records (`path` the folder or that file; a compact config's removed heads and FFN widths too,
    `architecture_from_config`) with fresh weights: speed depends on the shapes, not the values, so a model whose
    weights stayed elsewhere can still be timed."""
    if dtype not in DTYPES:
        raise InputError(f"--dtype must be one of {sorted(DTYPES)}, got {dtype!r}")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise InputError(f"--device {device}: this torch sees no CUDA GPU; use --device cpu")
    if device == "cpu" and dtype == "float16":
        raise InputError("--dtype float16 on CPU has no fast kernels in torch: use float32 or bfloat16 on CPU")
    model = (
        architecture_from_config(auto_from_pretrained(AutoConfig, path)) if shapes_only else load_pretrained_model(path)
    )
    return model.to(device=device, dtype=DTYPES[dtype]).eval()


def random_batch(vocab_size: int, batch_size: int, length: int, device: str, seed: int = 0) -> dict[str, torch.Tensor]:
    """Seeded token ids in [5, vocab) of shape (batch, length) with an all-ones attention mask."""
    generator = torch.Generator().manual_seed(seed + batch_size)
    ids = torch.randint(5, vocab_size, (batch_size, length), generator=generator)
    return {"input_ids": ids.to(device), "attention_mask": torch.ones_like(ids).to(device)}


def _timer(device: str) -> Callable[[], float]:
    def now() -> float:
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        return time.perf_counter()

    return now


@torch.no_grad()
def _time_forwards(model: nn.Module, batch: Mapping[str, torch.Tensor], batches: int, now: Callable[[], float]) -> list:
    times = []
    for _ in range(batches):
        start = now()
        model(**batch)
        times.append(now() - start)
    return times


def measure_speed(
    models: Mapping[str, nn.Module],
    batch_sizes: Sequence[int],
    *,
    reference: str,
    length: int = 128,
    rounds: int = 3,
    batches: int = 4,
    device: str = "cpu",
    seed: int = 0,
) -> list[SpeedRow]:
    """Rows per (model, batch size) in the order of `models` then `batch_sizes` (module docstring); `reference`
    names the model the ratios divide by (the dense one)."""
    if reference not in models:
        raise ValueError(f"reference {reference!r} is not among the models {list(models)}")
    vocab = min(getattr(m.config, "vocab_size", 1000) for m in models.values())
    inputs = {b: random_batch(vocab, b, length, device, seed) for b in batch_sizes}
    now, names = _timer(device), list(models)
    for name in names:
        for size in batch_sizes:
            _time_forwards(models[name], inputs[size], 1, now)  # warm-up
    round_times: dict[tuple[str, int], list[float]] = {(n, b): [] for n in names for b in batch_sizes}
    forwards: dict[tuple[str, int], list[float]] = {(n, b): [] for n in names for b in batch_sizes}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            for size in batch_sizes:
                times = _time_forwards(models[name], inputs[size], batches, now)
                round_times[(name, size)].append(sum(times))
                forwards[(name, size)].extend(times)
    return _rows(names, batch_sizes, reference, batches, round_times, forwards)


def _rows(
    names: list[str],
    batch_sizes: Sequence[int],
    reference: str,
    batches: int,
    round_times: dict[tuple[str, int], list[float]],
    forwards: dict[tuple[str, int], list[float]],
) -> list[SpeedRow]:
    rows = []
    for name in names:
        for size in batch_sizes:
            throughput = size * batches / statistics.median(round_times[(name, size)])
            latency = statistics.median(forwards[(name, size)])
            dense_throughput = size * batches / statistics.median(round_times[(reference, size)])
            dense_latency = statistics.median(forwards[(reference, size)])
            rows.append(
                SpeedRow(name, size, throughput, 1000 * latency, throughput / dense_throughput, dense_latency / latency)
            )
    return rows


def speed_table(rows: Sequence[SpeedRow]) -> str:
    """The rows as aligned text: model, batch, examples/s, ×dense, ms per forward, ×dense."""
    width = max(len("model"), *(len(r.model) for r in rows))
    lines = [f"{'model':<{width}}  batch  examples/s  ×dense  latency ms  ×dense"]
    for r in rows:
        lines.append(
            f"{r.model:<{width}}  {r.batch_size:>5}  {r.examples_per_s:>10.1f}  {r.throughput_vs_dense:>6.2f}  "
            f"{r.latency_ms:>10.2f}  {r.latency_vs_dense:>6.2f}"
        )
    return "\n".join(lines)
