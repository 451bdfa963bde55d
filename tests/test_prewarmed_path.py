"""tests/prewarmed_path.py: a `python` on PATH whose runs are forks of a warm server end as plain processes do (exit
status, output, arguments, standard input), keep what a child process inherits (a descriptor passed with
`pass_fds`, its parent's pid), fork the Python processes they start themselves, follow signals both ways, and leave
to the real interpreter what a fork cannot give (a variable read at import that differs, a PYTHONPATH that would
import another copy of a preloaded package)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from prewarmed import forks_possible
from prewarmed_path import client_python, python_on_path

SCRIPT = """
import os, sys
print("argv", sys.argv[1:], "cwd", os.path.basename(os.getcwd()))
print("preloaded", "torch" in sys.modules)
if sys.argv[1:2] == ["refuse"]:
    print("error: --x is bad", file=sys.stderr)
    sys.exit(3)
"""

pytestmark = pytest.mark.skipif(not forks_possible(), reason="runs cannot be forks here (no fork, or a CUDA GPU)")


def bash(command: str, cwd, env: dict[str, str] | None = None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env or python_on_path(), capture_output=True, text=True, **kwargs
    )


@pytest.mark.parametrize("case", ["ok", "refuse"])
def test_a_script_run_by_a_shell_script_ends_as_a_plain_process_does(tmp_path, case):
    (tmp_path / "script.py").write_text(SCRIPT)
    forked = bash(f"python script.py {case} 'two words'", tmp_path)
    command = [sys.executable, "script.py", case, "two words"]
    plain = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert forked.returncode == plain.returncode == {"ok": 0, "refuse": 3}[case]
    assert "preloaded True" in forked.stdout, "the run was not a fork of the warm server"
    assert forked.stdout.replace("preloaded True", "preloaded False") == plain.stdout
    assert forked.stderr == plain.stderr


def test_modules_code_and_standard_input_run_as_python_runs_them(tmp_path):
    done = bash(
        "python -m json.tool <<< '{\"a\": 1}'; python -c 'import sys; print(sys.argv)' x y;"
        ' echo \'import sys; print("stdin", sys.argv, "torch" in sys.modules)\' | python -u - z',
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["{", '    "a": 1', "}", "['-c', 'x', 'y']", "stdin ['-', 'z'] True"]


def test_a_run_keeps_a_passed_descriptor_and_its_parents_pid_and_forks_its_own_children(tmp_path):
    """What a sweep gives its run: the lock's descriptor (`pass_fds`), checked against the parent's pid."""
    (tmp_path / "child.py").write_text(
        "import os, sys\nfd = int(sys.argv[1])\nprint(os.read(fd, 5).decode(), os.getppid(), sys.argv[2],"
        " 'torch' in sys.modules)\n"
    )
    (tmp_path / "parent.py").write_text(
        "import os, subprocess, sys\nread, write = os.pipe()\nos.write(write, b'token')\n"
        "subprocess.run([sys.executable, 'child.py', str(read), str(os.getpid())], pass_fds=[read], check=True)\n"
    )
    done = bash("python parent.py", tmp_path)
    assert done.returncode == 0, done.stderr
    token, ppid, parent_pid, preloaded = done.stdout.split()
    assert token == "token" and ppid == parent_pid and preloaded == "True"


def test_a_killed_client_takes_its_run_with_it_and_a_terminated_one_passes_the_signal_on(tmp_path):
    (tmp_path / "sleep.py").write_text(
        "import os, sys, time\nopen(sys.argv[1], 'w').write(str(os.getpid()))\ntime.sleep(60)\n"
    )
    pid_file = tmp_path / "pid"
    process = subprocess.Popen(
        ["bash", "-c", f"python sleep.py {pid_file}"], cwd=tmp_path, env=python_on_path(), start_new_session=True
    )
    run_pid = wait_for_pid(pid_file)
    os.killpg(process.pid, signal.SIGKILL)  # as a test stops a script: the run is not in that process group
    process.wait()
    assert gone(run_pid), "the run outlived its killed client"
    pid_file.unlink()
    process = subprocess.Popen([client_python(), "sleep.py", str(pid_file)], cwd=tmp_path, env=python_on_path())
    run_pid = wait_for_pid(pid_file)
    process.terminate()
    assert process.wait(timeout=30) == -signal.SIGTERM and gone(run_pid)


def wait_for_pid(path, timeout: float = 60) -> int:
    start = time.time()
    while not (path.exists() and path.read_text()):
        assert time.time() - start < timeout
        time.sleep(0.05)
    return int(path.read_text())


def gone(pid: int, timeout: float = 10) -> bool:
    start = time.time()
    while time.time() - start < timeout:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_what_a_fork_cannot_give_is_left_to_the_real_interpreter(tmp_path):
    (tmp_path / "script.py").write_text(SCRIPT)
    shadow = tmp_path / "shadow" / "torch"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    (tmp_path / "extra").mkdir()
    (tmp_path / "extra" / "helper_module.py").write_text("")
    runs = {
        "read at import": "HF_HUB_OFFLINE=0 python script.py",
        "not read at import": "DATA_DIR=/elsewhere OUT=x python script.py",
        "another torch": f"PYTHONPATH={tmp_path / 'shadow'} python script.py",
        "a folder of its own": f"PYTHONPATH={tmp_path / 'extra'} python -c 'import helper_module; import script'",
        "an option": "python -X dev script.py",
    }
    preloaded = {name: "preloaded True" in bash(command, tmp_path).stdout for name, command in runs.items()}
    assert preloaded == {
        "read at import": False,
        "not read at import": True,
        "another torch": False,
        "a folder of its own": True,
        "an option": False,
    }
