"""FreeLB under two CPU processes (torchrun, gloo): the first K−1 passes skip the all-reduce, the last one
synchronises the accumulated gradients, so two processes of 4 examples train as one process of 8.

Run as a script, this file is the worker: `python test_freelb_ddp.py OUT PER_DEVICE_BATCH`.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).resolve()


def worker(out: str, per_device_batch: int) -> None:
    for path in (str(HERE.parents[1]), str(HERE.parents[2])):  # tests/ (conftest, trainer) and the repository
        if path not in sys.path:
            sys.path.insert(0, path)
    from conftest import tiny_model
    from training.ddp_helpers import ddp_cpu_args, without_dropout
    from training.helpers import synthetic_nli, tiny_tokenizer

    from hf_srnets.masking import SRNetModel
    from hf_srnets.pruning import ThresholdConfig
    from hf_srnets.training.collator import SRNetDataCollator
    from hf_srnets.training.trainer import SRNetTrainer

    model = without_dropout(tiny_model("bert"))
    srnet = SRNetModel(model, ThresholdConfig(sparsity=0.5, threshold_update_interval=100, trainable_classifier=True))
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer = tiny_tokenizer(Path(tmp))
        args = ddp_cpu_args(
            os.path.join(out, "run"),
            per_device_batch,
            max_steps=3,
            learning_rate=1e-2,
            mask_learning_rate=0.05,
            loss="poe",
            step_objective="freelb",
            # δ_0 = 0 (adv_init_mag): no draw that would differ between the splits of the batch
            step_objective_options={"adv_steps": 3, "adv_lr": 0.3, "adv_init_mag": 0.0},
            logging_steps=1,
        )
        data = synthetic_nli(tokenizer, n=48)
        trainer = SRNetTrainer(model=srnet, args=args, train_dataset=data, data_collator=SRNetDataCollator(tokenizer))
        trainer.train()
    state = {name: param.detach().clone() for name, param in srnet.named_parameters() if param.requires_grad}
    state["world_size"] = torch.tensor(trainer.args.world_size)
    torch.save(state, os.path.join(out, f"rank{os.environ.get('RANK', 0)}.pt"))


@pytest.mark.slow
def test_two_processes_train_as_one(tmp_path):
    from training.ddp_helpers import launch

    out = tmp_path / "ddp"
    out.mkdir()
    launch(HERE, 2, out, 4)  # 2 processes of 4 examples
    ddp = [torch.load(out / f"rank{rank}.pt") for rank in range(2)]
    worker(str(tmp_path), 8)  # one process, in this one
    single = torch.load(tmp_path / "rank0.pt")
    assert int(ddp[0].pop("world_size")) == int(ddp[1].pop("world_size")) == 2 and int(single.pop("world_size")) == 1
    assert single.keys() == ddp[0].keys() and len(single) > 10
    for key, value in single.items():
        assert torch.equal(ddp[0][key], ddp[1][key]), key
        assert torch.allclose(ddp[0][key], value, rtol=1e-4, atol=1e-6), key


if __name__ == "__main__":
    worker(sys.argv[1], int(sys.argv[2]))
