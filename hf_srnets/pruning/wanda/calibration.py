"""Calibration for one-shot pruning: ‖X_j‖₂ of every masked layer's inputs over the tokens of a few training batches.

`InputNorms` hooks each masked layer (its input is its `base_layer`'s); padding positions (attention mask 0) are left
out, so the norm runs over the real tokens of the calibration examples only (the classifier's pooled input has one
row per example).
All layers are measured in one pass of the dense model, not block by block on the outputs of already pruned blocks as
in Wanda's reference code; the selection itself is the paper's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import torch
from torch import nn

from ..sharding import all_reduce_sum

MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class InputNorms:
    """Within `with InputNorms(layers) as norms:`, accumulate Σ_tokens X_j² of each `nn.Linear`'s input; `norms()`
    gives ‖X_j‖₂ per layer name. `attention_mask` (B, T), when set, weights the tokens (0 drops padding)."""

    def __init__(self, layers: Mapping[str, nn.Module]) -> None:
        self.layers = dict(layers)
        self.squares = {name: torch.zeros(layer.in_features, dtype=torch.float64) for name, layer in layers.items()}
        self.calls = dict.fromkeys(layers, 0)
        self.attention_mask: torch.Tensor | None = None
        self.handles: list[Any] = []

    def _hook(self, name: str) -> Any:
        def hook(module: nn.Module, args: tuple) -> None:
            x = args[0].detach().double()
            mask = self.attention_mask
            if mask is not None and x.dim() == 3 and tuple(x.shape[:2]) == tuple(mask.shape):
                x = x * mask.to(x.device, x.dtype)[..., None]
            self.squares[name] += x.reshape(-1, x.shape[-1]).pow(2).sum(dim=0).cpu()
            self.calls[name] += 1

        return hook

    def __enter__(self) -> InputNorms:
        self.handles = [layer.register_forward_pre_hook(self._hook(n)) for n, layer in self.layers.items()]
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles = []

    def sum_over_processes(self) -> None:
        """Add up the statistics of every process (each calibrated on its own batches: DDP, FSDP), so that all of
        them choose the same masks; nothing in one process."""
        for name, squares in self.squares.items():
            all_reduce_sum(squares)
            self.calls[name] = int(all_reduce_sum(torch.tensor(self.calls[name])))

    def norms(self) -> dict[str, torch.Tensor]:
        """‖X_j‖₂ (float32) of every layer's inputs so far; ValueError naming a layer whose input never came."""
        silent = [name for name, calls in self.calls.items() if calls == 0]
        if silent:
            raise ValueError(f"the calibration pass never ran {len(silent)} layer(s), e.g. {silent[0]}: no input norms")
        return {name: squares.sqrt().float() for name, squares in self.squares.items()}


def calibration_inputs(batches: Iterable[Mapping[str, Any]], samples: int, device: torch.device) -> Iterator[dict]:
    """The model inputs of the first `samples` examples of `batches` (the last batch cut), on `device`."""
    seen = 0
    for batch in batches:
        if seen >= samples:
            return
        inputs = {k: batch[k][: samples - seen].to(device) for k in MODEL_INPUTS if k in batch}
        if not inputs:
            raise ValueError(f"a calibration batch has none of {MODEL_INPUTS}: {sorted(batch)}")
        seen += len(next(iter(inputs.values())))
        yield inputs
