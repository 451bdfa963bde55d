"""Compact models: structured head pruning (physically removed heads) and students with fewer layers.

- `heads`: `HeadMask` (gates ξ on each head's output), `head_importance` (E|∂L/∂ξ|), `heads_to_prune`,
  `prune_heads` (removes heads, records them in `config.srnet_pruned_heads`).
- `loading`: `load_pretrained_model`, which rebuilds a head-pruned checkpoint before loading its weights.
- `layers`: `keep_layers`, a student with n evenly spaced layers.
- `layout`: where BERT-family models keep their layers and attention projections.
"""

from .heads import HeadMask, head_importance, heads_per_layer, heads_to_prune, prune_heads, pruned_heads
from .layers import evenly_spaced, keep_layers
from .layout import PRUNED_HEADS_ATTR, attention_sites, encoder_layers
from .loading import load_pretrained_model

__all__ = [
    "PRUNED_HEADS_ATTR",
    "HeadMask",
    "attention_sites",
    "encoder_layers",
    "evenly_spaced",
    "head_importance",
    "heads_per_layer",
    "heads_to_prune",
    "keep_layers",
    "load_pretrained_model",
    "prune_heads",
    "pruned_heads",
]
