"""A sweep killed with SIGKILL leaves its run going on (issue 70, a regression): the run must keep the dir's lock
until it ends, a rerun must wait for it and say what it waits for, then resume or skip the run, never take the dir
over while the orphan still writes (which ended in "checkpoint-4 is not a directory")."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from experiments.test_sweep_records import finishing_runner, recipe_for

from hf_srnets.experiments import child_runs
from hf_srnets.experiments import sweep as sweep_lib
from hf_srnets.experiments.sweep_runs import planned_runs, run_status, write_meta
from hf_srnets.training.output_dir import OutputDirError, acquire_lock, handed_over_fds, handing_over, read_lock

# a sweep as child_runs runs one: it locks the dir and starts its run with the lock handed over and its fd passed
SWEEP = """import subprocess, sys
from hf_srnets.training.output_dir import acquire_lock, handed_over_fds, handing_over
lock = acquire_lock(sys.argv[1])
with handing_over(lock):
    subprocess.run([sys.executable, "-c", sys.argv[2], sys.argv[1]], pass_fds=handed_over_fds())
"""
# its run: takes the handed-over lock, says so, and writes until told to stop
RUN = """import sys, time
from pathlib import Path
from hf_srnets.training.output_dir import acquire_lock
out = Path(sys.argv[1])
acquire_lock(str(out))
(out / "started").write_text("")
for _ in range(600):
    if (out / "stop").exists():
        break
    time.sleep(0.05)
"""


def orphaned_run(out: Path) -> int:
    """Start a sweep's stand-in, wait until its run holds the dir, SIGKILL the sweep alone; return the run's pid."""
    sweep = subprocess.Popen([sys.executable, "-c", SWEEP, str(out), RUN], start_new_session=True)
    deadline = time.monotonic() + 60
    while not (out / "started").exists():
        assert sweep.poll() is None and time.monotonic() < deadline, "the run did not start"
        time.sleep(0.05)
    os.kill(sweep.pid, signal.SIGKILL)
    sweep.wait()
    run_pid = read_lock(str(out))["run_pid"]
    assert run_pid != sweep.pid
    return run_pid


def test_the_run_of_a_killed_sweep_keeps_the_lock_and_a_rerun_waits_for_it(tmp_path, monkeypatch, caplog):
    out = tmp_path / "run"
    out.mkdir()
    run_pid = orphaned_run(out)
    try:
        with pytest.raises(OutputDirError, match=rf"\(pid {run_pid}, a run left writing there by the sweep pid \d+"):
            acquire_lock(str(out))  # the old code took the dir here, while the run still wrote
        monkeypatch.setattr(sweep_lib, "ORPHAN_POLL_SECONDS", 0.05)
        got: list = []
        waiting = threading.Thread(target=lambda: got.append(sweep_lib.acquire_after_orphan(str(out))))
        with caplog.at_level(logging.WARNING, logger=sweep_lib.logger.name):
            waiting.start()
            time.sleep(0.5)
            assert waiting.is_alive() and not got  # it waits ...
            (out / "stop").write_text("")  # ... until the run ends
            waiting.join(30)
        ((lock, waited),) = got
        lock.release()
        assert waited
        (message,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Waiting for")]
        assert f"pid {run_pid}, a run left writing there by the sweep pid" in message and f"kill {run_pid}" in message
    finally:
        (out / "stop").write_text("")


def test_child_runs_pass_the_handed_over_lock_to_the_run(tmp_path, monkeypatch):
    passed = []
    monkeypatch.setattr(child_runs.subprocess, "run", lambda argv, **kw: passed.append(kw) or _Done())
    lock = acquire_lock(str(tmp_path))
    try:
        with handing_over(lock):
            child_runs.run_glue_sparse(["--output_dir", str(tmp_path)])
            assert handed_over_fds() == (lock._fd,)
    finally:
        lock.release()
    assert passed == [{"pass_fds": (lock_fd := passed[0]["pass_fds"][0],)}] and isinstance(lock_fd, int)
    assert handed_over_fds() == ()


class _Done:
    returncode = 0


def test_a_rerun_that_waited_skips_the_run_the_orphan_finished(tmp_path, monkeypatch):
    """The plan said "start"; once the orphan has ended the run is done: no second run, its checkpoints removed."""
    recipe = {**recipe_for(tmp_path), "checkpoint_steps": 4}
    (run,) = planned_runs(recipe)

    def orphan_finishes(output_dir: str):
        write_meta(run)  # as the killed sweep did before it started the run
        finishing_runner([])([*run.argv, "--output_dir", output_dir])
        Path(output_dir, "checkpoint-4").mkdir()
        (Path(output_dir) / "checkpoint-4" / "trainer_state.json").write_text(json.dumps({}))
        return acquire_lock(output_dir), True

    calls: list = []
    monkeypatch.setattr(sweep_lib, "acquire_after_orphan", orphan_finishes)
    sweep_lib.run_sweep_runs(recipe, runner=finishing_runner(calls))
    assert calls == [] and run_status(run).state == "done"
    assert (
        not (Path(run.output_dir) / "checkpoint-4").exists() and not (Path(run.output_dir) / ".hf_srnets.lock").exists()
    )
