"""Sample difficulty from the spread of losses across pruned models (Du et al. 2023, "Robustness Challenges in
Model Distillation and Pruning for NLU", §4.1, §5.1, Eq. 1).

The losses l_it of example i under n models pruned to different sparsities give its variance
v_i = Σ_t (l_it − l̄_i)² / n (§5.1, population variance); high variance means hard. The difficulty degree maps the
variances to [α, 1] (Eq. 1), and §4.1/§6.1 split a set into easy (low variance) and hard (high variance) examples.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import numpy as np

from ..errors import InputError

logger = logging.getLogger(__name__)

# Fig. 1: five sparsity levels in [0.2, 0.85] (Table 1's four levels, plus 0.85)
DEFAULT_SPARSITIES = (0.2, 0.4, 0.6, 0.7, 0.85)
# §6.1: α of Eq. 1 per training set, tuned on the relative robustness of the hard and easy dev subsets
RMC_ALPHA = {"mnli": 0.5, "fever": 0.3, "qqp": 0.2}


def loss_variance(losses: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
    """v_i = Σ_t (l_it − l̄_i)² / n (§5.1): the population variance of each row of an (examples × models) array."""
    losses = np.asarray(losses, dtype=np.float64)
    if losses.ndim != 2 or losses.shape[1] < 2:
        raise ValueError(
            f"loss_variance needs an (examples × models) array with at least 2 models, got shape {losses.shape}: "
            "score the examples with several pruned models (e.g. the five default sparsities)."
        )
    if not np.isfinite(losses).all():
        raise ValueError("loss_variance got a NaN or infinite loss: check the models' outputs on the data.")
    return losses.var(axis=1, ddof=0)


def difficulty_degree(variance: np.ndarray | Sequence[float], alpha: float) -> np.ndarray:
    """d_i = α + (1 − α)(v_i − V_min)/(V_max − V_min) (Eq. 1), in [α, 1]: 1 for the highest variance, α for the
    lowest. When every variance is the same, Eq. 1 is undefined and every d_i is 1 (no example is easier), with
    a warning."""
    if not 0.0 < alpha <= 1.0:
        raise InputError(f"alpha must be in (0, 1] (Eq. 1 maps variances to [alpha, 1]), got {alpha}: e.g. --alpha 0.5")
    v = np.asarray(variance, dtype=np.float64)
    if v.size == 0:
        raise ValueError("difficulty_degree got no variances")
    v_min, v_max = float(v.min()), float(v.max())
    if v_max == v_min:
        logger.warning(f"All {v.size} loss variances equal {v_min:g}: Eq. 1 is undefined, every difficulty is 1")
        return np.ones_like(v)
    return alpha + (1.0 - alpha) * (v - v_min) / (v_max - v_min)


def alpha_for(task: str, alpha: float | None = None) -> float:
    """α of Eq. 1: the one given, else the paper's for the task (§6.1: MNLI 0.5, FEVER 0.3, QQP 0.2)."""
    if alpha is not None:
        return alpha
    if task not in RMC_ALPHA:
        known = ", ".join(f"{k} {v}" for k, v in RMC_ALPHA.items())
        raise InputError(
            f"The paper gives no alpha (Eq. 1) for task {task!r} (only {known}): pass --alpha A with A in (0, 1]."
        )
    return RMC_ALPHA[task]


def hard_split(variance: np.ndarray | Sequence[float], hard_fraction: float) -> np.ndarray:
    """A boolean array, True for the hard examples: the ⌈fraction·n⌉ of highest variance (§4.1: low variance is
    easy, the rest hard); among equal variances the earlier example is hard first."""
    if not 0.0 <= hard_fraction <= 1.0:
        raise InputError(f"--hard_fraction must be in [0, 1], got {hard_fraction}: e.g. --hard_fraction 0.5")
    v = np.asarray(variance, dtype=np.float64)
    n_hard = math.ceil(hard_fraction * v.size - 1e-9)
    order = np.lexsort((np.arange(v.size), -v))  # by decreasing variance, then by position
    hard = np.zeros(v.size, dtype=bool)
    hard[order[:n_hard]] = True
    return hard
