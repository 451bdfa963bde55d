"""Smaller students: keep `n` of an encoder's layers, evenly spaced (DistilBERT-style, Sanh et al. 2019).

The rule: of `L` layers, keep layers `⌊i·L/n⌋` for `i = 0, ..., n−1` (in order). For `n = L/2` that is every
other layer starting at the first (0, 2, 4, ..., L−2), as DistilBERT's student is initialised from every other
teacher layer; for BERT-base (`L = 12`) and `n = 4` it is 0, 3, 6, 9. The first layer is always kept.

The model is changed in place and `config.num_hidden_layers` becomes `n`, so `save_pretrained` writes a stock
transformers checkpoint that `AutoModelForSequenceClassification.from_pretrained` reloads as it is.
"""

from __future__ import annotations

import logging
from typing import Any

from torch import nn

from .layout import PRUNED_HEADS_ATTR, encoder_layers
from .neurons import record_widths

logger = logging.getLogger(__name__)


def evenly_spaced(total: int, n: int) -> list[int]:
    """The layers a student of `n` of `total` layers keeps: `⌊i·total/n⌋` for `i = 0, ..., n−1`."""
    return [i * total // n for i in range(n)]


def keep_layers(model: Any, n: int) -> list[int]:
    """Keep `n` evenly spaced encoder layers of `model` (in place, see the module docstring); return their indices
    in the original model. Recorded head pruning (`config.srnet_pruned_heads`) follows its layers."""
    holder, attr = encoder_layers(model)
    layers = getattr(holder, attr)
    total = len(layers)
    if not 1 <= n <= total:
        raise ValueError(
            f"--student_layers {n}: the model has {total} layers; pass a number from 1 to {total - 1} "
            "(or leave it unset to keep the model as loaded)"
        )
    kept = evenly_spaced(total, n)
    setattr(holder, attr, nn.ModuleList([layers[i] for i in kept]))
    for new_index, layer in enumerate(getattr(holder, attr)):
        for module in layer.modules():
            if hasattr(module, "layer_idx"):  # a cache index (decoders); kept consistent with the new position
                module.layer_idx = new_index
    config = model.config
    config.num_hidden_layers = n
    record_widths(model)  # per-layer FFN widths (`srnet_intermediate_sizes`) follow the kept layers
    pruned = getattr(config, PRUNED_HEADS_ATTR, None)
    if pruned:
        remapped = {str(new): pruned[str(old)] for new, old in enumerate(kept) if str(old) in pruned}
        setattr(config, PRUNED_HEADS_ATTR, remapped)
    logger.info(f"Student: kept layers {kept} of {total}")
    return kept
