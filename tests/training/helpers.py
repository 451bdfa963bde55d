"""Small synthetic datasets and a tiny tokenizer for Trainer tests."""

from __future__ import annotations

import random
from pathlib import Path

from datasets import Dataset
from transformers import BertTokenizerFast

from hf_srnets.training.arguments import SRNetTrainingArguments

WORDS = [f"w{i}" for i in range(90)]


def tiny_tokenizer(directory: Path) -> BertTokenizerFast:
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    path = directory / "vocab.txt"
    path.write_text("\n".join(vocab) + "\n")
    return BertTokenizerFast(vocab_file=str(path))


def synthetic_nli(tokenizer: BertTokenizerFast, n: int = 64, seed: int = 0, with_bias: bool = True) -> Dataset:
    """Pairs whose label is decided by which of three marker words the hypothesis holds."""
    rng = random.Random(seed)
    rows = {"id": [], "label": [], "input_ids": [], "attention_mask": [], "token_type_ids": []}
    if with_bias:
        rows["bias_probs"] = []
    for i in range(n):
        label = i % 3
        premise = " ".join(rng.choice(WORDS[3:]) for _ in range(rng.randint(3, 8)))
        hypothesis = " ".join([WORDS[label]] + [rng.choice(WORDS[3:]) for _ in range(rng.randint(1, 4))])
        enc = tokenizer(premise, hypothesis)
        rows["id"].append(f"ex{i}")
        rows["label"].append(label)
        for key in ("input_ids", "attention_mask", "token_type_ids"):
            rows[key].append(enc[key])
        if with_bias:
            probs = [0.2, 0.2, 0.2]
            probs[label if i % 2 else (label + 1) % 3] = 0.6
            rows["bias_probs"].append(probs)
    return Dataset.from_dict(rows)


def cpu_args(output_dir: str | Path, **kwargs) -> SRNetTrainingArguments:
    """Training arguments of a small, quiet, seeded CPU run; keyword arguments override the defaults."""
    defaults = dict(
        output_dir=str(output_dir),
        report_to="none",
        per_device_train_batch_size=8,
        per_device_eval_batch_size=16,
        learning_rate=1e-3,
        max_steps=12,
        logging_steps=4,
        save_strategy="no",
        seed=0,
        disable_tqdm=True,
        use_cpu=True,
        dataloader_pin_memory=False,
    )
    return SRNetTrainingArguments(**{**defaults, **kwargs})


def end_process_group() -> None:
    """Wait for every rank, then shut the gloo process group down before the worker exits: a process that exits
    with gloo's threads still running can abort ("terminate called without an active exception")."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
