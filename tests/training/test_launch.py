"""What a launch gave a run (issue 53): processes, distributed type and global batch in all_results.json and the
card, and a warning for `accelerate launch --cpu --num_processes N`, which runs one process (accelerate's simple
launcher ignores N); `accelerate launch --multi_gpu --num_processes 2 ... --use_cpu true` runs two."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import mnli_run_args
from prewarmed_path import client_python

from hf_srnets.training.arguments import SRNetTrainingArguments
from hf_srnets.training.launch import engine_warning, launch_facts, single_process_launch_warning

ROOT = Path(__file__).resolve().parents[2]
SIMPLE_LAUNCHER_ENV = {"ACCELERATE_USE_CPU": "True", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}


def test_one_process_with_accumulation_has_a_global_batch_of_batch_times_steps(tmp_path):
    args = SRNetTrainingArguments(
        output_dir=str(tmp_path), use_cpu=True, report_to="none", per_device_train_batch_size=8,
        gradient_accumulation_steps=4,
    )  # fmt: skip
    assert launch_facts(args) == {
        "world_size": 1,
        "distributed_type": "NO",
        "per_device_train_batch_size": 8,
        "gradient_accumulation_steps": 4,
        "global_train_batch_size": 32,  # 8 examples x 1 process x 4 steps
    }


FACTS = {"world_size": 1, "per_device_train_batch_size": 16, "global_train_batch_size": 16}


def test_the_simple_launchers_single_process_is_named_with_the_command_that_works():
    warning = single_process_launch_warning(FACTS, SIMPLE_LAUNCHER_ENV)
    assert warning is not None and "ignores --num_processes" in warning and "global batch of 16" in warning
    assert "accelerate launch --multi_gpu --num_processes N run_glue_sparse.py ... --use_cpu true" in warning


@pytest.mark.parametrize(
    "env",
    [
        {},  # python run_glue_sparse.py
        {"ACCELERATE_USE_CPU": "True"},  # accelerate launch --cpu, one process asked
        {**SIMPLE_LAUNCHER_ENV, "WORLD_SIZE": "2"},  # torchrun or accelerate's multi-process launcher
        {"MASTER_ADDR": "10.0.0.1", "WORLD_SIZE": "1"},  # a cluster's environment, not accelerate's --cpu
    ],
)
def test_other_launches_are_not_warned_about(env):
    assert single_process_launch_warning(FACTS, env) is None


@pytest.mark.parametrize(
    "asked, distributed_type, world_size, warned",
    [
        ({"fsdp": "full_shard"}, "FSDP", 2, None),  # sharded (on CPU processes too: training.fsdp)
        ({"fsdp": "full_shard"}, "NO", 1, "--fsdp"),  # one process: nothing to shard over
        ({"deepspeed": "ds.json"}, "MULTI_CPU", 2, "--deepspeed"),  # on the CPU accelerate applies no DeepSpeed
        ({}, "MULTI_CPU", 2, None),
    ],
)
def test_an_engine_that_the_run_does_not_get_is_named(asked, distributed_type, world_size, warned):
    args = SimpleNamespace(**{"fsdp": None, "deepspeed": None, **asked})
    warning = engine_warning(args, {"distributed_type": distributed_type, "world_size": world_size})
    assert (warning is None) == (warned is None)
    if warned:
        assert warning.startswith(f"{warned} given") and f"distributed type is {distributed_type}" in warning


def _accelerate_launch(launch_args: list[str], run_args: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": "", "HF_HUB_OFFLINE": "1"}
    # `accelerate launch` is accelerate_cli's main; run through tests/prewarmed_path.py's client, the launcher and
    # the processes it starts are forks of a warm server (a plain interpreter where that cannot be)
    python = client_python() or sys.executable
    command = [python, "-m", "accelerate.commands.accelerate_cli", "launch", *launch_args]
    command += [str(ROOT / "run_glue_sparse.py"), *run_args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, cwd=ROOT)


@pytest.mark.slow
def test_accelerate_cpu_with_two_processes_runs_one_and_says_so(pretrained, data_dir, tmp_path):
    out = tmp_path / "cpu2"
    args = mnli_run_args(pretrained, data_dir, out, train=32, eval=16, ood=16, batch=8)
    done = _accelerate_launch(["--cpu", "--num_processes", "2"], [*args, "--do_train", "--max_steps", "2"])
    assert done.returncode == 0, done.stderr[-3000:]
    assert "accelerate launch --cpu started one process" in done.stderr + done.stdout
    results = json.loads((out / "all_results.json").read_text())
    assert (results["world_size"], results["distributed_type"], results["global_train_batch_size"]) == (1, "NO", 8)
    assert "| processes | 1 (NO) |" in (out / "README.md").read_text()


@pytest.mark.slow
def test_accelerate_multi_gpu_launcher_on_the_cpu_runs_two_gloo_processes(pretrained, data_dir, tmp_path):
    """The command the warning and docs/scale.md give: two processes of 4 examples, a global batch of 8."""
    out = tmp_path / "multi"
    args = mnli_run_args(pretrained, data_dir, out, train=32, eval=16, ood=16, batch=4)
    launch = ["--multi_gpu", "--num_processes", "2", "--main_process_port", "29517"]
    done = _accelerate_launch(launch, [*args, "--do_train", "--max_steps", "2"])
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((out / "all_results.json").read_text())
    assert (results["world_size"], results["distributed_type"]) == (2, "MULTI_CPU")
    assert results["global_train_batch_size"] == 8 and results["per_device_train_batch_size"] == 4
    card = (out / "README.md").read_text()
    assert "| processes | 2 (MULTI_CPU) |" in card and "| global batch | 8 |" in card
