"""The command line of `run_extract_ticket.py`, parsing only: `ExtractTicketArguments` (the search to extract from,
the sparsities, the scope of the ranking, where the tickets go; checked as they are parsed) and `parse_args`, which
reads a leading argument without `--` as the search directory. The extraction itself is
`hf_srnets.jobs.extract_ticket`."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

from ..errors import InputError, MissingInputError
from ..run_files import SRNET_CONFIG_NAME
from .parser import parse_command


@dataclass
class ExtractTicketArguments:
    """The search to extract from, the sparsities and the scope of the ranking, where to write the tickets."""

    search_dir: str = field(metadata={"help": "Output directory of a --pruning l0 run (also the first argument)."})
    sparsity: list[float] = field(metadata={"help": "Ticket sparsities, e.g. --sparsity 0.1 0.3 0.5."})
    output_dir: str = field(metadata={"help": "Tickets are written to <output_dir>/sparsity_<s>/."})
    scope: Literal["global", "local"] = field(
        default="global", metadata={"help": "global (rank log α over all of θ_pr, the paper) or local (per matrix)."}
    )
    overwrite_output_dir: bool = field(
        default=False,
        metadata={"help": "Replace the tickets of another search or scope in --output_dir (default: refuse)."},
    )

    def __post_init__(self) -> None:
        if not os.path.isdir(self.search_dir):
            raise MissingInputError(
                f"search dir {self.search_dir} does not exist: give the --output_dir of a --pruning l0 run"
            )
        if not os.path.isfile(os.path.join(self.search_dir, SRNET_CONFIG_NAME)):
            raise InputError(
                f"{self.search_dir} holds no {SRNET_CONFIG_NAME}, so it is no search: give the --output_dir of a "
                "--pruning l0 run"
            )
        if self.scope not in ("global", "local"):
            raise InputError(f"--scope must be global or local, got {self.scope!r}.")
        bad = [s for s in self.sparsity if not 0.0 <= s < 1.0]
        if bad:
            raise InputError(f"--sparsity values must be in [0, 1), got {bad}: e.g. --sparsity 0.1 0.3 0.5.")


def parse_args(argv: list[str] | None, description: str | None = None) -> ExtractTicketArguments:
    """`ExtractTicketArguments` from `argv` (default: the command line); the search directory may come first."""
    (args,) = parse_command([ExtractTicketArguments], argv, first="search_dir", description=description)
    return args
