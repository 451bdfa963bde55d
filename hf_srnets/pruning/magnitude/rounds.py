"""How many rounds IMP takes, and the per-round pruning step (Win-win Algorithm 1, lines 5-8)."""

from __future__ import annotations

import math

from ...errors import InputError


def imp_rounds(target_sparsity: float, prune_ratio: float = 0.1, interval: float = 0.1, *, rewind: bool = False) -> int:
    """k, the number of pruning rounds of Algorithm 1 (s = k·Δs); a clear error for settings it cannot run.

    The rounds fall at 0, Δt, …, (k−1)·Δt (fractions of the run); `imp` then trains Δt more at the target, so
    it needs k·Δt ≤ 1, and `imp-rw` stops right after the k-th round, so it needs (k−1)·Δt ≤ 1. Otherwise the
    run would end below the target sparsity: refuse it and say which sparsity is reachable and which interval
    would reach the target.
    """
    rounds = target_sparsity / prune_ratio if 0 < prune_ratio < 1 else 0.0
    if abs(rounds - round(rounds)) > 1e-6 or round(rounds) < 1:
        raise InputError(
            f"IMP needs a target sparsity that is a multiple k >= 1 of the pruning ratio: s = {target_sparsity}, "
            f"Δs = {prune_ratio} (e.g. --sparsity 0.5 with --imp_prune_ratio 0.1)."
        )
    if not 0 < interval <= 1:
        raise InputError(f"The IMP interval is a fraction of the training steps in (0, 1], got {interval}")
    k = round(rounds)
    spans = k - 1 if rewind else k  # intervals of Δt the run must hold
    if spans * interval > 1 + 1e-9:
        fitting = math.floor(1 / interval + 1e-9) + (1 if rewind else 0)  # rounds that fit in the run
        reachable = min(fitting, k - 1) * prune_ratio
        needed = math.floor(1000 / spans) / 1000
        method = "imp-rw" if rewind else "imp"
        timeline = f"(k−1)·Δt = {spans} × {interval}" if rewind else f"k·Δt = {k} × {interval}"
        raise InputError(
            f"--pruning {method} with --sparsity {target_sparsity} and --imp_prune_ratio {prune_ratio} needs k = {k} "
            f"pruning rounds spaced --imp_interval {interval} of the run apart"
            + ("" if rewind else ", plus one interval of training at the target")
            + f": {timeline} = {spans * interval:.3g} > 1, so the run would stop short of the target. With "
            f"--imp_interval {interval} the largest sparsity reachable is {round(reachable, 6)}; for --sparsity "
            f"{target_sparsity} use --imp_interval {needed} or less."
        )
    return k
