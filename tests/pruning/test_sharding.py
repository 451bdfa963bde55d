"""`pruning.sharding`: whole parameters of an FSDP2-sharded module for the code between steps, written back to the
shards; the split of calibration examples over processes; in-place state copies. One gloo process (world size 1) is
enough for `fully_shard` to turn parameters into `DTensor`s; the two-process runs are in tests/training/test_fsdp.py."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor

from hf_srnets.pruning import sharding
from hf_srnets.pruning.sharding import copy_state, full_parameters, is_sharded, process_share, whole


@pytest.fixture
def one_process_group(tmp_path):
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    yield init_device_mesh("cpu", (1,))
    dist.destroy_process_group()


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))


def test_without_sharding_nothing_is_swapped():
    model = _model()
    before = [id(p) for p in model.parameters()]
    with full_parameters(model):
        assert [id(p) for p in model.parameters()] == before
    assert not is_sharded(model)


def test_whole_parameters_inside_and_changes_reach_the_shards(one_process_group):
    model = _model()
    expected = model[0].weight.detach().clone()
    fully_shard(model, mesh=one_process_group)
    assert is_sharded(model) and isinstance(model[0].weight, DTensor)
    with full_parameters(model):
        weight = model[0].weight
        assert not isinstance(weight, DTensor) and torch.equal(weight, expected)
        with torch.no_grad():
            weight[1].zero_()  # what IMP or a one-shot method does between steps
    assert isinstance(model[0].weight, DTensor)  # the shard is back in the module
    expected[1] = 0.0
    assert torch.equal(model[0].weight.full_tensor(), expected)


def test_whole_gives_a_plain_sum_with_its_gradient(one_process_group):
    model = _model()
    fully_shard(model, mesh=one_process_group)
    total = whole(model[0].weight.sigmoid().sum())  # as the L0 penalty over sharded log α
    assert type(total) is torch.Tensor
    total.backward()
    assert model[0].weight.grad is not None


@pytest.mark.parametrize("world, shares", [(1, [8]), (2, [4, 4]), (3, [3, 3, 2])])
def test_process_share_splits_the_examples_and_adds_up(monkeypatch, world, shares):
    got = []
    for rank in range(world):
        monkeypatch.setattr(sharding, "_process", lambda rank=rank: (rank, world))
        got.append(process_share(8))
    assert got == shares


def test_copy_state_copies_in_place_and_names_a_missing_key():
    model, other = _model(), nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    weight = model[0].weight
    copy_state(model, other.state_dict())
    assert model[0].weight is weight and torch.equal(weight, other[0].weight)
    with pytest.raises(KeyError, match=r"0\.bias"):
        copy_state(model, {k: v for k, v in other.state_dict().items() if k != "0.bias"})


def test_a_parameter_two_modules_share_is_one_whole_tensor_written_back_once(one_process_group):
    model = _model()
    model[2].weight = nn.Parameter(torch.zeros(2, 3))
    model.add_module("twin", nn.Linear(3, 2))
    model.twin.weight = model[2].weight  # as the scores of a unit spanning two matrices
    fully_shard(model, mesh=one_process_group)
    with full_parameters(model):
        assert model.twin.weight is model[2].weight
        with torch.no_grad():
            model.twin.weight.fill_(1.0)  # written through one module
    assert model.twin.weight is model[2].weight
    assert torch.equal(model[2].weight.full_tensor(), torch.ones(2, 3))
