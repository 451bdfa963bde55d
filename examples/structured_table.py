"""Collect the runs of `structured_minilm_mnli.sh` into a CSV and a Markdown table: per granularity and sparsity,
MNLI-m and HANS accuracy, the parameter sparsity, the saved compact model's size, and its CPU throughput and
latency relative to the dense (full ce) model, measured here in one process, alternating models round by round.

    python examples/structured_table.py outputs/structured_minilm_mnli --output results/structured_minilm_mnli

Speed: `--examples` MNLI dev-matched pairs (a seeded sample, as bench/bench_inference.py) in batches of 32 with
dynamic padding for throughput, and `--latency_examples` pairs one by one for latency; `--rounds` rounds, each
timing every model once in a rotating order; the median over rounds (throughput) and over all batch-1 forwards
(latency). Each compact model's logits are checked against its masked model (the mask dir over the full model).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from bench_inference import logits, make_batches, read_pairs

from hf_srnets import load_pretrained_model
from hf_srnets.masking import SRNetModel
from hf_srnets.resources.auto_loading import auto_from_pretrained

METHODS = ("mask_poe_element", "mask_poe_block", "mask_poe_neuron", "mask_poe_head")
COLUMNS = ("method", "granularity", "target_sparsity", "sparsity", "mnli", "hans", "hans_entailment",
           "hans_non_entailment", "parameters", "throughput_b32", "throughput_ratio", "latency_b1_ms",
           "latency_ratio", "max_logit_diff", "seed")  # fmt: skip


def runs(root: Path) -> list[tuple[str, float, int, Path]]:
    """(method, target sparsity, seed, run dir) of every finished run, the dense reference first."""
    found = []
    for method in ("full_ce", *METHODS):
        for results in sorted(root.glob(f"{method}/s*/seed*/all_results.json")):
            run = results.parent
            found.append((method, float(run.parent.name[1:]), int(run.name[4:]), run))
    if not found or found[0][0] != "full_ce":
        raise SystemExit(f"no finished full_ce run under {root}: run examples/structured_minilm_mnli.sh first")
    return found


def load(method: str, run: Path) -> torch.nn.Module:
    return load_pretrained_model(str(run if method == "full_ce" else run / "merged")).eval()


def masked_logits(run: Path, reference_dir: Path, batches: list[dict]) -> torch.Tensor:
    base = load_pretrained_model(str(reference_dir))
    return logits(SRNetModel.from_pretrained(base, str(run)).eval(), batches)


def time_models(models: list[torch.nn.Module], b32: list[dict], b1: list[dict], rounds: int) -> list[dict]:
    """Median throughput (examples/s, batch 32) and latency (ms, batch 1) per model, rotating the order."""
    throughput: list[list[float]] = [[] for _ in models]
    latency: list[list[float]] = [[] for _ in models]
    examples = sum(len(b["input_ids"]) for b in b32)
    for model in models:  # warm-up
        logits(model, b32[:1] + b1[:2])
    for r in range(rounds):
        for i in [(r + k) % len(models) for k in range(len(models))]:
            start = time.perf_counter()
            logits(models[i], b32)
            throughput[i].append(examples / (time.perf_counter() - start))
            for batch in b1:
                start = time.perf_counter()
                logits(models[i], [batch])
                latency[i].append(1000 * (time.perf_counter() - start))
    return [{"throughput_b32": statistics.median(t), "latency_b1_ms": statistics.median(v)}
            for t, v in zip(throughput, latency)]  # fmt: skip


def rows(root: Path, args: argparse.Namespace) -> list[dict]:
    found = runs(root)
    reference_dir = found[0][3]
    dense = load("full_ce", reference_dir)
    from transformers import AutoTokenizer

    tokenizer = auto_from_pretrained(AutoTokenizer, str(reference_dir))
    b32 = make_batches(tokenizer, read_pairs(args.data_dir, args.examples, 0), 32, 128)
    b1 = make_batches(tokenizer, read_pairs(args.data_dir, args.latency_examples, 1), 1, 128)
    models = [dense if m == "full_ce" else load(m, run) for m, _, _, run in found]
    speed = time_models(models, b32, b1, args.rounds)
    out = []
    for (method, target, seed, run), model, timing in zip(found, models, speed):
        results = json.loads((run / "all_results.json").read_text())
        diff = 0.0
        if method != "full_ce":
            diff = float((logits(model, b32[:2]) - masked_logits(run, reference_dir, b32[:2])).abs().max())
        out.append({
            "method": method, "granularity": method.rsplit("_", 1)[-1] if method != "full_ce" else "dense",
            "target_sparsity": target, "sparsity": results.get("sparsity", 0.0),
            "mnli": results["eval_mnli_accuracy"], "hans": results["eval_hans_accuracy"],
            "hans_entailment": results["eval_hans_entailment_accuracy"],
            "hans_non_entailment": results["eval_hans_non-entailment_accuracy"],
            "parameters": sum(p.numel() for p in model.parameters()), **timing,
            "throughput_ratio": timing["throughput_b32"] / speed[0]["throughput_b32"],
            "latency_ratio": speed[0]["latency_b1_ms"] / timing["latency_b1_ms"], "max_logit_diff": diff, "seed": seed,
        })  # fmt: skip
    return out


def markdown(table: list[dict], rounds: int) -> str:
    lines = [
        "| model | target s | θ_pr sparsity | MNLI-m | HANS | HANS ent / non-ent | parameters | ex/s (b32) | × dense "
        "| ms (b1) | × dense | max \\|Δ logits\\| vs masked |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        lines.append(
            f"| {r['granularity']} | {r['target_sparsity']:.0%} | {100 * r['sparsity']:.1f}% | {100 * r['mnli']:.1f} "
            f"| {100 * r['hans']:.1f} | {100 * r['hans_entailment']:.1f} / {100 * r['hans_non_entailment']:.1f} "
            f"| {r['parameters']:,} | {r['throughput_b32']:.1f} | {r['throughput_ratio']:.2f} "
            f"| {r['latency_b1_ms']:.1f} | {r['latency_ratio']:.2f} | {r['max_logit_diff']:.1e} |"
        )
    lines.append(
        f"\nOne seed per row. Speed: median of {rounds} alternating rounds on this machine's CPU "
        f"({torch.get_num_threads()} threads); × dense above 1 is faster. Parameters include the 11.7M embedding "
        "weights, which are never pruned."
    )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--data_dir", default="../shared/data")
    parser.add_argument("--examples", type=int, default=256)
    parser.add_argument("--latency_examples", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    table = rows(args.root, args)
    args.output.mkdir(parents=True, exist_ok=True)
    with open(args.output / "runs.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows({k: r[k] for k in COLUMNS} for r in table)
    (args.output / "table.md").write_text(markdown(table, args.rounds))
    print(markdown(table, args.rounds))


if __name__ == "__main__":
    main()
