"""`WrappedLinear`: what every masked layer shares, a frozen `nn.Linear` kept as `base_layer` (PEFT's layout)."""

from __future__ import annotations

import torch
from torch import nn


class WrappedLinear(nn.Module):
    """A module over a frozen `nn.Linear` (`base_layer`) that exposes the linear layer's attributes, so code that
    reads `in_features`, `out_features`, `weight` or `bias` of a linear layer works on the masked one too."""

    def __init__(self, base_layer: nn.Linear) -> None:
        super().__init__()
        if not isinstance(base_layer, nn.Linear):
            raise TypeError(f"{type(self).__name__} wraps nn.Linear, got {type(base_layer).__name__}")
        self.base_layer = base_layer.requires_grad_(False)

    @property
    def in_features(self) -> int:
        return self.base_layer.in_features

    @property
    def out_features(self) -> int:
        return self.base_layer.out_features

    @property
    def weight(self) -> torch.Tensor:
        return self.base_layer.weight

    @property
    def bias(self) -> torch.Tensor | None:
        return self.base_layer.bias

    @torch.no_grad()
    def merged_weight(self) -> torch.Tensor:
        """m ⊙ W, the weight a plain `nn.Linear` needs to reproduce this layer, from the layer's `binary_mask()`
        (layers whose merge is not a 0/1 mask, as l0's gates during a search, override it)."""
        return self.base_layer.weight * self.binary_mask().to(self.base_layer.weight.dtype)
