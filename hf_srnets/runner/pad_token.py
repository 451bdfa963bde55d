"""The pad token a decoder classifier needs (Llama-family `*ForSequenceClassification`).

Decoder classifiers pool the last token that is not padding, found through `config.pad_token_id`, and batches of
several texts are padded; many decoder tokenizers have no pad token. A run then pads with the end-of-sequence token
(`tokenizer.pad_token = tokenizer.eos_token`, the usual choice, logged) and sets `config.pad_token_id` to it. A
tokenizer with neither is refused with an `InputError` naming the fix.
"""

from __future__ import annotations

import logging
from typing import Any

from ..errors import InputError

logger = logging.getLogger(__name__)


def ensure_pad_token(tokenizer: Any, where: str) -> Any:
    """Give `tokenizer` a pad token if it has none: its end-of-sequence token; `InputError` if it has neither."""
    if tokenizer.pad_token is not None:
        return tokenizer
    if tokenizer.eos_token is None:
        raise InputError(
            f"The tokenizer of {where} has no pad token and no end-of-sequence token to pad with: add one "
            "(tokenizer.add_special_tokens({'pad_token': '<pad>'}), resize the model's embeddings, save both) "
            "or pass --tokenizer_name of a tokenizer that has one."
        )
    tokenizer.pad_token = tokenizer.eos_token
    logger.warning(f"The tokenizer of {where} has no pad token: padding with its end-of-sequence token "
                   f"{tokenizer.eos_token!r} (id {tokenizer.pad_token_id})")  # fmt: skip
    return tokenizer


def set_model_pad_token(model: Any, tokenizer: Any) -> None:
    """`config.pad_token_id` = the tokenizer's when the model has none (a decoder classifier pools by it)."""
    if getattr(model.config, "pad_token_id", None) is None and tokenizer.pad_token_id is not None:
        model.config.pad_token_id = tokenizer.pad_token_id
        logger.info(f"config.pad_token_id set to the tokenizer's pad token id {tokenizer.pad_token_id}")
