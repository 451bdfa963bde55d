"""RMC stage 1: sample difficulty from the loss variance of pruned models (Du et al. 2023, §4.1, §5.1, Eq. 1).

`variance` holds the formulas (v_i, d_i, α per task, the easy/hard split), and `scoring` the per-example losses of a
saved model. The IMP runs, files and report of `run_sample_difficulty.py` are `hf_srnets.experiments.sample_difficulty`.
"""

from .scoring import ExampleScores, example_losses, load_scoring_model, measured_sparsity
from .variance import DEFAULT_SPARSITIES, RMC_ALPHA, alpha_for, difficulty_degree, hard_split, loss_variance

__all__ = [
    "DEFAULT_SPARSITIES",
    "RMC_ALPHA",
    "ExampleScores",
    "alpha_for",
    "difficulty_degree",
    "example_losses",
    "hard_split",
    "load_scoring_model",
    "loss_variance",
    "measured_sparsity",
]
