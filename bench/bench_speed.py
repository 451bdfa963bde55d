#!/usr/bin/env python
"""Speed of your models against the dense one: throughput and latency per batch size, in one alternating run.

    python bench/bench_speed.py --dense out/full_ce --models out/neuron_50/merged out/head_50/merged \\
        --device cpu --dtype float32 --batch_sizes 1 32 --threads 2
    python bench/bench_speed.py --dense out/full_ce --models out/neuron_50/merged --device cuda \\
        --dtype float16 --batch_sizes 1 32 128 --json gpu_fp16.json     # names the GPU in its output

Each `--models` dir is a saved classifier: a merged SRNet (`--save_merged`), a compact one (`--save_compact`, loaded
with `hf_srnets.load_pretrained_model`) or any transformers checkpoint; `--dense` is the model they were pruned from.
Every model runs the same seeded inputs (random token ids of `--seq_length`, all attended) at each batch size;
rounds alternate the models in a rotating order (`hf_srnets.evaluation.speed`). ×dense above 1 is faster. For the
2:4 export (`hf_srnets.compact.to_semi_structured`, CUDA only) add `--semi_structured`: each model other than the
dense one is converted after loading, or the run stops with the reason it cannot be. The research bench of
synthetic masks at several sparsities and CPU sparse kernels is `bench/bench_inference.py`.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hf_srnets.compact import to_semi_structured  # noqa: E402
from hf_srnets.errors import run_script  # noqa: E402
from hf_srnets.evaluation.speed import load_for_speed, measure_speed, speed_table  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dense", required=True, help="The dense model dir (the reference of ×dense).")
    parser.add_argument("--models", nargs="+", required=True, help="Model dirs to time against the dense one.")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N.")
    parser.add_argument("--dtype", default="float32", help="float32, bfloat16, or float16 (CUDA).")
    parser.add_argument("--batch_sizes", nargs="+", type=int, default=[1, 32], help="Batch sizes to time.")
    parser.add_argument("--seq_length", type=int, default=128, help="Tokens per example.")
    parser.add_argument("--rounds", type=int, default=3, help="Alternating rounds (medians over them).")
    parser.add_argument("--batches", type=int, default=4, help="Timed forwards per model, batch size and round.")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's).")
    parser.add_argument("--semi_structured", action="store_true", help="Convert 2:4 weights (CUDA, sm >= 80).")
    parser.add_argument("--json", default=None, help="Also write the rows and the setting to this file.")
    return parser.parse_args(argv)


def _machine(args: argparse.Namespace) -> str:
    if args.device.startswith("cuda"):
        return f"{torch.cuda.get_device_name(torch.device(args.device))} (torch {torch.__version__})"
    return (
        f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} threads (torch {torch.__version__})"
    )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    names = ["dense", *args.models]
    models = {"dense": load_for_speed(args.dense, args.device, args.dtype)}
    for path in args.models:
        models[path] = load_for_speed(path, args.device, args.dtype)
        if args.semi_structured:
            to_semi_structured(models[path])
    rows = measure_speed(
        {n: models[n] for n in names},
        args.batch_sizes,
        reference="dense",
        length=args.seq_length,
        rounds=args.rounds,
        batches=args.batches,
        device=args.device,
    )
    machine = _machine(args)
    print(f"{args.device}: {machine}; {args.dtype}, {args.seq_length} tokens, {args.rounds} rounds")
    print(speed_table(rows))
    if args.json:
        setting = {k: v for k, v in vars(args).items() if k != "json"}
        record = {"machine": machine, "setting": setting, "rows": [r.as_dict() for r in rows]}
        Path(args.json).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(run_script(main))
