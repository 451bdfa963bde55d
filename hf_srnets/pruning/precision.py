"""Mask parameters that stay float32 when the model around them is cast to fp16 or bf16.

A mask's exactness rests on comparing real-valued scores with a threshold: m = 1[m̂ ≥ φ] with φ chosen so that
exactly ⌊s·n⌋ entries are pruned (Win-win §3.2.2, Eq. 1), or the hard-concrete gate of log α (Robust Tickets
Eq. 1-5). In fp16 (10 mantissa bits) or bf16 (7) many distinct scores round to the same value and small updates
of m̂ (lr · ∂L/∂m̂) vanish, so the selected set and the count of zeros would change with the dtype. The rule
kept here: scores, log α and thresholds are float32 always; only the frozen weight path (W, m ⊙ W, the
activations) runs in the compute dtype.

`model.half()`, `model.bfloat16()`, `model.to(dtype)` (and so the Trainer's `--fp16_full_eval`/`--bf16_full_eval`
and DeepSpeed's fp16 cast, which call `Module.half()`) all go through `nn.Module._apply`; `KeepsFloat32._apply`
lets such a call move the tensors it names to another device but not change their dtype. Autocast
(`--fp16`/`--bf16` training) never casts parameters: there the float32 path needs no help.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn


class KeepsFloat32:
    """Mixin for an `nn.Module` whose own parameters/buffers named in `float32_tensors` keep their dtype (float32).

    Put it before `nn.Module` in the bases, e.g. ``class MaskedLinear(KeepsFloat32, MaskedLayer)`` with
    ``float32_tensors = ("mask_scores", "threshold")``. A cast applied to the module (`half()`, `to(dtype)`, ...)
    moves those tensors (and their gradients) to the device the cast asks for without changing their values;
    every other tensor, and every child module (the frozen `base_layer`), is cast as usual.
    """

    float32_tensors: tuple[str, ...] = ()

    def _protected_ids(self) -> set[int]:
        module: nn.Module = self  # type: ignore[assignment]
        ids: set[int] = set()
        for name in self.float32_tensors:
            tensor = module._parameters.get(name, module._buffers.get(name))
            if tensor is None:
                raise AttributeError(f"{type(self).__name__}.float32_tensors names {name!r}, not a parameter/buffer")
            ids.add(id(tensor))
            if tensor.grad is not None:
                ids.add(id(tensor.grad))
        return ids

    def _apply(self, fn: Callable[[torch.Tensor], torch.Tensor], recurse: bool = True) -> nn.Module:
        protected = self._protected_ids()

        def keep_dtype(tensor: torch.Tensor) -> torch.Tensor:
            applied = fn(tensor)
            if id(tensor) in protected and applied.dtype != tensor.dtype:
                return tensor.to(device=applied.device)  # the move, without the cast
            return applied

        return super()._apply(keep_dtype, recurse)  # type: ignore[misc]


def float32_tensor_names(module: nn.Module) -> list[str]:
    """The qualified names of all parameters and buffers that `KeepsFloat32` layers in `module` keep float32."""
    names: list[str] = []
    for prefix, sub in module.named_modules():
        if isinstance(sub, KeepsFloat32):
            names.extend(f"{prefix}.{name}" if prefix else name for name in sub.float32_tensors)
    return names
