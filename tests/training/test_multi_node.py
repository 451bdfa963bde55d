"""Two "nodes" of one process each on this machine (torchrun --nnodes 2 with a rendezvous on localhost, gloo), the
launch several machines run one command each for (issue 53): the same masks as one process of the same global batch,
after a search that moved them (the worker of `test_distributed.py`)."""

from pathlib import Path

import pytest
import torch

from training.ddp_helpers import launch_nodes, mask_agreement, masks_of

WORKER = Path(__file__).with_name("ddp_worker.py")


@pytest.mark.slow
def test_two_nodes_of_one_process_agree_with_one_process_of_the_same_global_batch(tmp_path, one_process):
    launch_nodes(WORKER, 2, 29531, tmp_path, 4)  # 2 nodes x 1 process x 4 examples, mask training
    node0, node1 = (torch.load(tmp_path / "mask" / f"rank{r}.pt") for r in (0, 1))
    single = one_process("mask")  # 1 process of 8
    assert int(node0["world_size"]) == 2 and int(node1["world_size"]) == 2
    for key in node0:
        assert torch.equal(node0[key], node1[key]), key
    assert float(single["flipped"]) > 0.02  # the search moved the masks
    assert mask_agreement(masks_of(node0), masks_of(single)) >= 0.99
