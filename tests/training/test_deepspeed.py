"""DeepSpeed ZeRO with masks on CPU processes (gloo), issue 53: `--use_cpu --deepspeed CONFIG` runs ZeRO
(`training.deepspeed`), and every method's masks and weights come out as with one process: mask training's exact
thresholds, IMP's magnitude rounds (the pruned weights written into ZeRO's fp32 copy), L0 at stage 2, Wanda's
calibration and selection; at stage 3 the parameters are partitioned and gathered for the code between steps
(`pruning.sharding`). Two processes of 4 examples against one of 8, after a search that moved the masks; the configs
are the files users pass (accelerate_configs/deepspeed_zero{2,3}.json)."""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path

import pytest
from conftest import mnli_run_args, tiny_model

from hf_srnets.errors import InputError
from hf_srnets.pruning.random.method import read_masks
from training.ddp_helpers import assert_matches_one_process, ddp_cpu_args, engine_states, launch
from training.test_launch import ROOT

pytestmark = pytest.mark.skipif(find_spec("deepspeed") is None, reason="DeepSpeed (optional): pip install deepspeed")

WORKER = Path(__file__).with_name("ddp_worker.py")
# L0 at stage 3 is refused (its penalty); Wanda at stage 2 reads replicated weights (it ran: masks of one process)
LAUNCHES = {"zero2": "mask,l0,imp", "zero3": "mask,imp,wanda"}


@pytest.fixture(scope="module")
def zero(tmp_path_factory):
    return engine_states(tmp_path_factory, "deepspeed", LAUNCHES, WORKER)


@pytest.mark.slow
@pytest.mark.parametrize(
    "stage, method", [(stage, method) for stage, methods in LAUNCHES.items() for method in methods.split(",")]
)
def test_zero_processes_find_the_masks_and_weights_of_one_process(stage, method, zero, one_process):
    rank0, rank1, run = zero(stage, method)
    single = one_process(method)
    assert bool(rank0["deepspeed"]) and not bool(single["deepspeed"])
    assert bool(rank0["sharded"]) == (stage == "zero3")
    assert_matches_one_process(rank0, rank1, run, single, method)


@pytest.mark.slow
def test_run_glue_sparse_with_zero_3_on_two_cpu_processes(pretrained, data_dir, tmp_path):
    """The documented command (torchrun, --use_cpu --ddp_backend gloo --deepspeed accelerate_configs/
    deepspeed_zero3.json), mask-PoE: ZeRO-3 recorded in the results and the card, the masks written once."""
    out = tmp_path / "zero3"
    args = mnli_run_args(pretrained, data_dir, out, train=32, eval=16, ood=16, batch=4)
    config = ROOT / "accelerate_configs" / "deepspeed_zero3.json"
    run = [*args, "--do_train", "--max_steps", "4", "--pruning", "mask", "--loss", "poe", "--bias_model", "overlap",
           "--threshold_update_interval", "2", "--ddp_backend", "gloo", "--deepspeed", str(config)]  # fmt: skip
    launch(WORKER.with_name("deepspeed_cli.py"), 2, *run)
    results = json.loads((out / "all_results.json").read_text())
    assert (results["world_size"], results["distributed_type"], results["global_train_batch_size"]) == (
        2, "DEEPSPEED", 8
    )  # fmt: skip
    assert abs(results["sparsity"] - 0.5) < 1e-6
    assert "| processes | 2 (DEEPSPEED) |" in (out / "README.md").read_text()
    _, masks = read_masks(out)
    assert sum(int((~m.bool()).sum()) for m in masks.values()) == sum(m.numel() // 2 for m in masks.values())


def test_deepspeed_in_one_cpu_process_names_the_command_that_works(tmp_path, monkeypatch):
    from accelerate.state import AcceleratorState
    from transformers.integrations.deepspeed import unset_hf_deepspeed_config

    from hf_srnets.training.trainer import SRNetTrainer

    # accelerate sets ACCELERATE_USE_DEEPSPEED in the process: later TrainingArguments would all ask for DeepSpeed
    monkeypatch.setenv("ACCELERATE_USE_DEEPSPEED", "false")  # restored (unset) after the test
    args = ddp_cpu_args(str(tmp_path), 4, deepspeed=str(ROOT / "accelerate_configs" / "deepspeed_zero2.json"))
    try:
        with pytest.raises(InputError, match=r"one process.*torchrun --standalone --nproc_per_node 2"):
            SRNetTrainer(model=tiny_model("bert"), args=args)
    finally:
        AcceleratorState._reset_state(reset_partial_state=True)
        unset_hf_deepspeed_config()
