"""Two CPU processes (torchrun, gloo, DDP) end with identical masks that agree with a one-process run: mask training,
and Wanda, whose calibration statistics are summed over the processes (each calibrated on its own batches before,
and the processes chose different masks)."""

from pathlib import Path

import pytest
import torch

from training.ddp_helpers import launch, mask_agreement, masks_of

WORKER = Path(__file__).with_name("ddp_worker.py")


@pytest.mark.slow
def test_two_processes_agree_with_each_other_and_with_one(tmp_path, one_process):
    launch(WORKER, 2, tmp_path, 4, "-", "mask,wanda")  # 2 processes of 4 examples
    for method in ("mask", "wanda"):
        rank0, rank1 = (torch.load(tmp_path / method / f"rank{r}.pt") for r in (0, 1))
        single = one_process(method)  # 1 process of 8
        assert int(rank0["world_size"]) == 2 and int(single["world_size"]) == 1
        assert not bool(rank0["sharded"])
        for key in rank0:
            assert torch.equal(rank0[key], rank1[key]), (method, key)  # wanda: 196 positions differed before
        assert float(single["flipped"]) > 0.02  # the search moved the masks: agreement below is not trivial
        assert mask_agreement(masks_of(rank0), masks_of(single)) >= 0.99, method
