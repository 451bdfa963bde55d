#!/usr/bin/env python
"""Run methods over sparsities and seeds with run_glue_sparse.py, resumably; aggregate, table and plot.

    python run_sweep.py examples/sweep_minilm_mnli.yaml --checkpoint_steps 50

Options and the recipe format: `python run_sweep.py --help` (`hf_srnets.commands.sweep`).
"""

from hf_srnets.commands.sweep import main, script_main
from hf_srnets.errors import run_script

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(run_script(script_main))
