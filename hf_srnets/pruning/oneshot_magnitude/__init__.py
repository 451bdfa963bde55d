"""`magnitude-oneshot`: one-shot magnitude pruning, the smallest |W| of each matrix, no retraining."""

from .config import OneShotMagnitudeConfig
from .method import OneShotMagnitudePruning

__all__ = ["OneShotMagnitudeConfig", "OneShotMagnitudePruning"]
