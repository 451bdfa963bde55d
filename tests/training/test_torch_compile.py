"""`--torch_compile true` with masked layers (issue 53): every method's layers trace into one graph with no graph
break, the threshold updates (one per step here) and IMP's rounds recompile nothing, and the masks after the steps
equal eager training's. Batches are padded to one length, so the only thing that could add a graph is the masks'
own state. The trace is Dynamo's with the `eager` backend (what recompiles is decided there; inductor's code
generation takes ~40 s a model on this CPU): `bench/bench_torch_compile.py` times inductor against eager."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path

import pytest
import torch
import torch._dynamo
from conftest import tiny_model
from pruning.test_method_contract import contract_config
from torch._dynamo.utils import counters

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import PRUNING_METHODS
from hf_srnets.pruning.base import UNIT_GRANULARITIES
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer
from training.ddp_helpers import ddp_cpu_args, without_dropout
from training.helpers import synthetic_nli, tiny_tokenizer

STEPS = 8
# every method at element granularity, and mask training (whose per-layer tie flag once recompiled) at every one
CASES = sorted(
    {(method, "element") for method in PRUNING_METHODS}
    | {("threshold", g) for g in PRUNING_METHODS["threshold"].granularities}
)


def train(method: str, granularity: str, compiled: bool, workdir: Path) -> tuple[dict[str, torch.Tensor], dict]:
    """The masks after `STEPS` steps, and Dynamo's counters of the run."""
    torch.manual_seed(0)
    torch._dynamo.reset()
    counters.clear()
    start = without_dropout(tiny_model("bert"))
    srnet = SRNetModel(copy.deepcopy(start), contract_config(method, granularity, workdir, start))
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer = tiny_tokenizer(Path(tmp))
        args = ddp_cpu_args(
            str(Path(tmp) / "run"), 8, max_steps=STEPS, learning_rate=1e-3, mask_learning_rate=0.02,
            torch_compile=compiled, torch_compile_backend="eager" if compiled else None,
        )  # fmt: skip
        collator = SRNetDataCollator(tokenizer, pad_to_multiple_of=32)  # one sequence length: one shape
        trainer = SRNetTrainer(
            model=srnet, args=args, train_dataset=synthetic_nli(tokenizer, n=80), data_collator=collator
        )
        trainer.train()
    return srnet.binary_masks(), {
        "graphs": counters["stats"]["unique_graphs"],
        "breaks": sum(counters["graph_break"].values()),
    }


@pytest.mark.slow
@pytest.mark.parametrize(("method", "granularity"), CASES)
def test_compiled_training_keeps_one_graph_and_the_eager_masks(method, granularity, tmp_path):
    eager, _ = train(method, granularity, False, tmp_path)
    compiled, counted = train(method, granularity, True, tmp_path)
    assert counted == {"graphs": 1, "breaks": 0}, counted
    assert eager.keys() == compiled.keys()
    for name in eager:
        assert torch.equal(eager[name], compiled[name]), name


def test_the_cases_cover_every_method_and_every_unit_granularity_of_mask_training():
    assert {m for m, _ in CASES} == set(PRUNING_METHODS)
    assert set(UNIT_GRANULARITIES) <= {g for m, g in CASES if m == "threshold"}
