"""Pruning by magnitude: IMP, IMP with rewinding, and training with fixed masks (Win-win Algorithm 1)."""

from .imp import FixedMaskCallback, IMPCallback, imp_rounds

__all__ = ["FixedMaskCallback", "IMPCallback", "imp_rounds"]
