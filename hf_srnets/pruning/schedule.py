"""Schedules over a run, shared by the methods: fractions of the run turned into steps, and a value at a step.

A method gives its schedule in fractions of the run's T = `max_steps` optimisation steps; these functions turn them
into steps and give the value at step t. Each rounding below is the one the method has always used (a saved run
resumes and reproduces bit for bit):

- `ramp_steps(a, b, T)`: the ramp over the fractions [a, b] of the run starts at t_0 = round(a·T) and ends at
  t_1 = max(round(b·T), t_0 + 1), so it is at least one step long (mask training's `schedule_start`/`schedule_end`).
- `cubic_ramp(t, t_0, t_1, v_i, v_f)`: v_t = v_f + (v_i − v_f)·(1 − (t − t_0)/(t_1 − t_0))³ for t_0 ≤ t ≤ t_1, v_i
  before t_0 and v_f after t_1: Zhu & Gupta (2018, "To prune, or not to prune"), Eq. 1, the sparsity ramp s_i -> s
  of mask training (Win-win §5.2, appendix B.3.3).
- `linear_warmup(t, t_0, w, v)`: v_t = v·clip((t − t_0)/w, 0, 1); w ≤ 0 switches v on at t_0 (0 before). t_0 = a·T
  and w = b·T are not rounded: the λ warm-up of the L0 penalty in the released code of Robust Tickets (Zheng et
  al. 2022, ruizheng20/robust_ticket; Eq. 8 with a constant λ when a = b = 0).
- `interval_in_steps(f, T)` and the staircase of rounds: a round every Δt = max(1, ⌊f·T⌋) steps from step 0 (at steps
  0, Δt, 2Δt, …), k rounds in all; after step t (its own round included) min(⌊t/Δt⌋ + 1, k) rounds are done, and r
  rounds of Δs each give the sparsity s = r·Δs: iterative magnitude pruning (Win-win Algorithm 1, lines 5-8; its
  k = s/Δs is `magnitude.rounds.imp_rounds`).
"""

from __future__ import annotations

import math


def ramp_steps(start_fraction: float, end_fraction: float, max_steps: int) -> tuple[int, int]:
    """(t_0, t_1) of a ramp over the fractions [a, b] of a run of T steps: round(a·T), max(round(b·T), t_0 + 1)."""
    start = round(start_fraction * max_steps)
    return start, max(round(end_fraction * max_steps), start + 1)


def cubic_ramp(step: int, start_step: int, end_step: int, initial: float, final: float) -> float:
    """Zhu & Gupta (2018), Eq. 1: v_t = v_f + (v_i − v_f)·(1 − (t − t_0)/(t_1 − t_0))³ for t_0 ≤ t ≤ t_1.

    v_i before t_0, v_f after t_1.
    """
    if step <= start_step:
        return initial
    if step >= end_step:
        return final
    progress = (step - start_step) / (end_step - start_step)
    return final + (initial - final) * (1.0 - progress) ** 3


def linear_warmup(step: int, start: float, length: float, value: float) -> float:
    """v_t = v·clip((t − t_0)/w, 0, 1) from 0 to v over w steps from t_0 (both may fall between steps); w ≤ 0: v
    from t_0 on, 0 before."""
    if length <= 0:
        return value if step >= start else 0.0
    return value * min(1.0, max(0.0, (step - start) / length))


def interval_in_steps(fraction: float, max_steps: int) -> int:
    """Δt in steps of an interval of f of a run of T steps: max(1, ⌊f·T⌋)."""
    return max(1, math.floor(fraction * max_steps))


def is_round_step(step: int, interval: int) -> bool:
    """Whether a round of the staircase falls at step t: t is a multiple of Δt (0, Δt, 2Δt, …)."""
    return step % interval == 0


def staircase_rounds(step: int, interval: int, rounds: int) -> int:
    """Rounds done after step t, its own round included, of k rounds at steps 0, Δt, 2Δt, …: min(⌊t/Δt⌋ + 1, k)."""
    return min(step // interval + 1, rounds)


def staircase_value(rounds: int, increment: float) -> float:
    """The value after r rounds of Δs each: r·Δs (IMP's sparsity, s = k·Δs after the k-th round)."""
    return rounds * increment
