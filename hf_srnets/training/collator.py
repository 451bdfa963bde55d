"""A data collator that pads the text and stacks the per-example probability columns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from transformers import DataCollatorWithPadding, PreTrainedTokenizerBase

from ..data import columns


@dataclass
class SRNetDataCollator:
    """Dynamic padding (`DataCollatorWithPadding`) plus float tensors for the per-example columns a loss reads
    (`bias_probs`, `teacher_probs`, `difficulty`: `hf_srnets.data.columns.EXAMPLE_COLUMNS`, read at each call)."""

    tokenizer: PreTrainedTokenizerBase
    pad_to_multiple_of: int | None = None

    def __post_init__(self) -> None:
        self._pad = DataCollatorWithPadding(self.tokenizer, pad_to_multiple_of=self.pad_to_multiple_of)

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        extra = {c: [f[c] for f in features] for c in columns.EXAMPLE_COLUMNS if c in features[0]}
        batch = self._pad([{k: v for k, v in f.items() if k not in extra} for f in features])
        for column, values in extra.items():
            batch[column] = torch.tensor(values, dtype=torch.float32)
        return batch
