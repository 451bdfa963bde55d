"""A data collator that pads the text and stacks the per-example probability columns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from transformers import DataCollatorWithPadding, PreTrainedTokenizerBase

from ..data.example_columns import EXAMPLE_COLUMNS
from ..errors import InputTypeError


@dataclass
class SRNetDataCollator:
    """Dynamic padding (`DataCollatorWithPadding`) plus float tensors for the per-example columns a loss reads
    (every column of the registry `hf_srnets.data.example_columns.EXAMPLE_COLUMNS`, as it is at each call)."""

    tokenizer: PreTrainedTokenizerBase
    pad_to_multiple_of: int | None = None

    def __post_init__(self) -> None:
        if not callable(getattr(self.tokenizer, "pad", None)):
            hint = (
                ": load it first, e.g. AutoTokenizer.from_pretrained(path)" if isinstance(self.tokenizer, str) else ""
            )
            raise InputTypeError(
                f"SRNetDataCollator: tokenizer must be a transformers tokenizer (with .pad), got "
                f"{type(self.tokenizer).__name__} {self.tokenizer!r:.80}{hint}"
            )
        self._pad = DataCollatorWithPadding(self.tokenizer, pad_to_multiple_of=self.pad_to_multiple_of)

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        extra = {c: [f[c] for f in features] for c in EXAMPLE_COLUMNS if c in features[0]}
        batch = self._pad([{k: v for k, v in f.items() if k not in extra} for f in features])
        for column, values in extra.items():
            batch[column] = torch.tensor(values, dtype=torch.float32)
        return batch
