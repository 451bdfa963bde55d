"""FSDP2 with masks on CPU processes (gloo), issue 53: `--fsdp full_shard` / `shard_grad_op` shards the model
(`training.fsdp`), and every method's masks come from whole tensors (`pruning.sharding`): mask training's exact
thresholds, IMP's magnitude rounds, L0's penalty and ticket, Wanda's calibration and selection give two sharded
processes of 4 examples the masks of one process of 8, after a search that moved them; the run saves them once.
Wanda under plain DDP gives every process the same masks (each calibrated on its own batches before)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from conftest import mnli_run_args

from hf_srnets.pruning.random.method import read_masks
from training.ddp_helpers import launch
from training.test_launch import ROOT, _accelerate_launch

WORKER = Path(__file__).with_name("ddp_worker.py")
BOOKKEEPING = ("world_size", "flipped", "sharded")


def _masks(state: dict) -> dict:
    return {k: v for k, v in state.items() if k not in BOOKKEEPING and not k.endswith("threshold")}


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    """method -> the masks of one process of 8 examples (computed once per method)."""
    cache: dict[str, dict] = {}

    def run(method: str) -> dict:
        if method not in cache:
            out = tmp_path_factory.mktemp(f"single_{method}")
            launch(WORKER, 1, out, 8, "-", method)
            cache[method] = torch.load(out / "rank0.pt")
        return cache[method]

    return run


def _two_processes(tmp_path: Path, fsdp: str, method: str) -> tuple[dict, dict]:
    launch(WORKER, 2, tmp_path, 4, fsdp, method)
    return torch.load(tmp_path / "rank0.pt"), torch.load(tmp_path / "rank1.pt")


def _agreement(a: dict, b: dict) -> float:
    return sum(int((a[k] == b[k]).sum()) for k in a) / sum(a[k].numel() for k in a)


@pytest.mark.slow
@pytest.mark.parametrize(
    "method, fsdp",
    [("mask", "full_shard"), ("imp", "shard_grad_op"), ("l0", "full_shard"), ("wanda", "full_shard")],
)
def test_sharded_processes_find_the_masks_of_one_process(method, fsdp, tmp_path, one_process):
    rank0, rank1 = _two_processes(tmp_path, fsdp, method)
    single = one_process(method)
    assert int(rank0["world_size"]) == 2 and bool(rank0["sharded"]) and not bool(single["sharded"])
    for key in rank0:
        assert torch.equal(rank0[key], rank1[key]), key
    assert float(single["flipped"]) > 0.02  # the search moved the masks: agreement below is not trivial
    assert _agreement(_masks(rank0), _masks(single)) >= 0.99
    _, saved = read_masks(tmp_path / "run")  # written once, by the main process, from the whole scores
    assert set(saved) == set(_masks(rank0))
    assert all(torch.equal(saved[k].bool(), rank0[k].bool()) for k in saved)


@pytest.mark.slow
def test_wanda_under_ddp_calibrates_every_process_on_the_same_examples(tmp_path, one_process):
    rank0, rank1 = _two_processes(tmp_path, "-", "wanda")
    assert not bool(rank0["sharded"])
    assert all(torch.equal(rank0[k], rank1[k]) for k in _masks(rank0))  # 196 positions differed before
    assert _agreement(_masks(rank0), _masks(one_process("wanda"))) >= 0.99


@pytest.mark.slow
def test_run_glue_sparse_with_fsdp_on_two_cpu_processes(pretrained, data_dir, tmp_path):
    """The documented command, accelerate_configs/fsdp.yaml on two CPU processes, mask-PoE: results, card and masks
    written once."""
    out = tmp_path / "fsdp"
    args = mnli_run_args(pretrained, data_dir, out, train=32, eval=16, ood=16, batch=4)
    run = [*args, "--do_train", "--max_steps", "4", "--pruning", "mask", "--loss", "poe", "--bias_model", "overlap"]
    launch_args = ["--config_file", str(ROOT / "accelerate_configs" / "fsdp.yaml"), "--main_process_port", "29519"]
    done = _accelerate_launch(launch_args, [*run, "--threshold_update_interval", "2"])
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((out / "all_results.json").read_text())
    assert (results["world_size"], results["distributed_type"], results["global_train_batch_size"]) == (2, "FSDP", 8)
    assert abs(results["sparsity"] - 0.5) < 1e-6
    assert "| processes | 2 (FSDP) |" in (out / "README.md").read_text()
    _, masks = read_masks(out)
    assert sum(int((~m.bool()).sum()) for m in masks.values()) == sum(m.numel() // 2 for m in masks.values())
