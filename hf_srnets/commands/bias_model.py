"""Train the bias-only model (Win-win appendix B.3.1, Clark et al. 2019) and write p_b for the debiasing losses.

    python run_bias_model.py --task mnli --data_dir ../shared/data --output_dir bias
    python run_glue_sparse.py ... --loss poe --bias_predictions bias/bias_train.jsonl

    # two-way FEVER (SUPPORTS/REFUTES only), and a custom pair task with the claim-only (first text) features
    python run_bias_model.py --task fever --task_labels SUPPORTS,REFUTES --train_file fever2/train.jsonl \
        --ood_file dev=fever2/dev.jsonl --output_dir bias_fever2
    python run_bias_model.py --task custom --task_labels no,yes --bias_model claim --train_file train.tsv \
        --ood_file dev=dev.tsv --output_dir bias_custom

Writes `<output_dir>/bias_<split>.jsonl` (`{"id": ..., "probs": [...]}` per line, the task's label order)
for `train` and every predicted split, and `<output_dir>/bias_report.json` (vectors used, the choice of C,
accuracy, calibration and per-gold-label breakdown per split), and logs the report as a table. For
`run_glue_sparse.py --extra_train NAME=PATH`, predict the extra set with `--ood_file NAME=PATH`: its
`bias_NAME.jsonl`, next to `bias_train.jsonl`, is joined to the extra rows by their id in PATH.

The output dir follows run_glue_sparse.py's rules (`hf_srnets.training.output_dir`): a dir holding anything (but this
script's own `cache/`) is refused unless `--overwrite_output_dir`, which first deletes what hf_srnets scripts write
there; a second run on the same dir is locked out while the first writes.

`main` parses the options (`hf_srnets.arguments.bias_model_arguments`) and fits the bias model and writes p_b
(`hf_srnets.jobs.bias_model`).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from ..arguments.bias_model_arguments import parse_args
from ..errors import run_script
from ..jobs.bias_model import run_bias_model


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Parse the options, log to stdout at INFO, and run: take the output dir, fit, write p_b; return the report."""
    args = parse_args(argv, description=__doc__)
    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        level=logging.INFO,
        handlers=[logging.StreamHandler(sys.stdout)],
    )
    return run_bias_model(args)


if __name__ == "__main__":
    raise SystemExit(run_script(main))
