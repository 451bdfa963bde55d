"""tests/prewarmed.py: a script run as a fork of the warm server ends as the same script run as a plain process
does (exit status, standard output and error, working folder, arguments, runtime environment), and a run whose
environment differs where modules read it at import starts a plain process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from prewarmed import SERVER_ENV, run_python

SCRIPT = """
import os, sys
print("argv", sys.argv[1:], "cwd", os.path.basename(os.getcwd()), "threads", os.environ.get("OMP_NUM_THREADS"))
print("preloaded", "torch" in sys.modules)
if sys.argv[1] == "refuse":
    print("error: --x is bad", file=sys.stderr)
    sys.exit(2)
if sys.argv[1] == "crash":
    raise RuntimeError("an unexpected failure")
if sys.argv[1] == "message":
    sys.exit("a message given to sys.exit")
"""


@pytest.mark.parametrize("case", ["ok", "refuse", "crash", "message"])
def test_a_forked_run_ends_as_a_plain_process_does(tmp_path, case):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    (tmp_path / "here").mkdir()
    env = dict(os.environ, **SERVER_ENV, OMP_NUM_THREADS="1")
    forked = run_python(script, case, "two words", cwd=tmp_path / "here", env=env)
    plain = subprocess.run(
        [sys.executable, str(script), case, "two words"], cwd=tmp_path / "here", env=env, capture_output=True, text=True
    )
    assert forked.returncode == plain.returncode == {"ok": 0, "refuse": 2, "crash": 1, "message": 1}[case]
    assert forked.stdout.replace("preloaded True", "preloaded False") == plain.stdout
    assert "argv ['" + case + "', 'two words'] cwd here threads 1" in forked.stdout
    assert "preloaded True" in forked.stdout, "the run was not a fork of the warm server"
    if case == "crash":  # the traceback's frames differ (runpy's in the fork), its last line does not
        assert forked.stderr.splitlines()[-1] == plain.stderr.splitlines()[-1] == "RuntimeError: an unexpected failure"
        assert forked.stderr.startswith("Traceback")
    else:
        assert forked.stderr == plain.stderr


def test_an_environment_read_at_import_that_differs_starts_a_plain_process(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    env = {**os.environ, **SERVER_ENV, "HF_HUB_OFFLINE": "0"}
    done = run_python(script, "ok", cwd=tmp_path, env=env)
    assert done.returncode == 0 and "preloaded False" in done.stdout


def test_a_forked_run_past_its_timeout_is_killed_and_the_next_run_gets_a_new_server(tmp_path):
    script = tmp_path / "script.py"
    script.write_text("import time\ntime.sleep(60)\n")
    env = dict(os.environ, **SERVER_ENV)
    with pytest.raises(subprocess.TimeoutExpired):
        run_python(script, cwd=tmp_path, env=env, timeout=1)
    (tmp_path / "ok.py").write_text(SCRIPT)
    done = run_python(tmp_path / "ok.py", "ok", cwd=tmp_path, env=env)
    assert done.returncode == 0 and "preloaded True" in done.stdout
