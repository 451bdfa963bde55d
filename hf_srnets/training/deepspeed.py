"""DeepSpeed ZeRO for SRNet runs (issue 53): `--deepspeed` on CPU processes, ZeRO-3's units for masked layers, and
the one combination refused.

**CPU processes.** accelerate 1.15 turns the DeepSpeed plugin the Trainer builds from `--deepspeed CONFIG` into
distributed type `DEEPSPEED` only off the CPU: a `--use_cpu` run with several processes silently becomes plain DDP.
DeepSpeed itself trains on the CPU (its CPU accelerator, gloo); `enable_cpu_deepspeed` makes the switch accelerate
leaves out, so a multi-process `--use_cpu --ddp_backend gloo --deepspeed CONFIG` run is the ZeRO run it asks for.

**What the masks need** (`pruning.sharding.full_parameters` does it for every method):
- stages 1 and 2 keep an fp32 copy of the trainable parameters in the optimizer and copy it back after each step:
  a weight a method writes between steps (pruned weights set to 0, θ_0 put back) is also written into that copy;
- stage 3 partitions every parameter: the code that runs between steps gathers them, and a masked layer, which reads
  its base layer's weight without calling it, is one ZeRO-3 unit (`set_zero3_units`). The model's input embeddings'
  output is made to require a gradient (transformers' `enable_input_require_grads`, as PEFT does under ZeRO-3):
  otherwise ZeRO-3 releases the first layer's mask scores before their gradient arrives.

**Loading.** With a ZeRO-3 config in the `TrainingArguments`, transformers' `from_pretrained` partitions the weights
while loading (`deepspeed.zero.Init`); the masked layers, built after loading from the weights' shapes, need whole
weights. `whole_model_loading(args)` loads without it (the runner uses it): each process holds the whole model once,
until the Trainer's start partitions it. Scripts that build an `SRNetModel` themselves load the model inside it, or
before creating the `TrainingArguments`.

**Refused.** A method with a penalty on its mask parameters (`PruningMethod.regularization`, e.g. L0's expected
number of open gates) computes it in `compute_loss`, outside any forward, where ZeRO-3's parameters are empty.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from ..errors import InputError
from ..pruning.base import PruningMethod

logger = logging.getLogger(__name__)


def check_deepspeed_masks(method: PruningMethod, zero_stage: int) -> None:
    """InputError for a pruning method ZeRO stage `zero_stage` would get wrong (module docstring)."""
    if zero_stage == 3 and type(method).regularization is not PruningMethod.regularization:
        raise InputError(
            f"--deepspeed with ZeRO stage 3 and --pruning {method.name}: its penalty on the mask "
            "parameters is computed outside the forward pass, where ZeRO-3's partitioned parameters are empty. Use "
            "ZeRO stage 2 (accelerate_configs/deepspeed_zero2.yaml) or FSDP (accelerate_configs/fsdp.yaml)."
        )


def wants_cpu_deepspeed(args: Any) -> bool:
    """Whether DeepSpeed was asked (`--deepspeed CONFIG`) for a `--use_cpu` run."""
    return getattr(args, "deepspeed_plugin", None) is not None and bool(args.use_cpu)


def enable_cpu_deepspeed(accelerator: Any, args: Any) -> Any:
    """Make `accelerator`'s (shared) state DEEPSPEED with the plugin of `args` (`TrainingArguments` with
    `--deepspeed`); return the plugin. InputError for one process: DeepSpeed would look for MPI to start a group."""
    from accelerate.state import PartialState
    from accelerate.utils import DistributedType

    state = accelerator.state
    if state.num_processes == 1:
        raise InputError(
            "--deepspeed with --use_cpu in one process: on the CPU, DeepSpeed runs in a process group of several "
            "processes. Start them with torchrun (torchrun --standalone --nproc_per_node 2 run_glue_sparse.py "
            "--use_cpu --ddp_backend gloo --deepspeed accelerate_configs/deepspeed_zero2.json ...) or drop --deepspeed."
        )
    plugin = args.deepspeed_plugin
    plugin.set_mixed_precision(state.mixed_precision)
    plugin.select(_from_accelerator_state=True)
    state.deepspeed_plugins = plugin
    # both shared states: every later AcceleratorState() copies the process state's type over its own
    PartialState().distributed_type = state.distributed_type = DistributedType.DEEPSPEED
    logger.info("DeepSpeed ZeRO stage %d on %d CPU processes (gloo)", plugin.zero_stage, state.num_processes)
    return plugin


def set_zero3_units(srnet: Any) -> None:
    """Each masked layer of `srnet` one ZeRO-3 unit (a "leaf": its forward gathers its own and its base layer's
    parameters), and the input embeddings' output requiring a gradient (module docstring)."""
    from deepspeed.utils import set_z3_leaf_modules

    classes = list({type(layer) for layer in srnet.masked_layers().values()})
    if classes:
        set_z3_leaf_modules(srnet, classes)
    srnet.base_model.enable_input_require_grads()


@contextlib.contextmanager
def whole_model_loading(args: Any) -> Iterator[None]:
    """Within the block, `from_pretrained` loads whole weights even when `args` holds a ZeRO-3 config (module
    docstring); the config is active again after it."""
    config = getattr(args, "hf_deepspeed_config", None)
    if config is None or not config.is_zero3():
        yield
        return
    from transformers.integrations.deepspeed import set_hf_deepspeed_config, unset_hf_deepspeed_config

    unset_hf_deepspeed_config()
    try:
        yield
    finally:
        set_hf_deepspeed_config(config)
