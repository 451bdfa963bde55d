"""Two CPU processes (torchrun, gloo) end with identical masks that agree with a one-process run."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

WORKER = Path(__file__).with_name("ddp_worker.py")


def _run(out: Path, nproc: int, per_device_batch: int) -> None:
    out.mkdir(parents=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        f"--nproc_per_node={nproc}",
        "--standalone",
        str(WORKER),
        str(out),
        str(per_device_batch),
    ]
    if nproc == 1:
        cmd = [sys.executable, str(WORKER), str(out), str(per_device_batch)]
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]


@pytest.mark.slow
def test_two_processes_agree_with_each_other_and_with_one(tmp_path):
    _run(tmp_path / "ddp", nproc=2, per_device_batch=4)
    _run(tmp_path / "single", nproc=1, per_device_batch=8)
    rank0 = torch.load(tmp_path / "ddp" / "rank0.pt")
    rank1 = torch.load(tmp_path / "ddp" / "rank1.pt")
    single = torch.load(tmp_path / "single" / "rank0.pt")
    assert int(rank0["world_size"]) == 2 and int(single["world_size"]) == 1
    for key in rank0:
        assert torch.equal(rank0[key], rank1[key]), key
    assert float(single["flipped"]) > 0.02  # the search moved the masks: agreement below is not trivial
    masks = [k for k in rank0 if not k.endswith("threshold") and k not in ("world_size", "flipped")]
    agree = sum(int((rank0[k] == single[k]).sum()) for k in masks)
    total = sum(rank0[k].numel() for k in masks)
    assert agree / total >= 0.99, agree / total
