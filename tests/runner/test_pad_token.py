"""The pad token of decoder classifiers: a tokenizer without one pads with its end-of-sequence token and the model's
config takes its id; a tokenizer with neither is refused, naming the fix."""

import pytest
import torch
from families.helpers import DECODER
from training.helpers import tiny_tokenizer
from transformers import AutoModelForSequenceClassification, LlamaConfig

from hf_srnets.errors import InputError
from hf_srnets.runner.pad_token import ensure_pad_token, set_model_pad_token


def test_a_tokenizer_without_pad_pads_with_its_end_of_sequence_token(tmp_path):
    tokenizer = tiny_tokenizer(tmp_path)
    tokenizer.eos_token, tokenizer.pad_token = "[SEP]", None
    assert ensure_pad_token(tokenizer, "ckpt").pad_token == "[SEP]" and tokenizer.pad_token_id == 3
    model = AutoModelForSequenceClassification.from_config(LlamaConfig(**DECODER, num_labels=3, pad_token_id=None))
    set_model_pad_token(model, tokenizer)
    assert model.config.pad_token_id == 3
    batch = tokenizer(["a b", "a b c d e"], padding=True, return_tensors="pt")
    with torch.no_grad():
        assert model(**batch).logits.shape == (2, 3)  # stock transformers refuses a batch > 1 without pad_token_id


def test_a_tokenizer_with_neither_pad_nor_eos_is_refused(tmp_path):
    tokenizer = tiny_tokenizer(tmp_path)
    tokenizer.pad_token = None
    with pytest.raises(InputError, match=r"ckpt has no pad token and no end-of-sequence token.*--tokenizer_name"):
        ensure_pad_token(tokenizer, "ckpt")


def test_a_model_pad_token_is_kept(tmp_path):
    tokenizer = tiny_tokenizer(tmp_path)
    model = AutoModelForSequenceClassification.from_config(LlamaConfig(**DECODER, num_labels=3, pad_token_id=7))
    set_model_pad_token(model, tokenizer)
    assert model.config.pad_token_id == 7
