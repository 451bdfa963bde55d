#!/usr/bin/env python
"""RMC stage 1: the difficulty d_i of every training example from the loss variance of IMP models at several
sparsities (Robustness Challenges in Model Distillation and Pruning for NLU, §4.1, §5.1, Eq. 1).

    python run_sample_difficulty.py --output_dir difficulty_mnli -- <run_glue_sparse.py arguments>

The options (`--help`) and the files written are those of `hf_srnets.commands.sample_difficulty` (`main`).
"""

from __future__ import annotations

from hf_srnets.commands.sample_difficulty import main, script_main
from hf_srnets.errors import run_script

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(run_script(script_main))
