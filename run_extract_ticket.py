#!/usr/bin/env python
"""Extract robust tickets of any sparsity from one `--pruning l0` search, without training (Robust Tickets §3.3).

    python run_extract_ticket.py search_sst2 --sparsity 0.1 0.3 0.5 --output_dir tickets_sst2

The options and the files written are those of `hf_srnets.cli.extract_ticket` (`main`).
"""

from __future__ import annotations

import logging

from hf_srnets.cli.extract_ticket import main
from hf_srnets.errors import run_script

__all__ = ["main"]

if __name__ == "__main__":
    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", level=logging.INFO)
    raise SystemExit(run_script(main))
