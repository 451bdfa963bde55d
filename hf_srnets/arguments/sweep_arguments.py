"""The command line of `run_sweep.py`, parsing only: `SweepArguments` (a recipe or the grid of a one-method sweep,
what to aggregate, resuming) and `parse_args`, which splits off the run_glue_sparse.py arguments after `--`. The sweep
itself is `hf_srnets.experiments.sweep`."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from ..errors import InputError
from ..run_files import RESULTS_NAME
from .parser import parse_command


@dataclass
class SweepArguments:
    """A recipe (or, without one, the run_glue_sparse.py arguments after `--`), the grid over it and the summary."""

    recipe: str | None = field(
        default=None,
        metadata={"help": "A YAML recipe (also the first argument); or give run_glue_sparse.py arguments after --."},
    )
    sparsities: str | None = field(default=None, metadata={"help": "Comma-separated, e.g. 0.2,0.3,0.5."})
    seeds: str | None = field(default=None, metadata={"help": "Comma-separated, e.g. 1,2,3,4."})
    methods: str | None = field(
        default=None, metadata={"help": "Comma-separated names of the recipe's methods to run (default: all)."}
    )
    metrics: str | None = field(
        default=None, metadata={"help": f"Comma-separated {RESULTS_NAME} keys to aggregate and plot."}
    )
    reference: str | None = field(
        default=None, metadata={"help": "A full-model method to compare every method with (e.g. full_ce)."}
    )
    baseline: str | None = field(
        default=None,
        metadata={"help": "A method to give every other method's paired differences and intervals against."},
    )
    method_name: str | None = field(
        default=None, metadata={"help": "Without a recipe: the method's name (default <pruning>_<loss>)."}
    )
    output_dir: str | None = field(
        default=None, metadata={"help": "Where the runs and the summary go (a recipe's own output_dir otherwise)."}
    )
    aggregate_only: bool = field(default=False, metadata={"help": "Run nothing: collect, tabulate and plot."})
    checkpoint_steps: int | None = field(
        default=None, metadata={"help": "Every run saves a checkpoint every N steps, to resume from if stopped."}
    )
    keep_checkpoints: bool = field(default=False, metadata={"help": "Keep a finished run's last checkpoint."})
    rerun_changed: bool = field(
        default=False, metadata={"help": "Run again the run dirs made with other settings than now."}
    )

    def __post_init__(self) -> None:
        self.sparsity_grid(), self.seed_list()  # a bad item is refused before anything runs

    def sparsity_grid(self) -> list[float] | None:
        return comma_list(self.sparsities, float, "--sparsities", "0.2,0.3,0.5")

    def seed_list(self) -> list[int] | None:
        return comma_list(self.seeds, int, "--seeds", "1,2,3")

    def metric_list(self) -> list[str] | None:
        return self.metrics.split(",") if self.metrics else None


def comma_list(text: str | None, kind: type, flag: str, example: str) -> list | None:
    """A comma-separated option as a list of `kind` (None if not given); a bad item is an `InputError`."""
    if not text:
        return None
    try:
        return [kind(item) for item in text.split(",")]
    except ValueError:
        bad = next(item for item in text.split(",") if not _parses(item, kind))
        raise InputError(
            f"{flag} {text}: {bad!r} is not {'a number' if kind is float else 'an integer'}; give a comma-separated "
            f"list without spaces, e.g. {flag} {example}"
        ) from None


def _parses(item: str, kind: type) -> bool:
    try:
        kind(item)
    except ValueError:
        return False
    return True


def parse_args(
    argv: list[str] | None = None, description: str | None = None
) -> tuple[SweepArguments, list[str] | None]:
    """The sweep's options (before `--`) and the run_glue_sparse.py arguments after it (None without `--`); a
    recipe and arguments after `--` together, or neither, are refused."""
    argv = list(sys.argv[1:] if argv is None else argv)
    run_argv = argv[argv.index("--") + 1 :] if "--" in argv else None
    own = argv[: argv.index("--")] if "--" in argv else argv
    (args,) = parse_command([SweepArguments], own, first="recipe", description=description)
    if run_argv is not None and args.recipe:
        raise InputError("give either a recipe or run_glue_sparse.py arguments after --, not both")
    if run_argv is not None and not args.output_dir:
        raise InputError("a sweep without a recipe needs --output_dir")
    if run_argv is None and not args.recipe:
        raise InputError("give a recipe, or run_glue_sparse.py arguments after --")
    return args, run_argv
