"""`run_glue_sparse.py`: fine-tune or search a sparse and robust subnetwork, then evaluate ID and OOD.

`main` parses and checks the options (`hf_srnets.arguments`), prepares the output dir (`training.output_dir`) and runs
the phases of `hf_srnets.runner.run`. `python -m hf_srnets.commands.glue_sparse` is the same command as the script,
from an installed package (sweeps and RMC stage 1 start their child runs this way).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import transformers

from ..arguments.glue_sparse_arguments import parse_args, validate_args
from ..errors import run_script
from ..masking.hub_upload import HubUploadError
from ..runner.outputs import check_hub_repo_ids, check_train_predictions_path
from ..runner.run import files_read, flagged_files_read, run
from ..training.output_dir import prepare_output_dir

logger = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Parse and check the arguments, prepare the output dir, and run; return the results (all_results.json)."""
    run_args = parse_args(argv)
    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        level=logging.INFO,
        handlers=[logging.StreamHandler(sys.stdout)],
    )
    transformers.utils.logging.set_verbosity(run_args.training.get_process_log_level())
    validate_args(run_args)
    check_train_predictions_path(run_args, files_read(run_args))
    check_hub_repo_ids(run_args)
    with prepare_output_dir(
        run_args.training.output_dir,
        overwrite=run_args.model.overwrite_output_dir,
        resume=run_args.training.resume_from_checkpoint,
        is_main_process=run_args.training.should_save,
        reads=flagged_files_read(run_args),
    ):
        return run(run_args)


def script_main() -> None:
    """`main()` as a script runs it: a failed Hub upload (every local output already saved) is one error line and
    exit status 1."""
    try:
        main()
    except HubUploadError as err:
        logger.error(str(err))
        sys.exit(1)


if __name__ == "__main__":
    raise SystemExit(run_script(script_main))
