"""Worker for the multi-process test: `torchrun --nproc_per_node N ddp_worker.py OUT PER_DEVICE_BATCH`.

Trains masks on a tiny BERT and writes each rank's binary masks and thresholds to OUT/rank{R}.pt.
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
from hf_srnets.pruning import ThresholdConfig
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer
from training.ddp_helpers import ddp_cpu_args, without_dropout
from training.helpers import end_process_group, synthetic_nli, tiny_tokenizer


def main(out: str, per_device_batch: int) -> None:
    rank = int(os.environ.get("RANK", 0))
    torch.manual_seed(0)
    model = without_dropout(tiny_model("bert"))
    srnet = SRNetModel(model, ThresholdConfig(sparsity=0.5, threshold_update_interval=5))
    initial = srnet.binary_masks()
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer = tiny_tokenizer(Path(tmp))
        train = synthetic_nli(tokenizer, n=160)
        args = ddp_cpu_args(
            os.path.join(out, "run"), per_device_batch, max_steps=20, learning_rate=1e-3, mask_learning_rate=0.02,
            loss="poe", logging_steps=10,
        )  # fmt: skip
        trainer = SRNetTrainer(model=srnet, args=args, train_dataset=train, data_collator=SRNetDataCollator(tokenizer))
        trainer.train()
    state = {name: layer.binary_mask() for name, layer in srnet.masked_layers().items()}
    state.update({f"{name}.threshold": layer.threshold.clone() for name, layer in srnet.masked_layers().items()})
    state["world_size"] = torch.tensor(trainer.args.world_size)
    flipped = sum(int((state[n] != initial[n]).sum()) for n in initial)
    state["flipped"] = torch.tensor(flipped / sum(m.numel() for m in initial.values()))
    torch.save(state, os.path.join(out, f"rank{rank}.pt"))
    end_process_group()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
