"""`run_python(script, *args)`: a project script run as its own process, as a user runs it, without paying for its
imports each time (docs/testing.md).

Starting Python and importing torch, transformers' Trainer, datasets and hf_srnets takes about 4 s of CPU before a
script does anything, so a `--help` or a refused option costs 4-5 s a process. Each pytest worker starts one server
process (`python tests/prewarmed.py --serve`) that imports those once; a run is a fork of it: a new process whose
working folder, environment, `sys.argv` and standard streams are the run's, that executes the script as `__main__`
(`runpy`) and ends with its exit status (`SystemExit`'s code, 1 with the traceback on an uncaught exception). The
server never runs a script itself, so every run starts from the same freshly imported state. A run's
`sys.executable` is the client `python` of tests/prewarmed_path.py, so the Python processes it starts (a sweep's
runs, a bench's workers) are forks too.

`run_distributed(script, *args, nproc=N)` is `torchrun --standalone --nproc_per_node N script args` the same way: N
forks started together, each with the variables torchrun gives its workers (`RANK`, `WORLD_SIZE`, `MASTER_PORT`,
...; rank 0 hosts the process group's store), all killed as soon as one fails, as torchrun's agent does. The
launcher itself stays tested where it is the subject (accelerate launch in tests/training/test_launch.py, torchrun
across nodes in tests/training/test_multi_node.py).

What a fork cannot give is a fresh import under another environment: a run whose environment differs from the
server's in anything but `RUNTIME_VARIABLES` (variables read when a script runs, not when a module is imported), or
a Python with the `PYTHONPATH` or options of another, starts a plain process instead, as does any run on a platform
without `fork` and any run on a machine with a CUDA GPU (a fork cannot use CUDA once the server's imports may have
started its driver; the suite's time matters on CI's CPU machines). Tests that are about what a process imports
(tests/test_package_imports.py) start their own.
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
# read when a script runs, not at import: a run may set them to other values than the server's (CUDA_VISIBLE_DEVICES
# and PYTORCH_NVML_BASED_CUDA_CHECK, which importing deepspeed sets, are read when torch looks for CUDA, which the
# server never does; the KMP_ variables, which importing scikit-learn sets, by Intel's OpenMP, which torch's CPU
# build does not use)
RUNTIME_VARIABLES = frozenset({
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "SRNETS_DEBUG", "PYTEST_CURRENT_TEST", "COLUMNS", "CUDA_VISIBLE_DEVICES",
    "PYTORCH_NVML_BASED_CUDA_CHECK", "KMP_DUPLICATE_LIB_OK", "KMP_INIT_AT_FORK",
})  # fmt: skip
# what torchrun sets for each worker (torch.distributed.run), read when the process group starts
LAUNCH_VARIABLES = frozenset({
    "RANK", "LOCAL_RANK", "GROUP_RANK", "ROLE_RANK", "ROLE_NAME", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_WORLD_SIZE",
    "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT",
    "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_USE_AGENT_STORE", "TORCH_NCCL_ASYNC_ERROR_HANDLING",
})  # fmt: skip
# set for every run, as the suite's subprocesses set them (the server imports under them)
SERVER_ENV = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
PRELOAD = ("torch", "transformers", "transformers.trainer", "datasets", "hf_srnets", "hf_srnets.arguments")

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
    return _forked(server, [argv], cwd, [env], timeout)[0]


def run_distributed(
    script: str | os.PathLike,
    *args: object,
    nproc: int,
    cwd: str | os.PathLike | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 600,
) -> list[subprocess.CompletedProcess]:
    """`torchrun --standalone --nproc_per_node nproc script args`: one result per rank, as forks of the warm server
    where the environment allows it (module docstring); else torchrun itself, whose one result holds every rank's
    output."""
    argv = [str(script), *map(str, args)]
    env = dict(os.environ, **SERVER_ENV) if env is None else dict(env)
    cwd = str(cwd or ROOT)
    server = _warm_server()
    if server is None or _differs(env, _server_env, LAUNCH_VARIABLES):
        command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}", *argv]
        return [subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)]
    return _forked(server, [argv] * nproc, cwd, _rank_environments(env, nproc), timeout)


def _rank_environments(env: dict[str, str], nproc: int) -> list[dict[str, str]]:
    """Each rank's environment as `torchrun --standalone` on one node gives it, with rank 0 hosting the store."""
    import socket
    import uuid

    with socket.socket() as probe:  # a free port, as torchrun's standalone rendezvous picks one
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    shared = {
        "GROUP_RANK": "0", "ROLE_NAME": "default", "WORLD_SIZE": str(nproc), "LOCAL_WORLD_SIZE": str(nproc),
        "GROUP_WORLD_SIZE": "1", "ROLE_WORLD_SIZE": str(nproc), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
        "TORCHELASTIC_RUN_ID": uuid.uuid4().hex, "TORCHELASTIC_RESTART_COUNT": "0", "TORCHELASTIC_MAX_RESTARTS": "0",
        "TORCHELASTIC_USE_AGENT_STORE": "False", "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
    }  # fmt: skip
    env = {"OMP_NUM_THREADS": "1", **env, **shared}  # torchrun's default of one thread a worker
    ranks = {"RANK", "LOCAL_RANK", "ROLE_RANK"}
    return [{**env, **dict.fromkeys(ranks, str(rank))} for rank in range(nproc)]


def _differs(env: dict[str, str], server_env: dict[str, str] | None, also: frozenset[str] = frozenset()) -> bool:
    if server_env is None:
        return True
    keys = (set(env) | set(server_env)) - RUNTIME_VARIABLES - also
    return any(env.get(key) != server_env.get(key) for key in keys)


def _warm_server() -> subprocess.Popen | None:
    global _server, _server_env
    if not forks_possible():
        return None
    with _lock:
        # a variable this process set since the server started (a module a test imported) would make every run a
        # plain process: the server starts again under the new environment
        drifted = _server is not None and _differs(dict(os.environ, **SERVER_ENV), _server_env)
        if drifted:
            _server.kill()
            _server.wait()
        if _server is None or _server.poll() is not None:
            _server_env = dict(os.environ, **SERVER_ENV)
            _server = subprocess.Popen(
                [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                env=_server_env, cwd=ROOT, text=True, start_new_session=True,
            )  # fmt: skip
            atexit.register(_server.kill)
        return _server


def forks_possible() -> bool:
    """Whether a run may be a fork of a warm server here: a platform with `fork` and no CUDA GPU (module docstring)."""
    import torch

    return hasattr(os, "fork") and not torch.cuda.is_available()


def _forked(
    server: subprocess.Popen, argvs: list[list[str]], cwd: str, envs: list[dict[str, str]], timeout: float
) -> list[subprocess.CompletedProcess]:
    """Runs `argvs[i]` under `envs[i]`, all started together as forks of `server`; one result each."""
    import select
    import signal
    import tempfile

    with tempfile.TemporaryDirectory() as folder, _lock:
        outputs = [(Path(folder, f"stdout{i}"), Path(folder, f"stderr{i}")) for i in range(len(argvs))]
        from prewarmed_path import client_python

        executable = client_python()  # the Python processes a run starts are forks too (tests/prewarmed_path.py)
        runs = [
            {"argv": argv, "cwd": cwd, "env": env, "stdout": str(out), "stderr": str(err), "executable": executable}
            for argv, env, (out, err) in zip(argvs, envs, outputs)
        ]
        server.stdin.write(json.dumps(runs) + "\n")
        server.stdin.flush()
        if not select.select([server.stdout], [], [], timeout)[0]:
            os.killpg(server.pid, signal.SIGKILL)  # the server and the runs it forked
            server.wait()
            raise subprocess.TimeoutExpired([sys.executable, *argvs[0]], timeout)
        codes = json.loads(server.stdout.readline())
        texts = [[path.read_text(encoding="utf-8", errors="replace") for path in pair] for pair in outputs]
    return [
        subprocess.CompletedProcess([sys.executable, *argv], code, out, err)
        for argv, code, (out, err) in zip(argvs, codes, texts)
    ]


def _serve() -> None:
    import gc
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    gc.freeze()  # the imports stay out of the runs' garbage collections (tests/conftest.py says why)
    for line in sys.stdin:
        sys.stdout.write(json.dumps(_run_together(json.loads(line))) + "\n")
        sys.stdout.flush()


def _run_together(runs: list[dict]) -> list[int]:
    """Fork one child a run, all at once; once one fails, kill the others (ranks waiting in a collective for it
    would wait forever), as torchrun's agent does. Their exit statuses, in order."""
    import signal

    pids = []
    for request in runs:
        pid = os.fork()
        if pid == 0:
            _child(request)  # never returns
        pids.append(pid)
    codes: dict[int, int] = {}
    while len(codes) < len(pids):
        pid, status = os.wait()
        codes[pid] = os.waitstatus_to_exitcode(status)
        if codes[pid] != 0:
            for other in set(pids) - set(codes):
                os.kill(other, signal.SIGKILL)
    return [codes[pid] for pid in pids]


def _child(request: dict) -> None:
    code = 1
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
            os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        sys.executable = request["executable"] or sys.executable
        code = execute(request["argv"])
    finally:
        os._exit(code)


def execute(argv: list[str]) -> int:
    """Runs `argv` as `python argv` would in this process (`script args`, `-m module args`, `-c code args` or `- args`
    with the code on standard input), on the standard streams 0, 1 and 2; its exit status (`SystemExit`'s code, 1 with
    the traceback on an uncaught exception). The caller ends the process after it."""
    import io
    import runpy
    import traceback

    sys.stdin = open(0, closefd=False)
    if os.environ.get("PYTHONUNBUFFERED"):  # as `python -u`: every write reaches the descriptor at once
        streams = (io.TextIOWrapper(open(fd, "wb", 0, closefd=False), write_through=True) for fd in (1, 2))
        sys.stdout, sys.stderr = streams
    else:
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = open(2, "w", closefd=False)
    sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    if "OMP_NUM_THREADS" in os.environ:
        import torch

        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    code = 1
    try:
        if argv[0] in ("-c", "-"):
            sys.argv, sys.path[0] = argv[:1] + argv[2 if argv[0] == "-c" else 1 :], ""
            source = argv[1] if argv[0] == "-c" else sys.stdin.read()
            exec(compile(source, "<string>" if argv[0] == "-c" else "<stdin>", "exec"), {"__name__": "__main__"})
        elif argv[0] == "-m":
            sys.argv, sys.path[0] = argv[1:], os.getcwd()
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            script = os.path.abspath(argv[0])
            sys.argv, sys.path[0] = [script, *argv[1:]], os.path.dirname(script)
            runpy.run_path(script, run_name="__main__")
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        if exit_.code is not None and not isinstance(exit_.code, int):
            print(exit_.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
    return code


if __name__ == "__main__" and sys.argv[1:] == ["--serve"]:
    _serve()
