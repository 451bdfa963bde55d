"""Compact models: structured head and FFN-unit pruning (physically removed), compact export, fewer layers.

- `heads`: `HeadMask` (gates ξ on each head's output), `head_importance` (E|∂L/∂ξ|), `heads_to_prune`,
  `prune_heads` (removes heads, records them in `config.srnet_pruned_heads`).
- `neurons`: `prune_ffn_units` (removes FFN intermediate units; widths in `config.intermediate_size` or, when they
  differ by layer, `config.srnet_intermediate_sizes`), `ffn_widths`, `set_ffn_widths`, `narrow_ffn` (a student's
  narrower FFNs: the units of largest mean |W| kept).
- `export`: `compact_model`, which removes every unit and head of a merged model that contributes exactly 0.
- `loading`: `load_pretrained_model`, which rebuilds a compact checkpoint before loading its weights.
- `remote_code`: `save_pretrained_model`, which saves a compact model with a modeling file, so that
  `AutoModelForSequenceClassification.from_pretrained(path, trust_remote_code=True)` loads it without hf_srnets.
- `layers`: `keep_layers`, a student with n evenly spaced layers.
- `semi_structured`: `to_semi_structured`, 2:4 weights as `torch.sparse` semi-structured tensors (CUDA, sm ≥ 80).
- `layout`: where BERT-family models keep their layers, attention projections and FFN matrices.
"""

from .compaction import compact_model
from .heads import HeadMask, head_importance, heads_per_layer, heads_to_prune, prune_heads, pruned_heads
from .layers import evenly_spaced, keep_layers
from .layout import INTERMEDIATE_SIZES_ATTR, PRUNED_HEADS_ATTR, attention_sites, encoder_layers, ffn_sites
from .loading import load_pretrained_model
from .neurons import ffn_widths, narrow_ffn, prune_ffn_units, set_ffn_widths, unit_magnitudes
from .remote_code import save_pretrained_model
from .semi_structured import semi_structured_refusal, to_semi_structured

__all__ = [
    "INTERMEDIATE_SIZES_ATTR",
    "PRUNED_HEADS_ATTR",
    "HeadMask",
    "attention_sites",
    "compact_model",
    "encoder_layers",
    "evenly_spaced",
    "ffn_sites",
    "ffn_widths",
    "head_importance",
    "heads_per_layer",
    "heads_to_prune",
    "keep_layers",
    "load_pretrained_model",
    "narrow_ffn",
    "prune_ffn_units",
    "prune_heads",
    "pruned_heads",
    "save_pretrained_model",
    "semi_structured_refusal",
    "set_ffn_widths",
    "to_semi_structured",
    "unit_magnitudes",
]
