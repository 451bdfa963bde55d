"""`pruning.sharding` under DeepSpeed ZeRO (one gloo process): a weight written between steps (what IMP and the
one-shot methods do) survives the next optimizer step, at stage 2 (whose fp32 copy in the optimizer would put the old
value back) and stage 3 (whose parameters are also partitioned: empty outside the block). The two-process runs of
every method are in tests/training/test_deepspeed.py."""

from __future__ import annotations

from importlib.util import find_spec

import pytest
import torch
import torch.distributed as dist
from torch import nn
from training.ddp_helpers import without_inference_kernel

from hf_srnets.pruning.sharding import full_parameters, is_sharded

# imported by the fixtures, not at collection (seconds per pytest-xdist worker)
pytestmark = pytest.mark.skipif(find_spec("deepspeed") is None, reason="DeepSpeed (optional): pip install deepspeed")


@pytest.fixture(scope="module")
def process_group(tmp_path_factory):
    """One gloo process for the module: DeepSpeed keeps the groups it derives from the first one."""
    without_inference_kernel()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LOCAL_RANK", "0")  # what a launcher sets; DeepSpeed's engine asks for it
        store = tmp_path_factory.mktemp("group") / "store"
        dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
        linear = torch.nn.functional.linear
        yield
        # a ZeRO-3 engine replaces F.linear for the whole process ("This will persist unless manually reset"): the
        # later tests of this pytest-xdist worker would run DeepSpeed's version (which fails on 0-width layers)
        torch.nn.functional.linear = linear
        dist.destroy_process_group()


@pytest.fixture
def engine(process_group, request):
    """A ZeRO engine (stage `request.param`) over a small model; AdamW with weight decay, so that the fp32 copy of a
    zeroed weight, if left as it was, would come back as a visibly nonzero value after a step."""
    import deepspeed

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.1, weight_decay=0.1)
    config = {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": request.param}}
    engine, *_ = deepspeed.initialize(model=model, optimizer=optimizer, config=config)
    return engine


def _step_without_gradient(engine) -> None:
    loss = engine(torch.ones(1, 4)).sum() * 0.0  # every gradient 0: the step only applies the decay
    engine.backward(loss)
    engine.step()


@pytest.mark.parametrize("engine", [2, 3], indirect=True)
def test_a_weight_zeroed_between_steps_stays_zero(engine):
    model = engine.module
    assert is_sharded(model) == (engine.zero_optimization_stage() == 3)
    with full_parameters(model):
        kept = model[0].weight[1].detach().clone()
        with torch.no_grad():
            model[0].weight[0].zero_()
    _step_without_gradient(engine)
    with full_parameters(model):
        assert torch.equal(model[0].weight[0], torch.zeros(4))  # 0 · (1 − lr · decay) stays 0
        torch.testing.assert_close(model[0].weight[1], kept * (1 - 0.1 * 0.1))  # the others decayed by the step
