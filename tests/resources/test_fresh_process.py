"""`run_in_fresh_process`: each call a new process forked from a server that imported the preloaded modules and the
calling script, its value or its traceback returned, its printed output on the caller's standard error.

The calls are made by a small script of their own (a bench's situation: functions of `__main__`), run once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    from hf_srnets.resources.fresh_process import FreshProcessError, run_in_fresh_process

    SEEN = []

    def remember(value):
        SEEN.append(value)
        print("printed by the function")
        return {"pid": os.getpid(), "parent": os.getppid(), "seen": list(SEEN), "colorsys": "colorsys" in sys.modules,
                "wave": "wave" in sys.modules, "threads": os.environ.get("OMP_NUM_THREADS")}

    def fail():
        raise ValueError("the column 'hypothesis' is missing")

    def die():
        os._exit(3)

    def error_of(function):
        try:
            run_in_fresh_process(function, preload=("colorsys",))
        except FreshProcessError as error:
            return str(error)

    if __name__ == "__main__":  # the server imports this script
        first = run_in_fresh_process(remember, 1, preload=("colorsys",))
        second = run_in_fresh_process(remember, 2, preload=("colorsys",))
        print(json.dumps({"caller": os.getpid(), "caller_seen": SEEN, "calls": [first, second],
                          "raised": error_of(fail), "died": error_of(die)}))
    """
)


@pytest.fixture(scope="module")
def calls(tmp_path_factory) -> tuple[dict, str]:
    script = tmp_path_factory.mktemp("fresh") / "measure.py"
    script.write_text(SCRIPT, encoding="utf-8")
    env = dict(os.environ, OMP_NUM_THREADS="3", PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout), done.stderr


def test_each_call_is_a_new_process_forked_from_one_server_not_from_the_caller(calls):
    result, _ = calls
    first, second = result["calls"]
    assert len({result["caller"], first["pid"], second["pid"]}) == 3
    assert first["parent"] == second["parent"] != result["caller"], "both forks of the server"
    assert first["seen"] == [1] and second["seen"] == [2], "nothing a call did is seen by the next"
    assert result["caller_seen"] == [], "nor by the caller"


def test_the_server_imported_the_preloaded_modules_and_the_callers_environment(calls):
    result, _ = calls
    assert all(call["colorsys"] and not call["wave"] for call in result["calls"])
    assert {call["threads"] for call in result["calls"]} == {"3"}


def test_what_the_function_prints_goes_to_standard_error_not_into_the_callers_output(calls):
    _, stderr = calls
    assert stderr.count("printed by the function") == 2  # stdout parsed as one JSON line above


def test_an_exception_comes_back_with_its_traceback_and_a_dead_process_with_its_exit_code(calls):
    result, _ = calls
    assert "fail failed in its fresh process" in result["raised"]
    assert "ValueError: the column 'hypothesis' is missing" in result["raised"]
    assert "die failed in its fresh process (exit code 3)" in result["died"]
    assert "without an answer" in result["died"]
