"""What a launch gave the run (issue 53): its processes, their distributed type and the batch each step sees.

`launch_facts` are recorded in `all_results.json` and stated on the card, so that a run says whether it ran as asked:
`world_size` processes of distributed type `distributed_type` (accelerate's: `NO`, `MULTI_CPU`, `MULTI_GPU`, `FSDP`,
`DEEPSPEED`, ...), each with `per_device_train_batch_size` examples (times the GPUs of a DataParallel process) and
`gradient_accumulation_steps` steps before an update: `global_train_batch_size` examples per update.

`accelerate launch --cpu --num_processes N` (N > 1) starts accelerate's simple launcher, which runs the script once,
in one process, whatever N is (accelerate 1.15: every `--cpu` launch goes to it); it leaves `MASTER_ADDR` set and no
`WORLD_SIZE`. `single_process_launch_warning` recognises that launch and says what the run got and the command that
starts several CPU processes.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

logger = logging.getLogger(__name__)

MULTI_CPU_COMMAND = (
    "accelerate launch --multi_gpu --num_processes N run_glue_sparse.py ... --use_cpu true (accelerate's "
    "multi-process launcher; without a GPU the processes join with gloo), or torchrun --standalone "
    "--nproc_per_node N run_glue_sparse.py ... --use_cpu true --ddp_backend gloo"
)


def launch_facts(args: Any) -> dict[str, Any]:
    """The processes and batch of a run of `TrainingArguments` `args` (module docstring)."""
    state = getattr(args, "distributed_state", None)
    distributed = getattr(getattr(state, "distributed_type", None), "value", "NO")
    world = int(args.world_size)
    return {
        "world_size": world,
        "distributed_type": str(distributed),
        "per_device_train_batch_size": int(args.per_device_train_batch_size),
        "gradient_accumulation_steps": int(args.gradient_accumulation_steps),
        "global_train_batch_size": int(args.train_batch_size) * world * int(args.gradient_accumulation_steps),
    }


def single_process_launch_warning(facts: Mapping[str, Any], env: Mapping[str, str] | None = None) -> str | None:
    """The warning for a run that `accelerate launch --cpu` asked to run in several processes and that runs in one;
    None for any other launch."""
    env = os.environ if env is None else env
    asked_several = env.get("ACCELERATE_USE_CPU", "").lower() == "true" and "MASTER_ADDR" in env
    if not asked_several or "WORLD_SIZE" in env or facts["world_size"] != 1:
        return None
    return (
        "accelerate launch --cpu started one process: with --cpu, accelerate runs its simple launcher, which ignores "
        f"--num_processes. This run has 1 process and a global batch of {facts['global_train_batch_size']} "
        f"(--per_device_train_batch_size {facts['per_device_train_batch_size']}), not the N processes asked for. For "
        f"several CPU processes use {MULTI_CPU_COMMAND}"
    )


def engine_warning(args: Any, facts: Mapping[str, Any]) -> str | None:
    """The warning for `--fsdp` or `--deepspeed` given to a run that does not run under it: on the CPU (`--use_cpu`)
    accelerate 1.15 makes a one-process run `NO` and ignores them, and a multi-process run plain DDP (`MULTI_CPU`),
    which hf_srnets then shards for `--fsdp` (`training.fsdp`) but not for `--deepspeed`."""
    engines = {"--fsdp": "FSDP", "--deepspeed": "DEEPSPEED"}
    ignored = [f for f, engine in engines.items() if getattr(args, f[2:], None) and facts["distributed_type"] != engine]
    if not ignored:
        return None
    return (
        f"{' and '.join(ignored)} given, but the run's distributed type is {facts['distributed_type']} with "
        f"{facts['world_size']} process(es): on the CPU, --fsdp shards only with several processes and --deepspeed "
        "not at all. Each process holds the whole model; see docs/scale.md"
    )


def log_launch(args: Any, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Log the launch's facts (and warn about a launch that gave fewer processes than asked); return the facts."""
    facts = launch_facts(args)
    logger.info(
        "Launch: %d process(es), distributed type %s, %d examples per device, %d accumulation step(s): a global batch "
        "of %d",
        facts["world_size"],
        facts["distributed_type"],
        facts["per_device_train_batch_size"],
        facts["gradient_accumulation_steps"],
        facts["global_train_batch_size"],
    )
    for warning in (single_process_launch_warning(facts, env), engine_warning(args, facts)):
        if warning:
            logger.warning(warning)
    return facts
