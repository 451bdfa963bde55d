"""`run_python(script, *args)`: a project script run as its own process, as a user runs it, without paying for its
imports each time (docs/testing.md).

Starting Python and importing torch, transformers' Trainer, datasets and hf_srnets takes about 4 s of CPU before a
script does anything, so a `--help` or a refused option costs 4-5 s a process. Each pytest worker starts one server
process (`python tests/prewarmed.py --serve`) that imports those once; a run is a fork of it: a new process whose
working folder, environment, `sys.argv` and standard streams are the run's, that executes the script as `__main__`
(`runpy`) and ends with its exit status (`SystemExit`'s code, 1 with the traceback on an uncaught exception). The
server never runs a script itself, so every run starts from the same freshly imported state.

What a fork cannot give is a fresh import under another environment: a run whose environment differs from the
server's in anything but `RUNTIME_VARIABLES` (variables read when a script runs, not when a module is imported), or
a Python with the `PYTHONPATH` or options of another, starts a plain process instead, as does any run on a platform
without `fork`. Tests that are about what a process imports (tests/test_package_imports.py) start their own.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# read when a script runs, not at import: a run may set them to other values than the server's
RUNTIME_VARIABLES = frozenset({"OMP_NUM_THREADS", "MKL_NUM_THREADS", "SRNETS_DEBUG", "PYTEST_CURRENT_TEST", "COLUMNS"})
# set for every run, as the suite's subprocesses set them (the server imports under them)
SERVER_ENV = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
PRELOAD = ("torch", "transformers", "transformers.trainer", "datasets", "hf_srnets", "hf_srnets.cli")

_server: subprocess.Popen | None = None
_server_env: dict[str, str] | None = None
_lock = threading.Lock()


def run_python(
    script: str | os.PathLike,
    *args: object,
    cwd: str | os.PathLike | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess:
    """`python script args` in `cwd` with `env` (default: this process's environment plus `SERVER_ENV`), its output
    captured as text: a fork of the warm server where the environment allows it, else a plain process. Past
    `timeout` seconds the run (and, for a fork, the server) is killed and `subprocess.TimeoutExpired` raised."""
    argv = [str(script), *map(str, args)]
    env = dict(os.environ, **SERVER_ENV) if env is None else dict(env)
    cwd = str(cwd or ROOT)
    server = _warm_server()
    if server is None or _differs(env, _server_env):
        command = [sys.executable, *argv]
        return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return _forked(server, argv, cwd, env, timeout)


def _differs(env: dict[str, str], server_env: dict[str, str] | None) -> bool:
    if server_env is None:
        return True
    keys = (set(env) | set(server_env)) - RUNTIME_VARIABLES
    return any(env.get(key) != server_env.get(key) for key in keys)


def _warm_server() -> subprocess.Popen | None:
    global _server, _server_env
    if not hasattr(os, "fork"):
        return None
    with _lock:
        if _server is None or _server.poll() is not None:
            _server_env = dict(os.environ, **SERVER_ENV)
            _server = subprocess.Popen(
                [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                env=_server_env, cwd=ROOT, text=True, start_new_session=True,
            )  # fmt: skip
            atexit.register(_server.kill)
        return _server


def _forked(
    server: subprocess.Popen, argv: list[str], cwd: str, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess:
    import select
    import signal
    import tempfile

    with tempfile.TemporaryDirectory() as folder, _lock:
        out, err = Path(folder, "stdout"), Path(folder, "stderr")
        request = {"argv": argv, "cwd": cwd, "env": env, "stdout": str(out), "stderr": str(err)}
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        if not select.select([server.stdout], [], [], timeout)[0]:
            os.killpg(server.pid, signal.SIGKILL)  # the server and the run it forked
            server.wait()
            raise subprocess.TimeoutExpired([sys.executable, *argv], timeout)
        returncode = json.loads(server.stdout.readline())["returncode"]
        stdout, stderr = (path.read_text(encoding="utf-8", errors="replace") for path in (out, err))
    return subprocess.CompletedProcess([sys.executable, *argv], returncode, stdout, stderr)


def _serve() -> None:
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)  # never returns
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}) + "\n")
        sys.stdout.flush()


def _child(request: dict) -> None:
    import runpy
    import traceback

    code = 1
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
            os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        sys.stdin = open(0, closefd=False)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = open(2, "w", closefd=False)
        script = os.path.abspath(request["argv"][0])
        sys.argv = [script, *request["argv"][1:]]
        sys.path[0] = os.path.dirname(script)
        if "OMP_NUM_THREADS" in os.environ:
            import torch

            torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
        try:
            runpy.run_path(script, run_name="__main__")
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
            if exit_.code is not None and not isinstance(exit_.code, int):
                print(exit_.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
            code = 1
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code)


if __name__ == "__main__" and sys.argv[1:] == ["--serve"]:
    _serve()
