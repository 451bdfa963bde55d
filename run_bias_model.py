#!/usr/bin/env python
"""Train the bias-only model (Win-win appendix B.3.1, Clark et al. 2019) and write p_b for the debiasing losses.

    python run_bias_model.py --task mnli --data_dir ../shared/data --output_dir bias
    python run_glue_sparse.py ... --loss poe --bias_predictions bias/bias_train.jsonl

The options, the files written and the output dir's rules are those of `hf_srnets.commands.bias_model` (`main`).
"""

from __future__ import annotations

from hf_srnets.commands.bias_model import main
from hf_srnets.errors import run_script

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(run_script(main))
