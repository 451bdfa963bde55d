"""Worker for the multi-process tests: `torchrun --nproc_per_node N ddp_worker.py OUT BATCH [ENGINE [METHODS]]`.

Searches masks on a tiny BERT, BATCH examples per process, with each of METHODS (comma-separated, one after the
other in the same processes: `mask`, the default: mask training; `imp`, `l0`, `wanda`), under ENGINE: `-` (plain DDP,
the default), an FSDP strategy (`full_shard`, `shard_grad_op`) or DeepSpeed (`zero2`, `zero3`: the configs in
accelerate_configs/). Writes to OUT/METHOD/rank{R}.pt each rank's masks (the ticket the method saves), thresholds,
masked layers' base weights, whether the parameters were sharded and whether DeepSpeed's engine trained; the run's
output dir is OUT/METHOD/run.
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
from training.ddp_helpers import ddp_cpu_args, without_dropout, without_inference_kernel
from training.helpers import end_process_group, synthetic_nli, tiny_tokenizer

ROOT = Path(__file__).resolve().parents[2]
METHODS = {
    "mask": (ThresholdConfig(sparsity=0.5, threshold_update_interval=5), {"mask_learning_rate": 0.02}),
    "imp": (MagnitudeConfig(sparsity=0.3, imp_prune_ratio=0.1, imp_interval=0.1), {}),
    "l0": (L0Config(sparsity=0.5, l0_lambda=0.5), {"mask_learning_rate": 0.1}),
    "wanda": (WandaConfig(sparsity=0.5, calibration_samples=8), {}),
}


def main(out: str, per_device_batch: int, engine: str = "-", methods: str = "mask") -> None:
    for method in methods.split(","):
        search(os.path.join(out, method), per_device_batch, engine, method)
    end_process_group()


def engine_options(engine: str) -> dict:
    """The training arguments of an engine: `-` (DDP), an FSDP strategy, `zero2` / `zero3` (DeepSpeed)."""
    if engine == "-":
        return {}
    if engine.startswith("zero"):
        without_inference_kernel()
        return {"deepspeed": str(ROOT / "accelerate_configs" / f"deepspeed_{engine}.json")}  # the files users pass
    return {"fsdp": engine}  # units: BertLayer (`training.fsdp.set_default_units`)


def search(out: str, per_device_batch: int, engine: str, method: str) -> None:
    rank = int(os.environ.get("RANK", 0))
    torch.manual_seed(0)
    model = without_dropout(tiny_model("bert"))
    config, options = METHODS[method]
    srnet = SRNetModel(model, config)
    initial = srnet.method.saved_masks(srnet)
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer = tiny_tokenizer(Path(tmp))
        train = synthetic_nli(tokenizer, n=160)
        args = ddp_cpu_args(
            os.path.join(out, "run"), per_device_batch, max_steps=20, learning_rate=1e-3, loss="poe",
            logging_steps=10, **options, **engine_options(engine),
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
        state.update({f"{name}.base_weight": layer.base_layer.weight.detach().clone() for name, layer in layers})
    state["world_size"] = torch.tensor(trainer.args.world_size)
    state["sharded"] = torch.tensor(sharded)
    state["deepspeed"] = torch.tensor(type(trainer.model_wrapped).__name__ == "DeepSpeedEngine")
    flipped = sum(int((state[n] != initial[n]).sum()) for n in initial)
    state["flipped"] = torch.tensor(flipped / sum(m.numel() for m in initial.values()))
    torch.save(state, os.path.join(out, f"rank{rank}.pt"))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), *sys.argv[3:])
