"""The command line of `run_sample_difficulty.py`, parsing only: `SampleDifficultyArguments` (where the files go, the
IMP models' sparsities or saved models, α and the hard split), checked as they are parsed, and `parse_args`, which
splits off the run_glue_sparse.py arguments after `--`. RMC's stage 1 itself is
`hf_srnets.experiments.sample_difficulty`."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from ..difficulty.variance import DEFAULT_SPARSITIES
from ..errors import InputError
from ..run_files import DIFFICULTY_NAME, DIFFICULTY_VALIDATION_NAME
from .parser import parse_command


@dataclass
class SampleDifficultyArguments:
    """Where the files go, the sparsities of the IMP models (or saved models to use instead), α and the split."""

    output_dir: str = field(metadata={"help": f"Writes {DIFFICULTY_NAME}, {DIFFICULTY_VALIDATION_NAME}, the report."})
    sparsities: list[float] = field(
        default_factory=lambda: list(DEFAULT_SPARSITIES),
        metadata={"help": "Sparsities of the IMP models (Fig. 1: 0.2 0.4 0.6 0.7 0.85).", "nargs": "+"},
    )
    alpha: float | None = field(
        default=None, metadata={"help": "α of Eq. 1, d_i in [α, 1] (default: the paper's, MNLI 0.5 FEVER 0.3 QQP 0.2)."}
    )
    hard_fraction: float = field(
        default=0.5, metadata={"help": "Fraction of the dev set, highest loss variance first, marked hard (§4.1)."}
    )
    model_dirs: list[str] | None = field(
        default=None, metadata={"help": "Saved models to score instead of training IMP models.", "nargs": "+"}
    )
    batch_size: int = field(default=64, metadata={"help": "Examples per forward pass when scoring."})
    overwrite_output_dir: bool = field(
        default=False,
        metadata={"help": "Replace difficulty files made with other settings in --output_dir (default: refuse)."},
    )

    def __post_init__(self) -> None:
        bad = [s for s in self.sparsities if not 0.0 < s < 1.0]
        if bad:
            raise InputError(f"--sparsities must be in (0, 1), got {bad}: e.g. --sparsities 0.2 0.4 0.6 0.7 0.85")
        refuse_repeats("--sparsities", [f"{s:g}" for s in self.sparsities], "--sparsities 0.2 0.4 0.6 0.7 0.85")
        if self.model_dirs is not None:
            refuse_repeats("--model_dirs", [os.path.realpath(d) for d in self.model_dirs], "--model_dirs imp_a imp_b")
        models = self.model_dirs if self.model_dirs is not None else self.sparsities
        if len(models) < 2:
            raise InputError("The loss variance needs at least 2 models: give 2 or more --sparsities or --model_dirs")
        if not 0.0 <= self.hard_fraction <= 1.0:
            raise InputError(f"--hard_fraction must be in [0, 1], got {self.hard_fraction}")
        if self.alpha is not None and not 0.0 < self.alpha <= 1.0:
            raise InputError(f"--alpha must be in (0, 1] (Eq. 1 maps variances to [alpha, 1]), got {self.alpha}")
        if self.batch_size < 1:
            raise InputError(f"--batch_size must be >= 1, got {self.batch_size}: e.g. --batch_size 64")


def refuse_repeats(option: str, values: list[str], example: str) -> None:
    """`InputError` for a model given twice: its losses would enter the variance twice, weighting it double."""
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise InputError(
            f"{option} repeats {', '.join(repeated)}: each model's losses would enter the loss variance once per "
            f"copy; give each once, e.g. {example}"
        )


def parse_args(
    argv: list[str] | None = None, description: str | None = None
) -> tuple[SampleDifficultyArguments, list[str]]:
    """The script's options (before `--`) and the run_glue_sparse.py arguments (after it)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    run_argv = argv[argv.index("--") + 1 :] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    (args,) = parse_command([SampleDifficultyArguments], own, description=description)
    return args, run_argv
