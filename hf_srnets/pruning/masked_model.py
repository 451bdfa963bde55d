"""`MaskedModel`: what a pruning method's hooks and callbacks may use of the model whose masks they drive.

`PruningMethod`'s hooks (`initialize`, `callbacks`, `saved_masks`, ...) and the controllers they return receive the
`SRNetModel` (`hf_srnets.masking`), which sits above `pruning/` and satisfies this protocol structurally: a method
knows the model only through these members. `tests/pruning/test_masked_model.py` checks both sides: `SRNetModel`
has every member with the same signature, and no module of `pruning/` uses any other member of an `srnet`.

`srnet_config` is typed by `MaskConfig`, the fields of `PruningConfig` every method may read (a method reads its own
options from its config class). `PruningConfig` itself cannot be named here: `pruning/base.py` imports this module
and holds the config together with the registry it validates against.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import torch
from torch import nn

from .wrapped import MaskedLayer


@runtime_checkable
class MaskConfig(Protocol):
    """The fields of a `PruningConfig` (the masks' config) that code common to all methods reads."""

    @property
    def sparsity(self) -> float:
        """The target sparsity s in [0, 1)."""

    @property
    def sparsity_scope(self) -> str:
        """`"local"` (s per matrix or unit group) or `"global"` (s over all of them)."""

    @property
    def mask_granularity(self) -> str:
        """What one mask bit prunes (`element`, `nm`, or a unit granularity)."""

    @property
    def structured(self) -> bool:
        """Whether a mask unit is more than one weight (`mask_granularity` block, ffn, head or hybrid/neuron)."""


@runtime_checkable
class MaskedModel(Protocol):
    """The model a pruning method prunes, as its hooks and callbacks see it (`SRNetModel` satisfies it)."""

    @property
    def base_model(self) -> nn.Module:
        """The wrapped transformers model, its masked linear layers replaced by `MaskedLayer`s."""

    @property
    def srnet_config(self) -> MaskConfig:
        """The masks' config: the method's `PruningConfig` subclass, the model's own copy of the one it was given,
        filled in by the model (the method's `config` is this object)."""

    @property
    def is_search(self) -> bool:
        """Whether the masks are searched from scratch (True) rather than loaded from a file (False)."""

    @property
    def fixed_masks(self) -> bool:
        """Whether the masks are fixed and every weight trains under them (`train_weights_with_fixed_masks`)."""

    def masked_layers(self) -> dict[str, MaskedLayer]:
        """Module name (relative to `base_model`) -> its masked layer, in model order."""

    def masked_layers_scores(self) -> list[nn.Parameter]:
        """Every layer's `mask_scores`, each tensor once (unit scores are shared by several layers)."""

    def binary_masks(self) -> dict[str, torch.Tensor]:
        """Module name -> the layer's current binary mask (bool, True = kept)."""

    def set_masks(self, masks: dict[str, torch.Tensor]) -> None:
        """Fix the binary masks (module name -> bool mask of the weight's shape) of every masked layer."""

    def zero_pruned_weights(self) -> None:
        """W ← m ⊙ W in every masked layer: pruned weights become exactly 0."""

    def train_weights_with_fixed_masks(self) -> None:
        """Fix the method's saved masks, freeze the mask parameters and let every weight train instead."""

    def record_fingerprint(self) -> None:
        """Record the base weights the masks belong to (loading the masks later checks them)."""

    def sparsity_report(self, masks: dict[str, torch.Tensor] | None = None) -> dict[str, Any]:
        """The sparsity over all masked weights and per matrix, of the current masks or of `masks`."""
