"""Mask training's sparsity schedule (Win-win §5.2, appendix B.3.3 and C.4): constant s, or the cubic ramp s_i -> s
of `hf_srnets.pruning.schedule` over the fractions [`schedule_start`, `schedule_end`] of the run."""

from __future__ import annotations

from ..schedule import cubic_ramp, ramp_steps
from .config import ThresholdConfig

cubic_sparsity = cubic_ramp  # Zhu & Gupta (2018), Eq. 1, the name mask training's schedule has always had


def sparsity_at(step: int, max_steps: int, config: ThresholdConfig) -> float:
    """Target sparsity at `step` of a run of `max_steps` optimisation steps."""
    if config.sparsity_schedule == "constant" or config.initial_sparsity is None:
        return config.sparsity
    start, end = ramp_steps(config.schedule_start, config.schedule_end, max_steps)
    return cubic_ramp(step, start, end, config.initial_sparsity, config.sparsity)


def schedule_end_step(max_steps: int, config: ThresholdConfig) -> int:
    """First step at which the target sparsity s is reached."""
    if config.sparsity_schedule == "constant" or config.initial_sparsity is None:
        return 0
    return ramp_steps(config.schedule_start, config.schedule_end, max_steps)[1]
