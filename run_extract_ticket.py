#!/usr/bin/env python
"""Extract robust tickets of any sparsity from one `--pruning l0` search, without training (Robust Tickets §3.3).

    python run_extract_ticket.py search_sst2 --sparsity 0.1 0.3 0.5 --output_dir tickets_sst2

The options and the files written are those of `hf_srnets.commands.extract_ticket` (`main`).
"""

from __future__ import annotations

from hf_srnets.commands.extract_ticket import main, script_main
from hf_srnets.errors import run_script

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(run_script(script_main))
