"""PyTorch's dynamic INT8 `Linear` layers for a saved classifier (issue 71): `run_glue_sparse.py --do_eval
--quantize int8` and `bench/bench_runtimes.py --runtimes torch-int8`.

`quantize_torch_int8` replaces every `nn.Linear` of a dense, merged or compact model by
`torch.ao.nn.quantized.dynamic.Linear`: int8 weights, symmetric, one scale per output channel
(`per_channel_dynamic_qconfig`); activations quantized at run time from each batch's range; products in the
quantized engine's integer kernels (`torch.backends.quantized.engine`: x86/fbgemm, VNNI where the CPU has it).
Embeddings, LayerNorm, softmax and the attention products stay float32. Quantizing takes about a second, so the
float checkpoint stays the artifact and the model is quantized where it is loaded (a saved quantized state dict
would hold the engine's packed weights, tied to one torch build and engine).

Why `torch.ao` and not its successor: torch 2.13 marks `torch.ao.quantization` deprecated in favour of torchao's
`quantize_`, but torchao 0.18's `Int8DynamicActivationInt8WeightConfig` runs eager MiniLM on this project's CPU at
1.0x float32 (measured at b32 x 128, one thread) against 2.2x for `torch.ao`'s dynamic Linear, whose kernels are
what a CPU user gains from. The deprecation warnings of that call are silenced here, once, and named in the docs.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch
from torch import nn

from ..errors import InputError
from .quantize import INTEGER_FLAGS, cpu_flags

TORCH_INT8_METHOD = "torch.ao.quantization.quantize_dynamic"


def masked_layers(model: nn.Module) -> list[str]:
    """The names of the modules that apply a mask to a frozen `base_layer` (an unmerged SRNet's adapters)."""
    return [name for name, module in model.named_modules() if hasattr(module, "base_layer")]


def quantize_torch_int8(model: nn.Module) -> tuple[nn.Module, dict[str, Any]]:
    """`model` (in eval mode, float32) with dynamic INT8 `Linear` layers, in place; and the settings, for the run's
    results. An SRNet whose masks are not merged is refused: quantizing its base layers would drop the masks."""
    adapters = masked_layers(model)
    if adapters:
        raise InputError(
            f"--quantize int8 takes a dense, merged or compact model, and this one applies masks in {len(adapters)} "
            f"layers (e.g. {adapters[0]}): give the run's merged/ folder (--save_merged), or merge it first "
            "(SRNetModel.merge_and_unload)"
        )
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    linears = sum(isinstance(module, nn.Linear) for module in model.modules())
    with warnings.catch_warnings():  # torch.ao's deprecation notices (module docstring)
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        quantize_dynamic(model.float().eval(), {nn.Linear: per_channel_dynamic_qconfig}, torch.qint8, inplace=True)
    return model, {
        "method": TORCH_INT8_METHOD,
        "weights": "int8, symmetric, per output channel",
        "activations": "uint8, per tensor, range of each batch at run time",
        "layers": linears,
        "engine": torch.backends.quantized.engine,
        "torch": torch.__version__,
        "cpu_integer_instructions": [flag for flag in INTEGER_FLAGS if flag in cpu_flags()],
    }
