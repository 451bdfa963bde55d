"""FSDP2 with masks on CPU processes (gloo), issue 53: `--fsdp full_shard` / `shard_grad_op` shards the model
(`training.fsdp`), and every method's masks come from whole tensors (`pruning.sharding`): mask training's exact
thresholds, IMP's magnitude rounds, L0's penalty and ticket, Wanda's calibration and selection give two sharded
processes of 4 examples the masks of one process of 8, after a search that moved them; the run saves them once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import mnli_run_args

from hf_srnets.pruning.random.method import read_masks
from training.ddp_helpers import assert_matches_one_process, engine_states
from training.test_launch import ROOT, _accelerate_launch

WORKER = Path(__file__).with_name("ddp_worker.py")
LAUNCHES = {"full_shard": "mask,imp,l0,wanda", "shard_grad_op": "mask,imp"}  # methods searched in each launch


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    return engine_states(tmp_path_factory, "fsdp", LAUNCHES, WORKER)


@pytest.mark.slow
@pytest.mark.parametrize(
    "fsdp, method", [(fsdp, method) for fsdp, methods in LAUNCHES.items() for method in methods.split(",")]
)
def test_sharded_processes_find_the_masks_of_one_process(fsdp, method, sharded, one_process):
    rank0, rank1, run = sharded(fsdp, method)
    single = one_process(method)
    assert bool(rank0["sharded"]) and not bool(single["sharded"])
    assert_matches_one_process(rank0, rank1, run, single, method)


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
