"""Sparsity schedules for mask training (Win-win §5.2, appendix B.3.3 and C.4)."""

from __future__ import annotations

from .config import ThresholdConfig


def cubic_sparsity(step: int, start_step: int, end_step: int, initial: float, final: float) -> float:
    """Zhu & Gupta (2018), Eq. 1: s_t = s_f + (s_i − s_f)·(1 − (t − t_0)/(t_1 − t_0))³ for t_0 ≤ t ≤ t_1.

    s_i before t_0, s_f after t_1.
    """
    if step <= start_step:
        return initial
    if step >= end_step:
        return final
    progress = (step - start_step) / (end_step - start_step)
    return final + (initial - final) * (1.0 - progress) ** 3


def sparsity_at(step: int, max_steps: int, config: ThresholdConfig) -> float:
    """Target sparsity at `step` of a run of `max_steps` optimisation steps."""
    if config.sparsity_schedule == "constant" or config.initial_sparsity is None:
        return config.sparsity
    start = round(config.schedule_start * max_steps)
    end = max(round(config.schedule_end * max_steps), start + 1)
    return cubic_sparsity(step, start, end, config.initial_sparsity, config.sparsity)


def schedule_end_step(max_steps: int, config: ThresholdConfig) -> int:
    """First step at which the target sparsity s is reached."""
    if config.sparsity_schedule == "constant" or config.initial_sparsity is None:
        return 0
    start = round(config.schedule_start * max_steps)
    return max(round(config.schedule_end * max_steps), start + 1)
