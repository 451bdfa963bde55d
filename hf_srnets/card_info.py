"""What a run's model card says about it: datasets, search schedule, load snippet and training arguments."""

from __future__ import annotations

from typing import Any

from .arguments import DataArguments, ModelArguments
from .data.tasks import SplitSource
from .training_args import SRNetTrainingArguments

TASK_DATASETS = {
    "mnli": ["nyu-mll/glue", "jhu-cogsci/hans"],
    "qqp": ["nyu-mll/glue", "google-research-datasets/paws"],
}


def card_dataset(name: str, source: SplitSource) -> dict[str, Any]:
    """The model-index `dataset` entry: the Hub id when the set is on the Hub, else its name."""
    entry: dict[str, Any] = {"name": name, "type": source.hub_path or name}
    if source.hub_config:
        entry["config"] = source.hub_config
    if source.hub_split:
        entry["split"] = source.hub_split
    return entry


def schedule_description(model_args: ModelArguments) -> str | None:
    if model_args.mask_from:
        return f"weights fine-tuned in isolation under the fixed masks of `{model_args.mask_from}` (paradigm b)"
    if model_args.pruning in ("imp", "imp-rw"):
        return (
            f"iterative magnitude pruning (Algorithm 1): {model_args.imp_prune_ratio:.0%} of each matrix every "
            f"{model_args.imp_interval} of training up to {model_args.sparsity:.0%}"
            + (", weights rewound to the starting checkpoint" if model_args.pruning == "imp-rw" else "")
        )
    if model_args.pruning != "mask":
        return None
    init = f"{model_args.mask_init} init (appendix Eq. {1 if model_args.mask_init == 'hard' else 2})"
    if model_args.initial_sparsity is None:
        return f"mask training, sparsity fixed at {model_args.sparsity}, {init}"
    return (
        f"mask training, cubic sparsity schedule {model_args.initial_sparsity} -> {model_args.sparsity} "
        f"(reached at {model_args.schedule_end} of training), {init}"
    )


def merged_usage(path: str) -> str:
    return (
        "from transformers import AutoModelForSequenceClassification\n"
        f'model = AutoModelForSequenceClassification.from_pretrained("{path}")  # pruned weights are exactly 0'
    )


def usage_snippet(model_args: ModelArguments, output_dir: str) -> str:
    if model_args.pruning == "none":
        return (
            f"from transformers import AutoModelForSequenceClassification\n"
            f'model = AutoModelForSequenceClassification.from_pretrained("{output_dir}")'
        )
    return (
        "from transformers import AutoModelForSequenceClassification\n"
        "from hf_srnets.masking import SRNetModel\n\n"
        f'base = AutoModelForSequenceClassification.from_pretrained("{model_args.model_name_or_path}")\n'
        f'srnet = SRNetModel.from_pretrained(base, "{output_dir}")\n'
        "model = srnet.merge_and_unload()  # a plain transformers model, pruned weights are 0"
    )


def card_training_args(
    model_args: ModelArguments, data_args: DataArguments, args: SRNetTrainingArguments, num_train: int
) -> dict[str, Any]:
    out = {
        "pruning": model_args.pruning,
        "loss": args.loss,
        "training examples": num_train,
        "learning_rate": args.learning_rate,
        "per_device_train_batch_size": args.per_device_train_batch_size,
        "num_train_epochs": args.num_train_epochs,
        "max_steps": args.max_steps,
        "seed": args.seed,
        "max_seq_length": data_args.max_seq_length,
    }
    if model_args.pruning == "mask":
        out.update(
            {
                "sparsity": model_args.sparsity,
                "initial_sparsity": model_args.initial_sparsity,
                "mask_init": model_args.mask_init,
                "mask_learning_rate": args.mask_learning_rate,
                "threshold_update_interval": model_args.threshold_update_interval,
                "select_best_after": args.select_best_after,
            }
        )
    return out
