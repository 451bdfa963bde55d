"""Runs of `run_glue_sparse.py` as child processes, for the experiments made of several runs (sweeps, RMC stage 1)."""

from __future__ import annotations

import os
import subprocess
import sys

from ..errors import InputError

# the script beside the package (a checkout of the repository)
SCRIPT = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "run_glue_sparse.py"
)


def run_glue_sparse(argv: list[str], kind: str = "run", again: str = "run again") -> None:
    """Run `run_glue_sparse.py argv`; a failed run (its own error printed above) becomes one `InputError` naming
    its output dir, e.g. "the IMP run D failed (exit status 1; its error is above): fix it and run again, ...".
    """
    result = subprocess.run([sys.executable, SCRIPT, *argv])
    if result.returncode != 0:
        out = argv[argv.index("--output_dir") + 1] if "--output_dir" in argv else f"a {kind}"
        raise InputError(
            f"the {kind} {out} failed (exit status {result.returncode}; its error is above): fix it and {again}, "
            "finished runs are kept"
        )


def sets_flag(argv: list[str], flag: str) -> bool:
    """Whether run arguments `argv` give `flag` (`--flag value` or `--flag=value`)."""
    return any(token == flag or token.startswith(f"{flag}=") for token in argv)
