#!/usr/bin/env python
"""RMC stage 1: the difficulty d_i of every training example from the loss variance of IMP models at several
sparsities (Robustness Challenges in Model Distillation and Pruning for NLU, §4.1, §5.1, Eq. 1).

    python run_sample_difficulty.py --output_dir difficulty_mnli -- <run_glue_sparse.py arguments>

The options (`--help`) and the files written are those of `hf_srnets.cli.sample_difficulty` (`main`).
"""

from __future__ import annotations

import logging

from hf_srnets.cli.sample_difficulty import main
from hf_srnets.errors import run_script

__all__ = ["main"]

if __name__ == "__main__":
    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", level=logging.INFO)
    raise SystemExit(run_script(main))
