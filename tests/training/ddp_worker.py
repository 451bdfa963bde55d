"""Worker for the multi-process tests: `torchrun --nproc_per_node N ddp_worker.py OUT BATCH [FSDP [METHODS]]`.

Searches masks on a tiny BERT, BATCH examples per process, with each of METHODS (comma-separated, one after the
other in the same processes: `mask`, the default: mask training; `imp`, `l0`, `wanda`), as plain DDP or, with FSDP
`full_shard` / `shard_grad_op` (`-` for none), sharded; writes each rank's masks (the ticket the method saves),
thresholds and whether the parameters were sharded to OUT/METHOD/rank{R}.pt, and the run's output dir to
OUT/METHOD/run.
"""

import os
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conftest import tiny_model

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import L0Config, MagnitudeConfig, ThresholdConfig, WandaConfig
from hf_srnets.pruning.sharding import full_parameters, is_sharded
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer
from training.ddp_helpers import ddp_cpu_args, without_dropout
from training.helpers import end_process_group, synthetic_nli, tiny_tokenizer

METHODS = {
    "mask": (ThresholdConfig(sparsity=0.5, threshold_update_interval=5), {"mask_learning_rate": 0.02}),
    "imp": (MagnitudeConfig(sparsity=0.3, imp_prune_ratio=0.1, imp_interval=0.1), {}),
    "l0": (L0Config(sparsity=0.5, l0_lambda=0.5), {"mask_learning_rate": 0.1}),
    "wanda": (WandaConfig(sparsity=0.5, calibration_samples=8), {}),
}


def main(out: str, per_device_batch: int, fsdp: str = "-", methods: str = "mask") -> None:
    for method in methods.split(","):
        search(os.path.join(out, method), per_device_batch, fsdp, method)
    end_process_group()


def search(out: str, per_device_batch: int, fsdp: str, method: str) -> None:
    rank = int(os.environ.get("RANK", 0))
    torch.manual_seed(0)
    model = without_dropout(tiny_model("bert"))
    config, options = METHODS[method]
    srnet = SRNetModel(model, config)
    initial = srnet.method.saved_masks(srnet)
    engine = {"fsdp": fsdp} if fsdp != "-" else {}  # units: BertLayer (`training.fsdp.set_default_units`)
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer = tiny_tokenizer(Path(tmp))
        train = synthetic_nli(tokenizer, n=160)
        args = ddp_cpu_args(
            os.path.join(out, "run"), per_device_batch, max_steps=20, learning_rate=1e-3, loss="poe",
            logging_steps=10, **options, **engine,
        )  # fmt: skip
        trainer = SRNetTrainer(model=srnet, args=args, train_dataset=train, data_collator=SRNetDataCollator(tokenizer))
        trainer.train()
        trainer.save_model()
    sharded = is_sharded(srnet)
    with full_parameters(srnet):  # every rank gathers (under FSDP each holds a shard)
        state = dict(srnet.method.saved_masks(srnet))
        layers = srnet.masked_layers().items()
        state.update(
            {f"{name}.threshold": layer.threshold.clone() for name, layer in layers if hasattr(layer, "threshold")}
        )
    state["world_size"] = torch.tensor(trainer.args.world_size)
    state["sharded"] = torch.tensor(sharded)
    flipped = sum(int((state[n] != initial[n]).sum()) for n in initial)
    state["flipped"] = torch.tensor(flipped / sum(m.numel() for m in initial.values()))
    torch.save(state, os.path.join(out, f"rank{rank}.pt"))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), *sys.argv[3:])
