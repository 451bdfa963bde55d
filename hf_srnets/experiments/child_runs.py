"""Runs of `run_glue_sparse.py` as child processes, for the experiments made of several runs (sweeps, RMC stage 1).

A child starts the installed package's command, `python -m hf_srnets.commands.glue_sparse`, never a script beside
the package: sweeps work from a pip install as from a checkout."""

from __future__ import annotations

import subprocess
import sys

from ..errors import InputError
from ..training.output_dir import handed_over_fds

COMMAND = "hf_srnets.commands.glue_sparse"  # run with `python -m`; the same command as run_glue_sparse.py


def run_glue_sparse(argv: list[str], kind: str = "run", again: str = "run again") -> None:
    """Run `python -m hf_srnets.commands.glue_sparse argv` (`run_glue_sparse.py argv`); a failed run (its own error
    printed above) becomes one `InputError` naming its output dir, e.g. "the IMP run D failed (exit status 1; its
    error is above): fix it and run again, ...". The child inherits the output-dir lock a sweep hands it
    (`hf_srnets.training.output_dir.handed_over_fds`).
    """
    # the child holds the OS lock a sweep hands it: killed, the sweep leaves its run writing under the lock
    result = subprocess.run([sys.executable, "-m", COMMAND, *argv], pass_fds=handed_over_fds())
    if result.returncode != 0:
        out = argv[argv.index("--output_dir") + 1] if "--output_dir" in argv else f"a {kind}"
        raise InputError(
            f"the {kind} {out} failed (exit status {result.returncode}; its error is above): fix it and {again}, "
            "finished runs are kept"
        )


def sets_flag(argv: list[str], flag: str) -> bool:
    """Whether run arguments `argv` give `flag` (`--flag value` or `--flag=value`)."""
    return any(token == flag or token.startswith(f"{flag}=") for token in argv)
