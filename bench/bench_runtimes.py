#!/usr/bin/env python
"""Speed where it is served: compact SRNets against the dense model in PyTorch eager, `torch.compile` and ONNX
Runtime on CPU, latency at batch 1 and throughput at batch 32, one process per runtime.

    python bench/bench_runtimes.py --models dense=out/teacher hybrid50=out/hybrid50/merged --output bench_out
    python bench/bench_runtimes.py --shapes_only --models dense=RUN/teacher ffn70=RUN/ffn_recovered/s0.7/seed42 \\
        --runtimes eager,onnxruntime --threads 1 --output bench_out

`--models NAME=PATH ...`: the first model (or `--reference NAME`) is the dense reference of every ×dense ratio.
PATH is a saved classifier (dense, merged or compact: `hf_srnets.load_pretrained_model`); with `--shapes_only`,
any folder with a `config.json` (or that file): the model is built from it with fresh weights
(`hf_srnets.compact.loading.architecture_from_config`, which removes the heads and FFN units a compact config
records), for models whose weights are elsewhere: speed depends on the shapes, not the values. float32, eval mode.

The parent starts one worker process per runtime in turn (`--worker RUNTIME`, the same script), so no runtime's
threads, caches or compiled code touch another's timings. A worker loads every model, prepares it for its runtime,
runs each prepared model twice at each batch size (untimed), then times them all in one alternating run
(`hf_srnets.evaluation.speed.measure_speed`: the same seeded inputs for every model, `--rounds` rounds in a rotating
order, `--batches` timed forwards per model, batch size and round; throughput the median over rounds, latency the
median forward) and writes its JSON. Inputs: random token ids of `--seq_length`, the attention mask all ones, and
zero `token_type_ids` where the model reads them, in all three runtimes.

- `eager`: the model, called under `torch.no_grad`, `torch.set_num_threads(--threads)`.
- `compile`: `torch.compile(model)` (inductor, default settings); the untimed forwards compile the graph of each
  batch size, and their seconds are `setup_seconds.compile`, not part of the timings. Where compiling fails on the
  machine, the runtime's record holds the error and the other runtimes are still measured.
- `onnxruntime-int8`: the same graph after ONNX Runtime's dynamic INT8 quantization (`hf_srnets.export.quantize`:
  int8 weights per output channel, uint8 activations from each batch's range), its label agreement with the float
  model on the export's check batches in `setup_seconds` (`int8_label_agreement`); the CPU's integer instructions
  (VNNI, AMX) are in `runtimes.json`.
- `torch-int8`: the eager model with PyTorch's dynamic INT8 Linear layers (`hf_srnets.export.torch_int8`: int8
  weights per output channel, activations from each batch's range), its label agreement with the float model on the
  same check batches in `setup_seconds`.
- `onnxruntime`: each model exported by `hf_srnets.export.onnx` (TorchScript exporter, opset 17, dynamic batch and
  sequence axes, checked against the PyTorch logits: `max_abs_logit_diff`) and run in an `InferenceSession` on the
  CPU provider with `intra_op_num_threads=--threads`, one inter-op thread, sequential execution and all graph
  optimizations (ORT_ENABLE_ALL); the inputs are handed over with `Tensor.numpy()` (no copy) inside the timed call.

`--output DIR` gets `runtimes.json` (every row of every runtime, the setup seconds, the CPU, threads and versions)
and `runtimes.md` (one table, model × runtime, and for each model whether its speed-up over the reference holds in
each runtime: its ratios' lowest and highest across them), which is printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import torch
from torch import nn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hf_srnets.compact.loading import check_model_path  # noqa: E402
from hf_srnets.errors import InputError, run_script  # noqa: E402
from hf_srnets.evaluation.speed import cpu_name, load_for_speed, measure_speed, random_batch  # noqa: E402
from hf_srnets.export.extras import ONNX_EXTRA, require  # noqa: E402
from hf_srnets.export.onnx import (  # noqa: E402
    DEFAULT_OPSET,
    TOLERANCE,
    check_onnx,
    model_inputs,
    quantized,
    sample_batch,
    trace_to_onnx,
)
from hf_srnets.export.quantize import INT8_CHECK_SHAPES, INTEGER_FLAGS, cpu_flags, label_agreement  # noqa: E402
from hf_srnets.export.torch_int8 import quantize_torch_int8  # noqa: E402

RUNTIMES = ("eager", "compile", "onnxruntime", "onnxruntime-int8", "torch-int8")
JSON_NAME, TABLE_NAME = "runtimes.json", "runtimes.md"
WARMUP_PASSES = 2  # untimed passes over the batch sizes: the first compiles, the second any recompile it caused
VERSIONS = ("torch", "onnxruntime", "onnx", "transformers")

Setup = dict[str, dict[str, float]]  # model -> seconds (or the logit check) of preparing it


class Forward:
    """A model prepared for one runtime, as `measure_speed` calls it: with `input_ids` and `attention_mask`, zero
    `token_type_ids` added (one tensor per shape, made once) where the model reads them; `config` is the model's."""

    def __init__(self, run: Callable[[dict[str, torch.Tensor]], Any], config: Any, token_types: bool) -> None:
        self.run, self.config, self.token_types = run, config, token_types
        self.zeros: dict[tuple[int, ...], torch.Tensor] = {}

    def __call__(self, **batch: torch.Tensor) -> Any:
        if self.token_types:
            ids = batch["input_ids"]
            zeros = self.zeros.get(tuple(ids.shape))
            if zeros is None:
                zeros = self.zeros[tuple(ids.shape)] = torch.zeros_like(ids)
            batch["token_type_ids"] = zeros
        return self.run(batch)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", required=True, metavar="NAME=PATH", help="The models to time.")
    parser.add_argument("--reference", default=None, help="NAME of the dense reference (default: the first).")
    parser.add_argument("--shapes_only", action="store_true", help="Build each model from its config.json alone.")
    parser.add_argument("--runtimes", default=",".join(RUNTIMES), help=f"Comma-separated, of {','.join(RUNTIMES)}.")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads of every runtime.")
    parser.add_argument("--seq_length", type=int, default=128, help="Tokens per example.")
    parser.add_argument("--batch_sizes", default="1,32", help="Comma-separated batch sizes to time.")
    parser.add_argument("--rounds", type=int, default=5, help="Alternating rounds (medians over them).")
    parser.add_argument("--batches", type=int, default=8, help="Timed forwards per model, batch size and round.")
    parser.add_argument("--output", required=True, help="Folder of runtimes.json and runtimes.md.")
    parser.add_argument("--worker", choices=RUNTIMES, help=argparse.SUPPRESS)  # a worker: --output is its JSON file
    args = parser.parse_args(argv)
    args.runtimes = [r for r in args.runtimes.split(",") if r]
    if not args.runtimes or set(args.runtimes) - set(RUNTIMES) or len(set(args.runtimes)) < len(args.runtimes):
        parser.error(f"--runtimes takes distinct names of {','.join(RUNTIMES)}, got {','.join(args.runtimes)!r}")
    try:
        args.batch_sizes = [int(b) for b in args.batch_sizes.split(",")]
    except ValueError:
        parser.error(f"--batch_sizes takes comma-separated integers, got {args.batch_sizes!r}")
    if min(args.batch_sizes + [args.threads, args.seq_length, args.rounds, args.batches]) < 1:
        parser.error("--batch_sizes, --threads, --seq_length, --rounds and --batches must be at least 1")
    args.model_paths = model_paths(args.models)
    args.reference = args.reference or next(iter(args.model_paths))
    if args.reference not in args.model_paths:
        raise InputError(f"--reference {args.reference} is none of the --models names {list(args.model_paths)}")
    return args


def model_paths(specs: list[str]) -> dict[str, str]:
    """NAME -> PATH of the `--models NAME=PATH` arguments, in their order."""
    paths: dict[str, str] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not (sep and name and path):
            raise InputError(f"--models takes NAME=PATH (e.g. dense=out/teacher), got {spec!r}")
        if name in paths:
            raise InputError(f"--models names {name!r} twice")
        paths[name] = path
    return paths


def check_paths(paths: dict[str, str], shapes_only: bool) -> None:
    """Refuse, before any worker starts, a PATH that holds no model (or, with --shapes_only, no config.json)."""
    for name, path in paths.items():
        if not shapes_only:
            check_model_path(path, flag=f"--models {name}=")
        elif not (os.path.isfile(path) or os.path.isfile(os.path.join(path, "config.json"))):
            raise InputError(f"--models {name}={path}: no config.json there (--shapes_only needs a model's config)")


# --- the worker: one runtime ---


def load_model(path: str, shapes_only: bool) -> nn.Module:
    """The float32 classifier saved at `path`, or with `shapes_only` one of its config's shapes, fresh weights."""
    if shapes_only:
        torch.manual_seed(0)  # the same fresh weights in every runtime's process
    return load_for_speed(path, "cpu", "float32", shapes_only=shapes_only)


def takes_token_types(model: nn.Module) -> bool:
    return "token_type_ids" in model_inputs(model, None)


@torch.no_grad()
def warm_up(forwards: dict[str, Forward], args: argparse.Namespace) -> dict[str, float]:
    """Untimed forwards of each model on the inputs `measure_speed` will time; their seconds per model."""
    vocab = min(getattr(f.config, "vocab_size", 1000) for f in forwards.values())
    inputs = [random_batch(vocab, b, args.seq_length, "cpu") for b in args.batch_sizes]
    seconds = {}
    for name, forward in forwards.items():
        start = time.perf_counter()
        for _ in range(WARMUP_PASSES):
            for batch in inputs:
                forward(**batch)
        seconds[name] = time.perf_counter() - start
    return seconds


def prepare_eager(models: dict[str, nn.Module], args: argparse.Namespace, folder: str) -> tuple[dict, Setup]:
    forwards = {n: Forward(lambda b, m=m: m(**b), m.config, takes_token_types(m)) for n, m in models.items()}
    return forwards, {n: {"warmup": s} for n, s in warm_up(forwards, args).items()}


def prepare_compile(models: dict[str, nn.Module], args: argparse.Namespace, folder: str) -> tuple[dict, Setup]:
    forwards = {}
    for name, model in models.items():
        compiled = torch.compile(model)
        forwards[name] = Forward(lambda b, c=compiled: c(**b), model.config, takes_token_types(model))
    return forwards, {n: {"compile": s} for n, s in warm_up(forwards, args).items()}


def ort_session(ort: Any, path: str, threads: int) -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def ort_forward(session: Any) -> Callable[[dict[str, torch.Tensor]], Any]:
    return lambda batch: session.run(["logits"], {name: tensor.numpy() for name, tensor in batch.items()})


def prepare_onnxruntime(
    models: dict[str, nn.Module], args: argparse.Namespace, folder: str, int8: bool = False
) -> tuple[dict, Setup]:
    _, ort = require("--runtimes onnxruntime", ONNX_EXTRA, "onnx", "onnxruntime")
    forwards, setup = {}, {}
    for index, (name, model) in enumerate(models.items()):
        names = model_inputs(model, None)
        path = os.path.join(folder, f"model{index}.onnx")
        exported = trace_to_onnx(model, names, path, DEFAULT_OPSET)
        diff = check_onnx(model, names, path, ort, TOLERANCE)
        quantization = quantized(model, names, path, ort) if int8 else None
        start = time.perf_counter()
        forwards[name] = Forward(
            ort_forward(ort_session(ort, path, args.threads)), model.config, "token_type_ids" in names
        )
        setup[name] = {"export": exported, "session": time.perf_counter() - start, "max_abs_logit_diff": diff}
        if quantization:  # the INT8 graph's agreement with the float model, beside the float graph's check
            setup[name] |= {f"int8_{k}": quantization[k] for k in ("label_agreement", "max_abs_diff")}
    for name, seconds in warm_up(forwards, args).items():
        setup[name]["warmup"] = seconds
    return forwards, setup


def prepare_onnxruntime_int8(models: dict[str, nn.Module], args: argparse.Namespace, folder: str) -> tuple[dict, Setup]:
    return prepare_onnxruntime(models, args, folder, int8=True)


@torch.no_grad()
def prepare_torch_int8(models: dict[str, nn.Module], args: argparse.Namespace, folder: str) -> tuple[dict, Setup]:
    """Each model with PyTorch's dynamic INT8 Linear layers, and its label agreement with the float model on the
    INT8 export check's batches."""
    forwards, setup = {}, {}
    for name, model in models.items():
        names = model_inputs(model, None)
        batches = [sample_batch(model.config, names, shape, seed) for seed, shape in enumerate(INT8_CHECK_SHAPES)]
        expected = [model(**batch).logits for batch in batches]
        start = time.perf_counter()
        quantized, _ = quantize_torch_int8(model)
        seconds = time.perf_counter() - start
        check = label_agreement(expected, [quantized(**batch).logits for batch in batches])
        setup[name] = {"quantize": seconds} | {f"int8_{k}": check[k] for k in ("label_agreement", "max_abs_diff")}
        forwards[name] = Forward(lambda b, m=quantized: m(**b), model.config, takes_token_types(model))
    for name, seconds in warm_up(forwards, args).items():
        setup[name]["warmup"] = seconds
    return forwards, setup


PREPARE = {
    "eager": prepare_eager,
    "compile": prepare_compile,
    "onnxruntime": prepare_onnxruntime,
    "onnxruntime-int8": prepare_onnxruntime_int8,
    "torch-int8": prepare_torch_int8,
}


def run_worker(args: argparse.Namespace) -> dict[str, Any]:
    """One runtime's record: its rows (`SpeedRow`s as dicts) and setup seconds, or, for compile, the error that
    stopped it."""
    torch.set_num_threads(args.threads)
    record: dict[str, Any] = {"runtime": args.worker, "torch_threads": torch.get_num_threads(), "error": None}
    models = {name: load_model(path, args.shapes_only) for name, path in args.model_paths.items()}
    timing = {"length": args.seq_length, "rounds": args.rounds, "batches": args.batches}
    try:
        with tempfile.TemporaryDirectory(prefix="bench_runtimes_") as folder:
            forwards, setup = PREPARE[args.worker](models, args, folder)
            rows = measure_speed(forwards, args.batch_sizes, reference=args.reference, **timing)  # type: ignore[arg-type]
    except Exception as err:
        if args.worker != "compile":
            raise
        return record | {"error": one_line(err), "error_detail": str(err)[-4000:], "rows": []}
    return record | {"rows": [row.as_dict() for row in rows], "setup_seconds": setup}


def one_line(err: BaseException) -> str:
    text = str(err).strip()
    return f"{type(err).__name__}: {text.splitlines()[0] if text else ''}".strip()


# --- the parent: one worker per runtime, then the table ---


def worker_command(args: argparse.Namespace, runtime: str, output: Path) -> list[str]:
    models = [f"{name}={path}" for name, path in args.model_paths.items()]
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", runtime, "--output", str(output)]
    command += ["--models", *models, "--reference", args.reference, "--runtimes", runtime]
    command += ["--threads", str(args.threads), "--seq_length", str(args.seq_length), "--rounds", str(args.rounds)]
    command += ["--batches", str(args.batches), "--batch_sizes", ",".join(map(str, args.batch_sizes))]
    return command + (["--shapes_only"] if args.shapes_only else [])


def run_runtime(args: argparse.Namespace, runtime: str) -> dict[str, Any]:
    """The worker's record for `runtime`, or one naming how its process failed."""
    with tempfile.TemporaryDirectory(prefix="bench_runtimes_") as folder:
        output = Path(folder) / f"{runtime}.json"
        start = time.perf_counter()
        done = subprocess.run(worker_command(args, runtime, output), capture_output=True, text=True, cwd=REPO)
        seconds = round(time.perf_counter() - start, 1)
        print(f"{runtime}: {seconds} s", file=sys.stderr)
        if done.returncode == 0 and output.is_file():
            return json.loads(output.read_text(encoding="utf-8")) | {"process_seconds": seconds}
    last = (done.stderr.strip().splitlines() or ["no message"])[-1]
    sys.stderr.write(done.stderr[-4000:])
    error = f"the {runtime} worker exited {done.returncode}: {last}"
    return {"runtime": runtime, "error": error, "rows": [], "process_seconds": seconds}


def versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {"python": platform.python_version()}
    for package in VERSIONS:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    return found


def ratios(results: dict[str, dict[str, Any]], model: str, batch: int, key: str) -> dict[str, float]:
    """runtime -> the model's `key` ratio at `batch`, for the runtimes that were measured."""
    return {
        rt: r[key]
        for rt, rec in results.items()
        for r in rec["rows"]
        if (r["model"], r["batch_size"]) == (model, batch)
    }


def speedups(results: dict[str, dict[str, Any]], args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """For each model but the reference: its ×reference ratios per runtime (throughput at the largest batch size,
    latency at the smallest), and the runtimes where both are above 1 (`holds_in`) or not (`not_in`)."""
    small, large = min(args.batch_sizes), max(args.batch_sizes)
    found = {}
    for model in args.model_paths:
        if model == args.reference:
            continue
        throughput = ratios(results, model, large, "throughput_vs_dense")
        latency = ratios(results, model, small, "latency_vs_dense")
        holds = [rt for rt in throughput if throughput[rt] > 1 and latency[rt] > 1]
        found[model] = {
            f"throughput_vs_{args.reference}_b{large}": throughput,
            f"latency_vs_{args.reference}_b{small}": latency,
            "holds_in": holds,
            "not_in": [rt for rt in throughput if rt not in holds],
        }
    return found


def extent(values: dict[str, float]) -> str:
    """'1.72 (onnxruntime) to 1.83 (eager)': the lowest and highest ratio and where."""
    low, high = min(values, key=values.__getitem__), max(values, key=values.__getitem__)
    return f"{values[low]:.2f} ({low}) to {values[high]:.2f} ({high})" if low != high else f"{values[low]:.2f} ({low})"


def verdict(model: str, found: dict[str, Any], args: argparse.Namespace) -> str:
    """One line: whether the model's speed-up holds in each runtime, and its ratios' range across them."""
    small, large, ref = min(args.batch_sizes), max(args.batch_sizes), args.reference
    throughput, latency = found[f"throughput_vs_{ref}_b{large}"], found[f"latency_vs_{ref}_b{small}"]
    if not throughput:
        return f"- {model}: no runtime measured."
    holds, fails = found["holds_in"], found["not_in"]
    slower = ", ".join(f"{rt} (b{large} ×{throughput[rt]:.2f}, b{small} ×{latency[rt]:.2f})" for rt in fails)
    if not fails:
        head = f"holds in every runtime measured ({', '.join(holds)})"
    else:
        head = f"holds in {', '.join(holds)} but not in {slower}" if holds else f"holds in no runtime: {slower}"
    return f"- {model}: the speed-up {head}; ×{ref} at b{large} {extent(throughput)}, at b{small} {extent(latency)}."


def table(results: dict[str, dict[str, Any]], args: argparse.Namespace) -> list[str]:
    small, large, ref = min(args.batch_sizes), max(args.batch_sizes), args.reference
    lines = [f"| model | runtime | b{small} ms | b{large} ex/s | ×{ref} b{large} | ×{ref} b{small} |"]
    lines.append("|---|---|---:|---:|---:|---:|")
    for model in args.model_paths:
        for runtime, record in results.items():
            rows = {r["batch_size"]: r for r in record["rows"] if r["model"] == model}
            if not rows:
                lines.append(f"| {model} | {runtime} | not measured | | | |")
                continue
            lat, thr = rows[small], rows[large]
            lines.append(
                f"| {model} | {runtime} | {lat['latency_ms']:.2f} | {thr['examples_per_s']:.1f} | "
                f"{thr['throughput_vs_dense']:.2f} | {lat['latency_vs_dense']:.2f} |"
            )
    return lines


def setup_line(results: dict[str, dict[str, Any]]) -> str:
    """The seconds spent preparing the models, which the timings leave out: compiling, exporting to ONNX."""
    parts = []
    for runtime, key, what in (
        ("compile", "compile", "compile (the untimed first forwards)"),
        ("onnxruntime", "export", "ONNX export"),
        ("onnxruntime-int8", "export", "ONNX export before INT8 quantization"),
        ("torch-int8", "quantize", "PyTorch INT8 quantization"),
    ):
        setup = results.get(runtime, {}).get("setup_seconds")
        if setup:
            parts.append(f"{what}: " + ", ".join(f"{m} {s[key]:.1f} s" for m, s in setup.items()))
    return f"Not in the timings: {'; '.join(parts)}." if parts else ""


def markdown(record: dict[str, Any], args: argparse.Namespace) -> str:
    results, v = record["runtimes"], record["versions"]
    head = (
        f"CPU: {record['cpu']}; {args.threads} threads, float32, {args.seq_length} tokens per example, "
        f"{args.rounds} alternating rounds of {args.batches} forwards per model and batch size, one process per "
        f"runtime (medians); torch {v['torch']}, onnxruntime {v['onnxruntime']}. ×{args.reference} above 1: faster "
        f"than {args.reference} in the same runtime (b{max(args.batch_sizes)} throughput, b{min(args.batch_sizes)} "
        "latency)."
    )
    if args.shapes_only:
        head += " Models built from each saved config.json with fresh weights (--shapes_only)."
    lines = [head, "", *table(results, args), ""]
    errors = [f"- {rt}: not measured: {rec['error']}" for rt, rec in results.items() if rec["error"]]
    lines += [*errors, ""] if errors else []
    if record["speedups"]:
        lines += ["Does the structured speed-up hold in each runtime?", ""]
        lines += [verdict(model, found, args) for model, found in record["speedups"].items()] + [""]
    return "\n".join(lines + [setup_line(results)]).rstrip() + "\n"


def run_parent(args: argparse.Namespace) -> None:
    if {"onnxruntime", "onnxruntime-int8"} & set(args.runtimes):
        require("--runtimes onnxruntime", ONNX_EXTRA, "onnx", "onnxruntime")
    check_paths(args.model_paths, args.shapes_only)
    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    results = {runtime: run_runtime(args, runtime) for runtime in args.runtimes}
    setting = {k: getattr(args, k) for k in ("threads", "seq_length", "batch_sizes", "rounds", "batches")}
    record = {"cpu": cpu_name(), **setting, "reference": args.reference, "shapes_only": args.shapes_only}
    record["cpu_integer_instructions"] = [flag for flag in INTEGER_FLAGS if flag in cpu_flags()]  # VNNI, AMX: INT8
    record |= {"models": args.model_paths, "versions": versions(), "runtimes": results}
    record["speedups"] = speedups(results, args)
    (output / JSON_NAME).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    text = markdown(record, args)
    (output / TABLE_NAME).write_text(text, encoding="utf-8")
    print(text, end="")
    failed = [rt for rt, rec in results.items() if rec["error"] and rt != "compile"]
    if failed:
        raise SystemExit(f"not measured: {', '.join(failed)} (see {output / JSON_NAME})")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.worker is None:
        run_parent(args)
        return
    record = run_worker(args)
    Path(args.output).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(run_script(main))
