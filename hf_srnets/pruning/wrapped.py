"""`MaskedLayer`: what every masked layer offers, over a frozen `nn.Linear` kept as `base_layer` (PEFT's layout).

A pruning method's `layer_class` subclasses it (`register_pruning_method` refuses any other class), and so does the
layer of a structured `mask_granularity` (`pruning/units`). `SRNetModel` uses a layer only through this interface:

- required: `mask_scores` (the tensor the mask trains from, `masked_layers_scores`), `binary_mask()` (m, bool, the
  weight's shape) and `set_fixed_mask(mask)` (fix m: `SRNetModel.set_masks`, loaded and IMP masks);
- with defaults: `merged_weight()` (m ⊙ W from `binary_mask()`), `checkpoint_tensors` (no tensor besides the trainable
  ones), and the search state a layer keeps besides its binary mask (`has_search_state = False`: `search_state()` is
  `{}`, and `SRNetModel.from_pretrained` refuses saved search state for such layers).
"""

from __future__ import annotations

import contextlib
from abc import ABCMeta, abstractmethod
from collections.abc import Iterator
from typing import ClassVar

import torch
from torch import nn

from ..errors import InputError


class MaskedLayer(nn.Module, metaclass=ABCMeta):
    """A module over a frozen `nn.Linear` (`base_layer`) whose weight is masked by a binary mask m.

    It exposes the linear layer's attributes, so code that reads `in_features`, `out_features`, `weight` or `bias`
    of a linear layer works on the masked one too. A subclass sets `mask_scores` (an `nn.Parameter` or a property
    returning one) and implements `binary_mask()` and `set_fixed_mask()`; it overrides the other members as needed.

    Attributes:
        mask_scores: The mask parameters of the layer (m̂ of mask training, l0's log α, shared unit scores).
        checkpoint_tensors: Names (relative to the layer, dotted for a submodule's) of the parameters and buffers a
            training checkpoint restores even when they do not train (`SRNetModel.trainable_state_dict`), e.g. the
            threshold φ of mask training. Default: none.
        has_search_state: Whether the layer keeps float state beyond its binary mask that a saved search restores
            (`search_state()` / `load_search_state()`, l0's log α). Default: False.
    """

    mask_scores: nn.Parameter
    checkpoint_tensors: tuple[str, ...] = ()
    has_search_state: ClassVar[bool] = False

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

    @abstractmethod
    def binary_mask(self) -> torch.Tensor:
        """The current binary mask m as a bool tensor of the weight's shape (True = kept, no gradient)."""

    @abstractmethod
    def set_fixed_mask(self, mask: torch.Tensor) -> None:
        """Use the binary `mask` (True = kept, the weight's shape) from now on, in train and eval mode."""

    @torch.no_grad()
    def merged_weight(self) -> torch.Tensor:
        """m ⊙ W, the weight a plain `nn.Linear` needs to reproduce this layer, from the layer's `binary_mask()`
        (layers whose merge is not a 0/1 mask, as l0's gates during a search, override it)."""
        return self.base_layer.weight * self.binary_mask().to(self.base_layer.weight.dtype)

    def search_state(self) -> dict[str, torch.Tensor]:
        """The float state a saved search keeps besides the binary mask, by tensor name (default: none)."""
        return {}

    def load_search_state(self, state: dict[str, torch.Tensor]) -> None:
        """Restore `search_state()`; a layer without search state (`has_search_state = False`) refuses any."""
        raise InputError(
            f"{type(self).__name__} keeps no search state, but {len(state)} saved tensor(s) were given: load these "
            "masks with the pruning method that saved them."
        )


def model_weights(model: nn.Module) -> list[nn.Parameter]:
    """The model's weights: every parameter but the masked layers' own (their scores, l0's log α); a masked layer's
    `base_layer` weight and bias are weights."""
    own = {
        id(param)
        for layer in model.modules()
        if isinstance(layer, MaskedLayer)
        for name, param in layer.named_parameters()
        if not name.startswith("base_layer.")
    }
    return [param for param in model.parameters() if id(param) not in own]


@contextlib.contextmanager
def unmasked(model: nn.Module) -> Iterator[None]:
    """Run `model` with its masks off: inside the block every `MaskedLayer` computes its frozen `base_layer`
    (x·Wᵀ + b with the full W), so a masked model whose base weights never train gives the dense starting model's
    outputs without a second copy of it (distillation from the dense model, `hf_srnets.objectives.DenseDistillation`).
    The layers' own forward is back when the block ends, also after an error."""
    layers = [module for module in model.modules() if isinstance(module, MaskedLayer)]
    for layer in layers:
        layer.forward = layer.base_layer.forward
    try:
        yield
    finally:
        for layer in layers:
            del layer.forward
