"""Training precision on the CPU: whether the CPU computes bf16 natively, said in one log line and recorded.

`--bf16` stays the Trainer's flag and the user's choice: hf_srnets never turns it on by itself. On a CPU without
native bf16 (no `avx512_bf16` or `amx_bf16`) the bf16 matmuls of `torch.autocast("cpu")` are emulated, and a MiniLM
training step measured 14x slower than fp32 on such a CPU (an AVX2 AMD EPYC, `bench/bench_bf16_cpu.py`); turning it
on where the CPU has it would also give the same command different numerics on different machines. So a run says
which CPU it has and what `--bf16` would do there, warns when `--bf16` is set on a CPU that emulates it, and records
`precision` and `cpu_bf16` in `all_results.json` and the card, with `cpu`: the CPU's model name and the kernels
torch dispatches to on it (`AVX2`, `AVX512`, ...), since the last digits of a CPU run depend on that kind.
"""

from __future__ import annotations

import logging
from typing import Any

from ..resources.cpu import CPUINFO, cpuinfo_values
from .arguments import training_precision

logger = logging.getLogger(__name__)

NATIVE_BF16_FLAGS = ("amx_bf16", "avx512_bf16")


def cpu_flags(cpuinfo: str = CPUINFO) -> set[str] | None:
    """The instruction-set flags of the first CPU in `cpuinfo` (Linux), or None where there is no such file."""
    values = cpuinfo_values("flags", cpuinfo)
    return set(values[0].split()) if values else None


def cpu_model(cpuinfo: str = CPUINFO) -> str | None:
    """The `model name` of the first CPU in `cpuinfo` (Linux), or None where there is no such file or line."""
    values = cpuinfo_values("model name", cpuinfo)
    return values[0] if values else None


def cpu_kind(model: str | None = None) -> str:
    """The CPU a run computed on: its model name (or `unknown`) and torch's kernel capability on it, e.g.
    `AMD EPYC 9R14 (AVX512)`."""
    import torch

    return f"{model or cpu_model() or 'unknown'} ({torch.backends.cpu.get_cpu_capability()})"


def cpu_bf16(flags: set[str] | None) -> str:
    """`native (<flag>)` for a CPU with bf16 instructions, `emulated` without them, `unknown` without flags."""
    if flags is None:
        return "unknown"
    native = [flag for flag in NATIVE_BF16_FLAGS if flag in flags]
    return f"native ({native[0]})" if native else "emulated"


def cpu_bf16_overrides(given: dict[str, Any]) -> dict[str, Any]:
    """`use_cpu=True` for `--bf16` (or `--bf16_full_eval`) on a machine with no GPU or TPU, where the run is on the CPU
    anyway: the Trainer refuses bf16 without a bf16 GPU unless `use_cpu` is set. An explicit `--use_cpu` is kept, and
    a GPU without bf16 still gets the Trainer's own error."""
    import torch
    from transformers.utils import is_torch_bf16_gpu_available, is_torch_xla_available

    wants_bf16 = given.get("bf16") or given.get("bf16_full_eval")
    accelerator = torch.cuda.is_available() or is_torch_xla_available() or is_torch_bf16_gpu_available()
    return {"use_cpu": True} if wants_bf16 and given.get("use_cpu") is None and not accelerator else {}


def warn_that_bf16_is_emulated() -> None:
    logger.warning(
        "bf16 on a CPU without bf16 instructions (no %s): every bf16 matmul is emulated, and a MiniLM "
        "training step measured 14x slower than fp32 on such a CPU; drop --bf16 to run in fp32",
        " or ".join(NATIVE_BF16_FLAGS),
    )


def warn_if_bf16_is_emulated(device_type: str, flags: set[str] | None = None) -> str:
    """For bf16 on the CPU: warn when the CPU emulates it; return its bf16 support (`cpu_bf16`)."""
    support = cpu_bf16(cpu_flags() if flags is None else flags)
    if device_type == "cpu" and support == "emulated":
        warn_that_bf16_is_emulated()
    return support


def check_precision(args: Any, flags: set[str] | None = None, cpu: str | None = None) -> dict[str, str]:
    """Log what the run computes in and what the CPU supports; return the facts `all_results.json` records
    (`flags` and `cpu` default to this machine's: `cpu_flags()` and `cpu_kind()`)."""
    precision = training_precision(args)
    if args.device.type != "cpu":
        return {"precision": precision}
    support = cpu_bf16(cpu_flags() if flags is None else flags)
    if precision == "bf16" and support == "emulated":
        warn_that_bf16_is_emulated()
    elif precision == "fp32" and support.startswith("native"):
        logger.info(
            "Training in fp32 on a CPU with bf16 instructions (%s): --bf16 true runs forward passes in bf16 "
            "autocast, measured 1.7-3.3x faster per MiniLM training step and 2-3x in evaluation on such a CPU "
            "(bench/bench_bf16_cpu.py), with other last digits; masks stay exact either way",
            support,
        )
    else:
        logger.info("Training in %s on the CPU (bf16 instructions: %s)", precision, support)
    return {"precision": precision, "cpu_bf16": support, "cpu": cpu or cpu_kind()}
