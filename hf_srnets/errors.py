"""`InputError`: bad input a user can fix, which scripts report as one line instead of a traceback; `run_script`,
the scripts' entry point that does so."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from typing import Any

DEBUG_ENV = "SRNETS_DEBUG"  # SRNETS_DEBUG=1: user errors keep their traceback too
USER_ERROR_STATUS = 2  # argparse's status for a bad command line


class InputError(ValueError):
    """A bad file, option, model path or output dir: the message names the problem and the fix.

    The scripts print it as one line, ``error: <message>``, and exit with status 2; an unexpected exception keeps its
    traceback. It subclasses `ValueError`, so code that catches a `ValueError` from option checks still does.
    """


class MissingInputError(InputError, FileNotFoundError):
    """A file or directory the user named does not exist (still a `FileNotFoundError` to code that catches one)."""


def debug_requested() -> bool:
    """Whether `SRNETS_DEBUG` asks for tracebacks of user errors (set and not 0/false/no/empty)."""
    return os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")


def run_script(main: Callable[[], Any]) -> int:
    """Run a script's `main()`; an `InputError` becomes one line `error: <message>` on stderr and status 2.

    Any other exception propagates with its traceback. With `SRNETS_DEBUG=1` an `InputError` propagates too.
    Use as `raise SystemExit(run_script(main))`."""
    try:
        main()
    except InputError as err:
        if debug_requested():
            raise
        logging.shutdown()  # flush what the run logged before the error line
        message = " ".join(str(err).split("\n"))
        print(f"error: {message} (traceback: {DEBUG_ENV}=1)", file=sys.stderr)
        return USER_ERROR_STATUS
    return 0
