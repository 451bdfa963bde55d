#!/usr/bin/env python
"""Fine-tune or search a sparse and robust subnetwork (SRNet) of a BERT-family model, then evaluate ID and OOD.

    accelerate launch run_glue_sparse.py --model_name_or_path bert-base-uncased --task mnli \\
        --pruning mask --loss poe --sparsity 0.5 --bias_predictions bias/bias_train.jsonl --output_dir out

A leading `.json` or `.yaml` argument gives the configuration; later flags override it. The command lives in
`hf_srnets.commands.glue_sparse` (`main`; `python -m hf_srnets.commands.glue_sparse` from an installed package), the
run's phases in `hf_srnets.runner`.
"""

from hf_srnets.commands.glue_sparse import main, script_main
from hf_srnets.errors import run_script

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(run_script(script_main))
