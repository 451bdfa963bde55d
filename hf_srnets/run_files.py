"""Names of the files a run folder holds, for every package that writes or reads them."""

import os

RESULTS_NAME = "all_results.json"  # every metric of the run (`Trainer.save_metrics("all", ...)`)


def is_finished(directory: str) -> bool:
    """Whether the run in `directory` finished: it wrote its results file (the last thing a run writes)."""
    return os.path.isfile(os.path.join(directory, RESULTS_NAME))
