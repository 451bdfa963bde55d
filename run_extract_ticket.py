#!/usr/bin/env python
"""Extract robust tickets of any sparsity from one `--pruning l0` search, without training (Robust Tickets §3.3).

    python run_glue_sparse.py ... --pruning l0 --l0_lambda 0.5 --output_dir search_sst2
    python run_extract_ticket.py search_sst2 --sparsity 0.1 0.3 0.5 --output_dir tickets_sst2
    python run_glue_sparse.py ... --pruning none --mask_from tickets_sst2/sparsity_0.30 --output_dir retrain_30

Ranks the search's log α and prunes the smallest: exactly ⌊s·N⌋ of all N weights of θ_pr (`--scope global`, the
paper's setting) or ⌊s·n_i⌋ of each matrix (`--scope local`). Writes `<output_dir>/sparsity_<s>/` (the packed
masks and `srnet_config.json`, recording the source directory, sparsity and scope) for every s, and logs each
ticket's actual sparsity.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Literal

from transformers import HfArgumentParser

from hf_srnets.pruning.l0 import read_search_dir, write_ticket

logger = logging.getLogger("run_extract_ticket")


@dataclass
class ExtractTicketArguments:
    """The search to extract from, the sparsities and the scope of the ranking, where to write the tickets."""

    search_dir: str = field(metadata={"help": "Output directory of a --pruning l0 run (also the first argument)."})
    sparsity: list[float] = field(metadata={"help": "Ticket sparsities, e.g. --sparsity 0.1 0.3 0.5."})
    output_dir: str = field(metadata={"help": "Tickets are written to <output_dir>/sparsity_<s>/."})
    scope: Literal["global", "local"] = field(
        default="global", metadata={"help": "global (rank log α over all of θ_pr, the paper) or local (per matrix)."}
    )

    def __post_init__(self) -> None:
        if self.scope not in ("global", "local"):
            raise ValueError(f"--scope must be global or local, got {self.scope!r}.")
        bad = [s for s in self.sparsity if not 0.0 <= s < 1.0]
        if bad:
            raise ValueError(f"--sparsity values must be in [0, 1), got {bad}: e.g. --sparsity 0.1 0.3 0.5.")


def ticket_dir_name(sparsity: float) -> str:
    return f"sparsity_{sparsity:.2f}" if round(sparsity, 2) == sparsity else f"sparsity_{sparsity:g}"


def parse_args(argv: list[str]) -> ExtractTicketArguments:
    """HfArgumentParser over `ExtractTicketArguments`; a leading argument without `--` is the search directory."""
    if argv and not argv[0].startswith("-"):
        argv = ["--search_dir", *argv]
    (args,) = HfArgumentParser(ExtractTicketArguments).parse_args_into_dataclasses(argv)
    return args


def main(argv: list[str] | None = None) -> dict[str, dict]:
    """Write one ticket per sparsity; return (and save as `<output_dir>/tickets.json`) their sparsity reports."""
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    read_search_dir(args.search_dir)  # refuse a non-l0 or ticket directory before writing anything
    reports = {}
    for sparsity in args.sparsity:
        name = ticket_dir_name(sparsity)
        report = write_ticket(args.search_dir, os.path.join(args.output_dir, name), sparsity, args.scope)
        logger.info(f"{name}: requested {sparsity:.4f}, actual {report['sparsity']:.4f} ({args.scope})")
        reports[name] = {"requested_sparsity": sparsity, **report}
    with open(os.path.join(args.output_dir, "tickets.json"), "w", encoding="utf-8") as f:
        json.dump({"search_dir": args.search_dir, "tickets": reports}, f, indent=2)
        f.write("\n")
    return reports


if __name__ == "__main__":
    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", level=logging.INFO)
    main()
