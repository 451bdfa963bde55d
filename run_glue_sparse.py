#!/usr/bin/env python
"""Fine-tune or search a sparse and robust subnetwork (SRNet) of a BERT-family model, then evaluate ID and OOD.

    accelerate launch run_glue_sparse.py --model_name_or_path bert-base-uncased --task mnli \\
        --pruning mask --loss poe --sparsity 0.5 --bias_predictions bias/bias_train.jsonl --output_dir out

A leading `.json` or `.yaml` argument gives the configuration; later flags override it. The run's phases live in
`hf_srnets.cli` (`main`).
"""

from __future__ import annotations

import logging
import sys

from hf_srnets.cli import main
from hf_srnets.errors import run_script
from hf_srnets.masking.hub_upload import HubUploadError

logger = logging.getLogger(__name__)

__all__ = ["main"]


def _main() -> None:
    try:
        main()
    except HubUploadError as err:
        logger.error(str(err))
        sys.exit(1)


if __name__ == "__main__":
    raise SystemExit(run_script(_main))
