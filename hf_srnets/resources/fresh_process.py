"""`run_in_fresh_process(function, *args)`: a measurement in a process of its own, without paying for its imports.

A bench that reports a measurement's peak memory, or must carry no warm state from one measurement to the next,
runs each in a new process; importing torch, transformers' Trainer and hf_srnets again in each costs about 5 s of
CPU before the measurement starts. Here one server process (multiprocessing's "forkserver" start method) imports
the calling script and `preload` once, and each call is a fork of that server: a process in which nothing has run
yet (no model, no cache, no thread pool started). Its peak RSS (`ru_maxrss`) starts from the server's resident
memory, so it counts the imported modules but not the transient peak of importing them: for a MiniLM training
measurement of bench/bench_bf16_cpu.py, 795 MiB against 896 MiB in a plain process (the bf16/fp32 ratio 1.02 both
ways). The server's environment is the caller's when it first starts, so `OMP_NUM_THREADS` and the like
must be set before the first call. The server and its forks write their standard output to the caller's standard
error, so a message printed while importing (DeepSpeed's accelerator line) or by the function never mixes with what
the caller prints. Where the platform has no fork server (Windows), each call is a spawned process
that imports what it needs itself.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from multiprocessing import forkserver
from typing import Any

# what an SRNetTrainer measurement imports
TRAINER_MODULES = ("torch", "transformers", "transformers.trainer", "datasets", "hf_srnets.training.trainer")


class FreshProcessError(RuntimeError):
    """The function raised in its process, or the process ended without an answer."""


def run_in_fresh_process(function: Callable[..., Any], *args: Any, preload: Sequence[str] = TRAINER_MODULES) -> Any:
    """`function(*args)` in a new process forked from a server that imported `preload` and the `__main__` script;
    its return value (which must pickle), or `FreshProcessError` with the process's traceback. `function` is
    looked up by module and name, so it must be a module-level function (of the script or of a module), and the
    script must start its work under `if __name__ == "__main__":`, as with multiprocessing's spawn."""
    context = _context(preload)
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_call, args=(sender, function, args), daemon=True)
    process.start()
    sender.close()
    try:
        succeeded, value = receiver.recv()
    except EOFError:
        succeeded, value = False, "the process ended without an answer"
    finally:
        receiver.close()
        process.join()
    if not succeeded:
        raise FreshProcessError(f"{getattr(function, '__name__', function)} failed in its fresh process "
                                f"(exit code {process.exitcode}):\n{value}")  # fmt: skip
    return value


def _context(preload: Sequence[str]) -> multiprocessing.context.BaseContext:
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["__main__", *preload])  # read when the server starts: the first call
    _start_server_writing_to_stderr()
    return context


def _start_server_writing_to_stderr() -> None:
    """Start the fork server (if not running) with its file descriptor 1 on the caller's standard error."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        forkserver.ensure_running()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _call(sender: Any, function: Callable[..., Any], args: tuple) -> None:
    try:
        outcome = (True, function(*args))
    except BaseException:  # the traceback goes back to the caller as text
        outcome = (False, traceback.format_exc())
    sender.send(outcome)
    sender.close()
