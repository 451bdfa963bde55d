"""Two CPU processes (torchrun, gloo) end with identical masks that agree with a one-process run."""

from pathlib import Path

import pytest
import torch

from training.ddp_helpers import launch

WORKER = Path(__file__).with_name("ddp_worker.py")


def _folder(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


@pytest.mark.slow
def test_two_processes_agree_with_each_other_and_with_one(tmp_path):
    launch(WORKER, 2, _folder(tmp_path / "ddp"), 4)  # 2 processes of 4 examples
    launch(WORKER, 1, _folder(tmp_path / "single"), 8)  # 1 process of 8
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
