"""`to_semi_structured`: a merged 2:4 model's linear weights as `torch.sparse.to_sparse_semi_structured` tensors.

NVIDIA's sparse tensor cores (compute capability 8.0 and later: A100, H100, H200, ...) multiply a 2:4 matrix (2 of
every 4 consecutive inputs nonzero) at up to twice the dense rate; torch runs them through cuSPARSELt or CUTLASS, in
fp16 or bf16 (int8 too). Measured on an H200 (torch 2.11, cuSPARSELt) for BERT-base's linear shapes (768↔3072 and
768×768 at 4,096 and 32,768 tokens, fp16 and bf16) it ran at 0.02–0.31× dense, i.e. slower; CUTLASS refused sm_90.
Published A100 numbers are 1.1–1.3× at batch ≥ 16. So this export is an option for Ampere GPUs, to be measured per
GPU (`bench/bench_inference.py`), and the compact structured models (`compact_model`) remain the speed path.

Refused, as an `InputError` naming the reason, where it cannot run: torch without the function, a model not on a
CUDA device, a GPU below compute capability 8.0, a dtype other than fp16/bf16, or no weight with the 2:4 pattern.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from ..errors import InputError

SEMI_STRUCTURED_DTYPES = (torch.float16, torch.bfloat16)


def semi_structured_refusal(model: nn.Module) -> str | None:
    """Why this torch, device or dtype cannot run `to_sparse_semi_structured` on `model`; None if it can."""
    convert = getattr(torch.sparse, "to_sparse_semi_structured", None)
    if convert is None:
        return f"torch {torch.__version__} has no torch.sparse.to_sparse_semi_structured (torch >= 2.1 with CUDA)"
    weight = next((m.weight for m in model.modules() if isinstance(m, nn.Linear)), None)
    if weight is None:
        return "the model has no nn.Linear layer"
    if weight.device.type != "cuda":
        return (
            f"2:4 sparse kernels run on NVIDIA GPUs only and the model is on {weight.device.type}: keep the merged "
            "dense checkpoint (or a compact structured one) on this device"
        )
    major, minor = torch.cuda.get_device_capability(weight.device)
    if major < 8:
        return f"the GPU has compute capability {major}.{minor}; 2:4 sparse tensor cores need 8.0 (Ampere) or later"
    if weight.dtype not in SEMI_STRUCTURED_DTYPES:
        return f"the weights are {weight.dtype}; cast the model to float16 or bfloat16 first (model.half())"
    return None


def two_four_break(weight: torch.Tensor) -> str | None:
    """Why the 2-D `weight` does not hold the 2:4 pattern (more than 2 nonzero of 4 consecutive inputs somewhere, or
    an input size that is not a multiple of 4); None when it does."""
    rows, cols = weight.shape
    if cols % 4:
        return f"{cols} inputs, not a multiple of 4"
    broken = int(((weight != 0).reshape(rows, -1, 4).sum(-1) > 2).sum())
    return f"{broken} of its {rows * cols // 4} groups of 4 inputs hold more than 2 nonzero weights" if broken else None


def _is_2_4(weight: torch.Tensor) -> bool:
    return weight.dim() == 2 and two_four_break(weight) is None


def to_semi_structured(model: nn.Module) -> dict[str, Any]:
    """Replace, in place, the weight of every `nn.Linear` of `model` with the 2:4 pattern by its
    `to_sparse_semi_structured` form; returns {"converted": [names], "left_dense": [names]}.

    `model` is a merged model (`SRNetModel.merge_and_unload()` after `--mask_granularity nm` with 2:4), on a CUDA GPU
    of compute capability ≥ 8.0, in fp16 or bf16; otherwise `InputError` says why (module docstring). A layer whose
    shape the kernels refuse (torch's minimum sizes) stays dense and is listed in `left_dense`.
    """
    refusal = semi_structured_refusal(model)
    if refusal is not None:
        raise InputError(f"to_sparse_semi_structured cannot run here: {refusal}.")
    report: dict[str, Any] = {"converted": [], "left_dense": []}
    for name, module in model.named_modules():
        if not isinstance(module, nn.Linear) or not _is_2_4(module.weight):
            continue
        try:
            sparse = torch.sparse.to_sparse_semi_structured(module.weight.detach())
        except (RuntimeError, ValueError):  # a shape below the kernels' minimum: stays dense
            report["left_dense"].append(name)
            continue
        module.weight = nn.Parameter(sparse, requires_grad=False)
        report["converted"].append(name)
    if not report["converted"]:
        raise InputError(
            "to_sparse_semi_structured converted no weight: none has the 2:4 pattern. Search the masks with "
            "--mask_granularity nm --nm_n 2 --nm_m 4 and merge them first."
        )
    return report
