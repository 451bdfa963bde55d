"""What makes the suite and the GPU check ready for a CUDA machine without one in hand: the conftest's deterministic
CUDA set-up (exercised by simulating CUDA), and `bench/gpu_check.sh --cpu`, the dry run of the one script a GPU
session runs, end to end on the CPU."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import torch
from conftest import DATA_DIR, make_cuda_deterministic
from prewarmed_path import python_on_path

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def torch_determinism_restored():
    """Put torch's process-wide determinism and TF32 settings back as they were after the test."""
    saved = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
        torch.backends.cudnn.benchmark,
        torch.backends.cuda.matmul.allow_tf32,
        torch.backends.cudnn.allow_tf32,
    )
    yield
    torch.use_deterministic_algorithms(saved[0], warn_only=saved[1])
    torch.backends.cudnn.benchmark = saved[2]
    torch.backends.cuda.matmul.allow_tf32 = saved[3]
    torch.backends.cudnn.allow_tf32 = saved[4]


def test_a_cuda_machine_runs_the_suite_with_deterministic_kernels(monkeypatch, torch_determinism_restored):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    environ: dict[str, str] = {}
    assert make_cuda_deterministic(environ) is True
    assert environ == {"CUBLAS_WORKSPACE_CONFIG": ":4096:8"}  # cuBLAS's documented setting for reproducible results
    assert torch.are_deterministic_algorithms_enabled() and torch.is_deterministic_algorithms_warn_only_enabled()
    assert not torch.backends.cudnn.benchmark and not torch.backends.cuda.matmul.allow_tf32
    assert not torch.backends.cudnn.allow_tf32
    environ = {"CUBLAS_WORKSPACE_CONFIG": ":16:8"}
    make_cuda_deterministic(environ)
    assert environ == {"CUBLAS_WORKSPACE_CONFIG": ":16:8"}  # a setting the user chose stands


def test_a_machine_without_cuda_is_left_as_it_is(monkeypatch, torch_determinism_restored):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    torch.use_deterministic_algorithms(False)
    environ: dict[str, str] = {}
    assert make_cuda_deterministic(environ) is False
    assert environ == {} and not torch.are_deterministic_algorithms_enabled()


@pytest.mark.slow
def test_the_gpu_check_dry_run_does_every_step_on_the_cpu(tmp_path):
    """`bash bench/gpu_check.sh --cpu OUT` (the suite step on one small test file): every step exits 0 and writes
    its file; the summary names each step and the machine."""
    if not (DATA_DIR / "mnli" / "dev_mismatched.tsv").is_file():
        pytest.skip(f"real data not found at {DATA_DIR}")
    env = dict(os.environ, SUITE_ARGS="tests/test_accelerate_configs.py", SRNETS_DATA_DIR=str(DATA_DIR))
    env = python_on_path(env) | {"PYTHON_CPU": "python"}  # each step's Python a fork of a warm server
    env["TOKENIZER"] = str(tmp_path / "tokenizer")
    from training.helpers import tiny_tokenizer

    tiny_tokenizer(tmp_path).save_pretrained(env["TOKENIZER"])
    out = tmp_path / "out"
    result = subprocess.run(
        ["bash", str(ROOT / "bench" / "gpu_check.sh"), "--cpu", str(out)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    files = {p.name for p in out.iterdir()}
    assert files == {
        "machine.txt", "summary.md", "suite.log", "mission_bf16.log", "overhead.log",
        "overhead.json", "threshold_update.log", "threshold_update.json",
    }  # fmt: skip
    summary = (out / "summary.md").read_text()
    steps = [line for line in summary.splitlines() if line.startswith("- (")]
    assert [line.split(":")[0] for line in steps] == [
        "- (a) fast suite, -n 2", "- (b) accelerate launch, mask PoE, bf16",
        "- (c) bench_trainer_overhead.py (tiny)", "- (d) bench_threshold_update.py (tiny)",
    ]  # fmt: skip
    assert all(": exit 0 in " in line for line in steps)
    assert f"torch {torch.__version__}" in (out / "machine.txt").read_text()
    assert "precision bf16" in summary and "worst ratio to plain" in summary
    assert "update local " in summary and "masked_forward_backward_ms " in summary
