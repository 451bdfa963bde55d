"""FSDP for SRNet runs (issue 53): `--fsdp` on CPU processes, and FSDP2 units that BERT-family models can take.

**CPU processes.** `--fsdp` is honoured in a multi-process `--use_cpu` run (gloo), as on GPUs.

accelerate 1.15 turns the FSDP plugin the Trainer builds from `--fsdp` / `--fsdp_config` into distributed type
`FSDP` only on accelerators (CUDA, XPU, NPU, ...): a `--use_cpu` run with several processes becomes plain DDP
(`MULTI_CPU`) and holds the whole model in every process. torch's FSDP2 (`fully_shard`) itself shards on the CPU
with gloo, and accelerate's FSDP2 preparation works there unchanged. `enable_cpu_fsdp` makes the switch accelerate
leaves out: the state's distributed type becomes `FSDP` with the Trainer's plugin, so the model is sharded
(`full_shard`: parameters resharded after forward; `shard_grad_op`: kept whole until backward), and the Trainer saves
and loads through its FSDP paths. FSDP1 (`fsdp_config` version 1, deprecated by transformers) is refused there: its
wrapper needs an accelerator device.

Use: sharding on CPU processes is for trying an FSDP set-up, or a model one process cannot hold, without GPUs; it is
slower than DDP (every forward gathers the parameters).

**Units.** Without `transformer_layer_cls_to_wrap`, accelerate 1.15 shards every module class of the model's
`_no_split_modules` as a unit, then the input embeddings as one more. For BERT-family models the first list holds
`BertEmbeddings`, which contains the input embeddings: they would be sharded twice and `fully_shard` fails (on GPUs
too). `set_default_units` leaves such classes out (BERT: `BertLayer` only; the embeddings get their own unit).
"""

from __future__ import annotations

import logging
import os
from typing import Any

from ..errors import InputError

logger = logging.getLogger(__name__)


def embedding_free_units(model: Any) -> list[str] | None:
    """The classes of `model._no_split_modules` whose modules do not hold its input embeddings; None when it has
    none to leave out (accelerate's default is then right)."""
    names = sorted(getattr(model, "_no_split_modules", None) or ())
    embeddings = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    if not names or embeddings is None:
        return None
    holding = {type(m).__name__ for m in model.modules() if any(child is embeddings for child in m.modules())}
    units = [name for name in names if name not in holding]
    return units if len(units) < len(names) else None


def set_default_units(plugin: Any, model: Any) -> None:
    """Wrap `embedding_free_units(model)` when the plugin wraps transformer layers and names none."""
    from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy

    policy = getattr(plugin.auto_wrap_policy, "func", plugin.auto_wrap_policy)
    units = embedding_free_units(model)
    if policy is transformer_auto_wrap_policy and plugin.transformer_cls_names_to_wrap is None and units:
        plugin.transformer_cls_names_to_wrap = units
        logger.info("FSDP units: %s (the input embeddings in a unit of their own)", ", ".join(units))


def wants_cpu_fsdp(accelerator: Any, args: Any) -> bool:
    """Whether FSDP was asked (`--fsdp`, or an accelerate config of `distributed_type: FSDP`, which `accelerate
    launch` passes as `ACCELERATE_USE_FSDP`) for a multi-process CPU run that accelerate made plain DDP."""
    from accelerate.utils import DistributedType

    asked = args.fsdp_plugin_args is not None or os.environ.get("ACCELERATE_USE_FSDP", "").lower() == "true"
    return asked and accelerator.state.distributed_type == DistributedType.MULTI_CPU


def enable_cpu_fsdp(accelerator: Any, args: Any) -> Any:
    """Make `accelerator`'s (shared) state FSDP with the plugin of `args` (`TrainingArguments` with `--fsdp`);
    return the plugin. InputError for FSDP1, which does not run on the CPU."""
    from accelerate.state import PartialState
    from accelerate.utils import DistributedType, FullyShardedDataParallelPlugin

    # the Trainer's arguments, else accelerate's config (the plugin reads its FSDP_* environment variables)
    plugin_args = dict(args.fsdp_plugin_args or {})
    version = plugin_args["fsdp_version"] if plugin_args else os.environ.get("FSDP_VERSION", "1")
    if int(version) != 2:
        raise InputError(
            "--fsdp on CPU processes needs FSDP2 (torch's fully_shard); fsdp_config asks for version "
            f"{version} (FSDP1, whose wrapper needs a GPU). Drop 'version' from --fsdp_config (transformers' default "
            "is 2) or set it to 2; in an accelerate config, fsdp_version: 2 (accelerate's default is 1)."
        )
    plugin = FullyShardedDataParallelPlugin(**plugin_args)
    state = accelerator.state
    # both shared states: every later AcceleratorState() copies the process state's type over its own
    PartialState().distributed_type = state.distributed_type = DistributedType.FSDP
    state.fsdp_plugin = plugin
    logger.info(
        "FSDP2 on %d CPU processes (gloo): parameters sharded, %s after forward",
        state.num_processes,
        "resharded" if plugin.reshard_after_forward else "kept whole",
    )
    return plugin
