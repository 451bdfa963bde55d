"""`random`: the random-ticket baseline (Robust Tickets §4.2, "Rand")."""

from .config import RandomConfig
from .method import RandomPruning, check_same_modules, random_like_masks, read_masks

__all__ = ["RandomConfig", "RandomPruning", "check_same_modules", "random_like_masks", "read_masks"]
