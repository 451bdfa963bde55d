"""Two "nodes" of one process each on this machine (torchrun --nnodes 2 with a rendezvous on localhost, gloo), the
launch several machines run one command each for (issue 53): the same masks as one process of the same global batch,
after a search that moved them (the worker of `test_distributed.py`)."""

from pathlib import Path

import pytest
import torch

from training.ddp_helpers import launch, launch_nodes

WORKER = Path(__file__).with_name("ddp_worker.py")


@pytest.mark.slow
def test_two_nodes_of_one_process_agree_with_one_process_of_the_same_global_batch(tmp_path):
    (tmp_path / "nodes").mkdir()
    (tmp_path / "single").mkdir()
    launch_nodes(WORKER, 2, 29531, tmp_path / "nodes", 4)  # 2 nodes x 1 process x 4 examples
    launch(WORKER, 1, tmp_path / "single", 8)  # 1 process of 8
    node0, node1 = (torch.load(tmp_path / "nodes" / f"rank{r}.pt") for r in (0, 1))
    single = torch.load(tmp_path / "single" / "rank0.pt")
    assert int(node0["world_size"]) == 2 and int(node1["world_size"]) == 2
    for key in node0:
        assert torch.equal(node0[key], node1[key]), key
    assert float(single["flipped"]) > 0.02  # the search moved the masks
    masks = [k for k in node0 if not k.endswith("threshold") and k not in ("world_size", "flipped")]
    agree = sum(int((node0[k] == single[k]).sum()) for k in masks)
    total = sum(node0[k].numel() for k in masks)
    assert agree / total >= 0.99, agree / total
