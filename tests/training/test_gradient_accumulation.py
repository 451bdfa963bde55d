"""Gradient accumulation on the plain training path (cross-entropy, no pruning, no adversarial objective): two
micro-batches of 4 with --gradient_accumulation_steps 2 make the same optimizer step as one batch of 8, and both
equal one SGD step on the mean cross-entropy of the 8 examples computed here by hand with torch."""

import pytest
import torch
from transformers import AutoModelForSequenceClassification, BertConfig

from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer

from .helpers import cpu_args, synthetic_nli, tiny_tokenizer

LR = 0.5
# float32 sums in another order (two batches of 4 padded to their own length vs one of 8): measured differences are
# ~1e-8; a gradient scaled by 2 (accumulated without dividing) moves the weights by LR * |g|, far above 1e-6
ATOL = 1e-6


def tiny_bert_without_dropout() -> torch.nn.Module:
    config = BertConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, vocab_size=100, num_labels=3
    )
    config.hidden_dropout_prob = config.attention_probs_dropout_prob = 0.0  # the same function in every pass
    torch.manual_seed(0)
    return AutoModelForSequenceClassification.from_config(config)


def one_trainer_step(tmp_path, batch: int, accumulation: int) -> dict[str, torch.Tensor]:
    tokenizer = tiny_tokenizer(tmp_path)
    model = tiny_bert_without_dropout()
    args = cpu_args(
        tmp_path / f"out-{batch}x{accumulation}",
        per_device_train_batch_size=batch,
        gradient_accumulation_steps=accumulation,
        max_steps=1,
        optim="sgd",
        learning_rate=LR,
        lr_scheduler_type="constant",
        weight_decay=0.0,
        max_grad_norm=0.0,  # no clipping: the step is LR times the gradient
    )
    trainer = SRNetTrainer(
        model=model,
        args=args,
        train_dataset=synthetic_nli(tokenizer, n=8, with_bias=False),
        data_collator=SRNetDataCollator(tokenizer),
        processing_class=tokenizer,
    )
    trainer.train()
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def sgd_step_by_hand(tmp_path) -> dict[str, torch.Tensor]:
    """One SGD step of size LR on the mean cross-entropy of all 8 examples in one forward pass."""
    tokenizer = tiny_tokenizer(tmp_path)
    model = tiny_bert_without_dropout().train()
    data = synthetic_nli(tokenizer, n=8, with_bias=False)
    batch = tokenizer.pad(
        {k: data[k] for k in ("input_ids", "attention_mask", "token_type_ids")}, padding=True, return_tensors="pt"
    )
    logits = model(**batch).logits
    torch.nn.functional.cross_entropy(logits, torch.tensor(data["label"])).backward()
    with torch.no_grad():
        return {name: p - LR * p.grad for name, p in model.named_parameters()}


def test_two_micro_batches_of_4_make_the_step_of_one_batch_of_8(tmp_path):
    expected = sgd_step_by_hand(tmp_path)
    start = dict(tiny_bert_without_dropout().named_parameters())
    one_batch = one_trainer_step(tmp_path, batch=8, accumulation=1)
    accumulated = one_trainer_step(tmp_path, batch=4, accumulation=2)
    moved = max((expected[n] - start[n]).abs().max().item() for n in expected)
    assert moved > 100 * ATOL, "the step must be large against the tolerance"
    for name, value in expected.items():
        torch.testing.assert_close(one_batch[name], value, atol=ATOL, rtol=0, msg=lambda m, n=name: f"{n}: {m}")
        torch.testing.assert_close(accumulated[name], value, atol=ATOL, rtol=0, msg=lambda m, n=name: f"{n}: {m}")


@pytest.mark.parametrize("accumulation", [1, 2])
def test_the_logged_loss_is_the_mean_over_the_8_examples(tmp_path, accumulation):
    """The Trainer's `loss` for the step is the cross-entropy averaged over all 8 examples either way."""
    tokenizer = tiny_tokenizer(tmp_path)
    data = synthetic_nli(tokenizer, n=8, with_bias=False)
    model = tiny_bert_without_dropout()
    batch = tokenizer.pad(
        {k: data[k] for k in ("input_ids", "attention_mask", "token_type_ids")}, padding=True, return_tensors="pt"
    )
    with torch.no_grad():
        expected = torch.nn.functional.cross_entropy(model(**batch).logits, torch.tensor(data["label"])).item()
    args = cpu_args(
        tmp_path / "out", per_device_train_batch_size=8 // accumulation, gradient_accumulation_steps=accumulation,
        max_steps=1, logging_steps=1, optim="sgd", learning_rate=LR, max_grad_norm=0.0,
    )  # fmt: skip
    trainer = SRNetTrainer(
        model=model,
        args=args,
        train_dataset=data,
        data_collator=SRNetDataCollator(tokenizer),
        processing_class=tokenizer,
    )
    trainer.train()
    logged = next(entry["loss"] for entry in trainer.state.log_history if "loss" in entry)
    assert logged == pytest.approx(expected, abs=1e-5)
