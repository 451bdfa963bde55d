"""The Lagrangian sparsity constraint of an l0 search (`--l0_constraint lagrangian`): CoFi (Xia et al. 2022, §3,
after Wang et al. 2020, "Structured Pruning of Large Language Models"):

    L_c = λ_1·(ŝ − t) + λ_2·(ŝ − t)²,

with ŝ = 1 − R(m) the expected sparsity of the gates (Robust Tickets Eq. 4, counted in weights: `l0_penalty`) and
t the target at step k, t_k = s·min(1, k / (f·T)) (s = `--sparsity`, f = `--l0_target_warmup_fraction`, T the
run's steps; CoFi's MNLI recipe grows t from 0 over 2 of its 20 epochs, f = 0.1). The search minimises
L_task + L_c over log α and *maximises* it over the multipliers λ_1, λ_2 (both start at 0): while ŝ < t, λ_1 turns
negative and λ_2 positive, and the gates are pushed towards t until ŝ = t, a saddle point. Unlike the penalty
λ·R(m) (Eq. 8), whose final sparsity depends on λ and the task, the search ends at the sparsity asked for.

One optimiser does both: the multipliers enter L_c through a gradient reversal (identity forward, −∂ backward), so
the descent step on them is the ascent step (CoFi gives them a second optimiser with a negative learning rate).
They train in the mask scores' group (`--mask_learning_rate`, CoFi's `reg_learning_rate` 0.01 for log α and λ
alike) and live in the first masked layer (`l0_constraint`), so a checkpoint saves and resumes them with the
search; a saved search keeps its log α, not the multipliers.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from ..precision import KeepsFloat32
from ..schedule import linear_warmup


class LagrangeMultipliers(KeepsFloat32, nn.Module):
    """λ_1 and λ_2 of L_c, float32 scalars starting at 0."""

    float32_tensors = ("lambda_1", "lambda_2")

    def __init__(self, device: torch.device | None = None) -> None:
        super().__init__()
        self.lambda_1 = nn.Parameter(torch.zeros((), dtype=torch.float32, device=device))
        self.lambda_2 = nn.Parameter(torch.zeros((), dtype=torch.float32, device=device))


class _Ascent(torch.autograd.Function):
    """x forward, −∂L/∂x backward: a descent step on x is an ascent step on L."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return -grad


def target_sparsity_at(step: int, max_steps: int, sparsity: float, warmup_fraction: float) -> float:
    """t_k = s·min(1, k / (f·T)) (`hf_srnets.pruning.schedule.linear_warmup`; f = 0: s from the first step)."""
    return linear_warmup(step, 0.0, warmup_fraction * max_steps, sparsity)


def lagrangian(expected_sparsity: torch.Tensor, target: float, multipliers: LagrangeMultipliers) -> torch.Tensor:
    """L_c = λ_1·(ŝ − t) + λ_2·(ŝ − t)², minimised over ŝ's gates and maximised over λ_1, λ_2."""
    gap = expected_sparsity - target
    return _Ascent.apply(multipliers.lambda_1) * gap + _Ascent.apply(multipliers.lambda_2) * gap**2
