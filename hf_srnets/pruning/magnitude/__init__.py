"""`magnitude`: iterative magnitude pruning (IMP), IMP with rewinding, and fixed-mask training (Algorithm 1)."""

from ..fixed_mask import FixedMaskCallback
from ..magnitude_masks import magnitude_prune
from .config import MagnitudeConfig
from .controller import IMPCallback
from .method import MagnitudePruning
from .rounds import imp_rounds

__all__ = ["FixedMaskCallback", "IMPCallback", "MagnitudeConfig", "MagnitudePruning", "imp_rounds", "magnitude_prune"]
