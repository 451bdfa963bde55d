"""Names of the files a run folder holds, for every package that writes or reads them."""

RESULTS_NAME = "all_results.json"  # every metric of the run (`Trainer.save_metrics("all", ...)`)
