"""What DeepSpeed ZeRO can run with masks (issue 53), checked when the Trainer starts instead of a wrong result later.

- ZeRO-3 partitions every parameter; outside its forward a partitioned parameter is an empty tensor, so the exact
  ⌊s·n⌋ thresholds and magnitude selections that run between steps would read nothing (FSDP's `DTensor` shards are
  gathered by `pruning.sharding`; ZeRO-3's are not).
- ZeRO (every stage) keeps its own fp32 copy of the trainable parameters in the optimizer and copies it back after each
  step: a weight a method writes between steps (pruned weights set to 0 under fixed masks and IMP, θ_0 put back by a
  one-shot method) would come back at the next step.

Mask training and L0 at ZeRO-1/2 change no parameter between steps (a threshold update writes buffers); they are
allowed, with a warning that no run of them has been checked. Untested on GPUs; docs/scale.md.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from ..errors import InputError
from ..pruning.fixed_mask import FixedMaskCallback
from ..pruning.oneshot import OneShotCallback

logger = logging.getLogger(__name__)

USE_INSTEAD = "Use FSDP (--fsdp full_shard, or accelerate launch --config_file accelerate_configs/fsdp.yaml) or DDP."


def check_deepspeed_masks(callbacks: Iterable[Any], zero_stage: int) -> None:
    """InputError for masks DeepSpeed ZeRO stage `zero_stage` would get wrong (module docstring), given the Trainer's
    callbacks (those of the pruning method included); a warning for what it may get right, untested."""
    if zero_stage == 3:
        raise InputError(
            "--deepspeed with ZeRO stage 3 and masks: ZeRO-3's partitioned parameters are empty outside the forward "
            f"pass, so the masks' exact thresholds and selections would be computed from nothing. {USE_INSTEAD}"
        )
    writers = sorted({type(c).__name__ for c in callbacks if isinstance(c, (FixedMaskCallback, OneShotCallback))})
    if writers:
        raise InputError(
            f"--deepspeed (ZeRO stage {zero_stage}) with a pruning method that writes weights between steps "
            f"({', '.join(writers)}: pruned weights set to 0, or the starting weights put back): ZeRO's own fp32 copy "
            f"of the weights would overwrite them at the next step. {USE_INSTEAD}"
        )
    logger.warning(
        "--deepspeed (ZeRO stage %d) with masks is untested: the thresholds read whole score tensors, which ZeRO-%d "
        "keeps in every process, but no run has checked it (docs/scale.md)",
        zero_stage,
        zero_stage,
    )
