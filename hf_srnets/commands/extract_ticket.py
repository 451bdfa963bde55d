"""Extract robust tickets of any sparsity from one `--pruning l0` search, without training (Robust Tickets §3.3).

    python run_glue_sparse.py ... --pruning l0 --l0_lambda 0.5 --output_dir search_sst2
    python run_extract_ticket.py search_sst2 --sparsity 0.1 0.3 0.5 --output_dir tickets_sst2
    python run_glue_sparse.py ... --pruning none --mask_from tickets_sst2/sparsity_0.30 --output_dir retrain_30

Ranks the search's log α and prunes the smallest: exactly ⌊s·N⌋ of all N weights of θ_pr (`--scope global`, the
paper's setting) or ⌊s·n_i⌋ of each matrix (`--scope local`). Writes `<output_dir>/sparsity_<s>/` (the packed
masks and `srnet_config.json`, recording the source directory, sparsity and scope) for every s, and logs each
ticket's actual sparsity. The extraction holds the output dir's lock (the one training runs take): a second
extraction into the same dir is refused while the first writes, and `tickets.json` is written atomically.

`main` parses the options (`hf_srnets.arguments.extract_ticket_arguments`) and extracts the tickets
(`hf_srnets.jobs.extract_ticket`).
"""

from __future__ import annotations

import logging

from ..arguments.extract_ticket_arguments import parse_args
from ..errors import run_script
from ..jobs.extract_ticket import run_extract_ticket


def main(argv: list[str] | None = None) -> dict[str, dict]:
    """Parse the options and write one ticket per sparsity; return their sparsity reports, which
    `<output_dir>/tickets.json` records together with the tickets extracted earlier from the same search."""
    return run_extract_ticket(parse_args(argv, description=__doc__))


def script_main() -> None:
    """`main()` as `run_extract_ticket.py` and `python -m hf_srnets.commands.extract_ticket` run it, logging at INFO."""
    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", level=logging.INFO)
    main()


if __name__ == "__main__":
    raise SystemExit(run_script(script_main))
