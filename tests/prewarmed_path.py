"""`python_on_path(env)`: a `python` (and `python3`) first on `PATH` whose runs are forks of a warm server, for the
tests that run a shell script or a program that starts Python processes itself (docs/testing.md).

`tests/prewarmed.py` spares a test the 4-6 s of CPU that starting Python and importing torch, transformers' Trainer
and datasets costs, where the test starts the process. A script such as `examples/quickstart.sh` or
`bench/gpu_check.sh` starts its own, several each; so does a sweep for each of its runs (`sys.executable`). Here
each pytest worker starts one server (`python tests/prewarmed_path.py --serve SOCKET`, the imports of
`prewarmed.PRELOAD` done once) listening on a Unix socket, and writes a small client script named `python`: it sends
the server its arguments, working folder, environment and open descriptors (the standard streams and any it
inherited, such as the lock a sweep hands its runs with `pass_fds`; the descriptors themselves), and the server
forks a run that executes the command as `__main__` (`prewarmed.execute`) with `sys.executable` set to the client,
so that the Python processes the run starts are forks too. The client ends with the run's exit status (killed by a
signal: the same signal), passes SIGINT, SIGTERM and SIGHUP on to the run, and a run whose client died (`os.killpg`
of a test's process group) is killed with its own process group.

What a fork cannot give, the client leaves to the real interpreter (`os.execv`, the same process): options other
than `-m`, `-c`, `-` (the code on standard input), `-u` and `-B` (passed on as `PYTHONUNBUFFERED` and
`PYTHONDONTWRITEBYTECODE`, which a run honours, `HONOURED`); a server that cannot be reached; and an
environment that differs from the server's where the server's imports read it: every variable they read through
`os.environ` (recorded while they ran), and those read from C (`C_PREFIXES`), but the ones read only when a script
runs (`prewarmed.RUNTIME_VARIABLES`, torchrun's and accelerate launch's) and the shell's own bookkeeping. A
`PYTHONPATH` the server lacks is honoured (its folders put first on the run's `sys.path`) unless a package the
server imported would come from another file there.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator, MutableMapping
from pathlib import Path

from prewarmed import LAUNCH_VARIABLES, PRELOAD, ROOT, RUNTIME_VARIABLES, SERVER_ENV, execute, forks_possible

# read by the interpreter and by torch's and its libraries' C code, which the audit of os.environ does not see
# (not KMP_: Intel's OpenMP, which accelerate launch configures and torch's CPU build does not use)
C_PREFIXES = ("TORCH", "PYTORCH", "OMP_", "MKL_", "GOMP_", "OPENBLAS", "LD_", "CUDA", "NCCL", "PYTHON")
NOT_THE_INTERPRETERS = "PYTHON_"  # a script's own (bench/gpu_check.sh's PYTHON_CPU); CPython 3.11 reads PYTHONxxx
# read by a launched script when it starts its process group or Accelerator, or by torch's elastic agent and its
# error handler (what torchrun and accelerate launch give their workers beyond prewarmed.LAUNCH_VARIABLES), not at
# import
LAUNCHED = ("ACCELERATE_", "FSDP_", "TORCHELASTIC_")
SHELL_BOOKKEEPING = frozenset({"_", "SHLVL", "PWD", "OLDPWD", "COLUMNS", "LINES", "PS1"})  # a script's bash sets
# read by the interpreter as it starts, which a run honours itself (`prewarmed.execute`); `-u` and `-B` set them
HONOURED = frozenset({"PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE"})
PASSED_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")
MAX_DESCRIPTORS = 64

CLIENT = """#!{python} -S
# tests/prewarmed_path.py's client: `python ARGS` as a fork of the warm server at {socket_path}
import json, os, signal, socket, sys
REAL, SOCKET = {python!r}, {socket_path!r}
args, flags = sys.argv[1:], {{"-u": "PYTHONUNBUFFERED", "-B": "PYTHONDONTWRITEBYTECODE"}}
while args[:1] and args[0] in flags:
    os.environ[flags[args.pop(0)]] = "1"
def plain():
    os.execv(REAL, [REAL, *sys.argv[1:]])
def descriptors():  # the standard streams and any other this process inherited (pass_fds): the run gets them all
    me = os.stat(__file__)  # Python holds this file open while it runs
    fds = []
    for name in os.listdir("/proc/self/fd"):
        try:
            st = os.fstat(int(name))
        except OSError:
            continue  # the listing's own
        if (st.st_dev, st.st_ino) != (me.st_dev, me.st_ino):
            fds.append(int(name))
    return sorted(fds)
if not args or args[0] in ("-m", "-c") and len(args) < 2 or args[0][:1] == "-" and args[0] not in ("-m", "-c", "-"):
    plain()
try:
    fds = descriptors()
    conn = socket.socket(socket.AF_UNIX)
    conn.connect(SOCKET)
except OSError:
    plain()
request = {{"argv": args, "cwd": os.getcwd(), "env": dict(os.environ), "executable": sys.argv[0], "fds": fds,
           "ppid": os.getppid()}}
request = json.dumps(request).encode()
socket.send_fds(conn, [len(request).to_bytes(8, "big")], fds)
conn.sendall(request)
reader = conn.makefile("rb")
answer = reader.readline().strip()
if answer in (b"plain", b""):
    conn.close()
    plain()
pid = int(answer)
def pass_on(signum, frame):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass
for name in {signals!r}:
    signal.signal(getattr(signal, name), pass_on)
status = reader.readline().strip()
code = int(status) if status else -signal.SIGKILL
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
os._exit(code)
"""

_servers: dict[str, subprocess.Popen] = {}


def python_on_path(env: dict[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this process's environment plus `SERVER_ENV`) with a folder first on `PATH` whose `python`
    and `python3` are clients of this worker's warm server (started on first use). On a machine where runs cannot
    be forks (no `fork`, a CUDA GPU: tests/prewarmed.py says why) `env` with the interpreter's folder first."""
    env = dict(os.environ, **SERVER_ENV) if env is None else dict(env)
    client = client_python()
    folder = os.path.dirname(client or sys.executable)
    return {**env, "PATH": os.pathsep.join([folder, env.get("PATH", "")])}


def client_python() -> str | None:
    """The path of this worker's client `python` (its server started on first use), None where runs cannot be
    forks."""
    return str(_client_folder() / "python") if forks_possible() else None


def _client_folder() -> Path:
    """This worker's client folder, its server started (again, if it ended) under this process's environment."""
    key = str(os.getpid())
    server = _servers.get(key)
    folder = Path(tempfile.gettempdir(), f"srnets_prewarmed_path_{os.getpid()}")
    if server is None or server.poll() is not None:
        folder.mkdir(exist_ok=True)
        socket_path = folder / "server.sock"
        socket_path.unlink(missing_ok=True)
        for name in ("python", "python3"):
            client = folder / name
            text = CLIENT.format(python=sys.executable, socket_path=str(socket_path), signals=PASSED_SIGNALS)
            client.write_text(text)
            client.chmod(0o755)
        server_env = dict(os.environ, **SERVER_ENV)
        server_env["PATH"] = os.pathsep.join([str(folder), server_env.get("PATH", "")])
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(socket_path)], env=server_env, cwd=ROOT,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        server.stdout.readline()  # "ready": the imports are done and the socket listens
        atexit.register(server.kill)
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _servers[key] = server
    return folder


class _AuditedEnviron(MutableMapping):
    """`os.environ` that records the names read through it."""

    def __init__(self, environ: MutableMapping[str, str]):
        self.environ, self.read = environ, set()

    def __getitem__(self, key: str) -> str:
        self.read.add(key)
        return self.environ[key]

    def __contains__(self, key: object) -> bool:
        self.read.add(key)
        return key in self.environ

    def __setitem__(self, key: str, value: str) -> None:
        self.environ[key] = value

    def __delitem__(self, key: str) -> None:
        del self.environ[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.environ)

    def __len__(self) -> int:
        return len(self.environ)

    def copy(self) -> dict[str, str]:
        return dict(self.environ)


def import_time_variables(read: set[str], env: dict[str, str]) -> frozenset[str]:
    """The variables a run's environment must share with the server's for a fork to be the run: those the imports
    read, and any of the server's or the run's that C code may read, but the ones read only when a script runs."""
    names = set(read) | {name for name in env if name.startswith(C_PREFIXES)}
    names = {name for name in names if not name.startswith(NOT_THE_INTERPRETERS)}
    runtime = RUNTIME_VARIABLES | LAUNCH_VARIABLES | SHELL_BOOKKEEPING | HONOURED | {"PYTHONPATH"}
    return frozenset(name for name in names if name not in runtime and not name.startswith(LAUNCHED))


def forkable(request_env: dict[str, str], server_env: dict[str, str], read: set[str]) -> bool:
    names = import_time_variables(read, request_env) | import_time_variables(set(), server_env)
    same = all(request_env.get(name) == server_env.get(name) for name in names)
    return same and not shadowing(added_path(request_env, server_env))


def without_folder(env: dict[str, str], folder: str) -> dict[str, str]:
    """`env` with `folder` left out of its `PATH`: the client's folder, which holds only this interpreter's clients,
    may be on the run's `PATH` or not (a run started by `sys.executable`)."""
    path = [entry for entry in env.get("PATH", "").split(os.pathsep) if entry != folder]
    return {**env, "PATH": os.pathsep.join(path)}


def added_path(request_env: dict[str, str], server_env: dict[str, str]) -> list[str]:
    """The run's `PYTHONPATH` folders that the server's lacks: they go to the front of the run's `sys.path`."""
    server = server_env.get("PYTHONPATH", "").split(os.pathsep)
    return [folder for folder in request_env.get("PYTHONPATH", "").split(os.pathsep) if folder and folder not in server]


def shadowing(folders: list[str]) -> list[str]:
    """The preloaded packages that `folders` would give another file than the one the server imported (a plain
    process would import that one: the run cannot be a fork)."""
    from importlib.machinery import PathFinder

    found = {name: PathFinder.find_spec(name.split(".")[0], folders) for name in PRELOAD}
    return [
        name for name, spec in found.items()
        if spec is not None and spec.origin != getattr(sys.modules.get(name.split(".")[0]), "__file__", None)
    ]  # fmt: skip


def _serve(socket_path: str) -> None:
    import gc
    import importlib
    import signal

    folder = os.path.dirname(socket_path)
    # as the server started (a plain process starts so: the imports set some), the client's folder left out
    server_env = without_folder(dict(os.environ), folder)
    audited = _AuditedEnviron(os.environ)
    environ, os.environ = os.environ, audited  # the object is swapped back below; the environment stays
    try:
        for name in PRELOAD:
            importlib.import_module(name)
    finally:
        os.environ = environ  # noqa: B003 (the same object as before, not a new environment)
    gc.freeze()  # the imports stay out of the runs' garbage collections (tests/conftest.py says why)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the waiters are reaped as they end
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(socket_path)
    listener.listen(64)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        conn, _ = listener.accept()
        message, fds, _, _ = socket.recv_fds(conn, 8, MAX_DESCRIPTORS)
        request = json.loads(_receive(conn, int.from_bytes(message, "big")))
        whole = len(fds) == len(request["fds"]) and request["fds"][:3] == [0, 1, 2]  # else more than MAX_DESCRIPTORS
        if not whole or not forkable(without_folder(request["env"], folder), server_env, audited.read):
            conn.sendall(b"plain\n")
        elif os.fork() == 0:
            listener.close()
            _wait_on_run(conn, fds, request)  # never returns
        for fd in fds:
            os.close(fd)
        conn.close()


def _receive(conn: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = conn.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("the client left before its request was whole")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _wait_on_run(conn: socket.socket, fds: list[int], request: dict) -> None:
    """Fork the run, tell the client its pid, then its exit status; kill it (and the processes it started) if the
    client goes first."""
    import select
    import signal

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    pid = os.fork()
    if pid == 0:
        conn.close()
        _run(fds, request)  # never returns
    try:
        os.setpgid(pid, pid)  # as the run does itself: whichever comes first
    except OSError:
        pass
    for fd in fds:
        os.close(fd)
    conn.sendall(f"{pid}\n".encode())
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if select.select([conn], [], [], 0.05)[0] and not conn.recv(1):  # the client is gone
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            os._exit(0)
    try:
        conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
    finally:
        os._exit(0)


def _run(fds: list[int], request: dict) -> None:
    code = 1
    try:
        os.setpgid(0, 0)  # its own process group, which the waiter kills if the client dies
        _take_descriptors(fds, request["fds"])
        os.chdir(request["cwd"])
        server_env = dict(os.environ)
        os.environ.clear()
        os.environ.update(request["env"])
        sys.path[1:1] = added_path(request["env"], server_env)  # after the script's folder, as Python puts them
        sys.executable = request["executable"]  # the Python processes the run starts are forks too
        os.getppid = lambda: request["ppid"]  # the run stands in for the client: its parent is the client's (a sweep
        # hands its lock to its child run, which checks that the lock names its parent)
        code = execute(request["argv"])
    finally:
        os._exit(code)


def _take_descriptors(received: list[int], numbers: list[int]) -> None:
    """Give the received descriptors the client's numbers (moved above every number first, so that none is
    overwritten before it is moved)."""
    import fcntl

    high = max([*received, *numbers]) + 1
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, high) for fd in received]
    for fd in received:
        os.close(fd)
    for fd, number in zip(moved, numbers):
        os.dup2(fd, number)  # inheritable, as the client's were
        os.close(fd)


if __name__ == "__main__" and sys.argv[1:2] == ["--serve"]:
    _serve(sys.argv[2])
