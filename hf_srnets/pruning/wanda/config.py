"""Options of Wanda (Sun et al. 2024, "A Simple and Effective Pruning Approach for Large Language Models")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ...errors import InputError
from ..base import PruningConfig


def parse_nm(text: str) -> tuple[int, int]:
    """`"N:M"` -> (N, M) with 0 < N < M; `InputError` naming the form otherwise."""
    parts = text.split(":")
    if len(parts) == 2 and all(p.strip().isdigit() for p in parts):
        n, m = int(parts[0]), int(parts[1])
        if 0 < n < m:
            return n, m
    raise InputError(f"--wanda_nm {text!r} is not N:M with 0 < N < M (keep N of every M inputs): e.g. --wanda_nm 2:4.")


@dataclass
class WandaConfig(PruningConfig):
    """Wanda: score S_ij = |W_ij|·‖X_j‖₂ (‖X_j‖ over the calibration tokens), prune per output row.

    calibration_samples: the training examples (first of the shuffled training batches) whose tokens give ‖X_j‖.
    N:M: `mask_granularity="nm"` with `nm_n`, `nm_m` keeps the N largest scores of every M consecutive inputs of a
        row (sparsity (M−N)/M), as at N:M for every method (`pruning.nm`); element: the ⌊s·n_in⌋ lowest scores of
        each row are pruned.
    wanda_nm: "N:M", the older spelling of `mask_granularity="nm", nm_n=N, nm_m=M` (kept as an alias).
    """

    _argument_group_name: ClassVar[str] = "Pruning method wanda (--pruning wanda, one-shot |W|·‖X‖)"

    calibration_samples: int = field(
        default=128, metadata={"help": "wanda: training examples whose tokens give the input norms ‖X_j‖ (128)."}
    )
    wanda_nm: str | None = field(
        default=None,
        metadata={
            "help": "wanda: N:M, the older spelling of --mask_granularity nm --nm_n N --nm_m M (e.g. 2:4); sets "
            "--sparsity."
        },
    )

    def unused_options(self) -> dict[str, str]:
        """The common options, and what a one-shot per-row selection leaves unused."""
        unused = {
            **super().unused_options(),
            "trainable_classifier": "nothing trains in a one-shot run (--pruning wanda keeps θ_0)",
            "sparsity_scope": "Wanda compares the weights of each output row, not of a matrix or the model",
        }
        if self.wanda_nm is not None:
            unused["sparsity"] = "--wanda_nm N:M sets the sparsity to (M − N)/M"
        return unused

    def validate(self) -> None:
        super().validate()
        if self.calibration_samples < 1:
            raise InputError(f"--calibration_samples {self.calibration_samples} must be at least 1.")
        if self.wanda_nm is not None:
            parse_nm(self.wanda_nm)
            if self.mask_granularity not in ("element", "nm"):
                raise InputError(
                    f"--wanda_nm is N:M pruning (--mask_granularity nm), not --mask_granularity "
                    f"{self.mask_granularity}: give one of them."
                )
            if self.mask_granularity == "nm" and self.wanda_nm.replace(" ", "") != f"{self.nm_n}:{self.nm_m}":
                raise InputError(
                    f"--wanda_nm {self.wanda_nm} and --mask_granularity nm --nm_n {self.nm_n} --nm_m {self.nm_m} "
                    "name two patterns: give --mask_granularity nm with --nm_n/--nm_m alone (--wanda_nm is its older "
                    "spelling)."
                )
