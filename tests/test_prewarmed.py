"""tests/prewarmed.py: a script run as a fork of the warm server ends as the same script run as a plain process
does (exit status, standard output and error, working folder, arguments, runtime environment), and a run whose
environment differs where modules read it at import starts a plain process; a distributed launch of forks gives each
the variables torchrun gives its workers and ends when one rank fails."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from prewarmed import SERVER_ENV, run_distributed, run_python

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


def test_a_variable_this_process_set_since_the_server_started_restarts_it_instead_of_every_run_going_plain(
    tmp_path, monkeypatch
):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    assert "preloaded True" in run_python(script, "ok", cwd=tmp_path).stdout  # the server runs
    monkeypatch.setenv("SRNETS_TEST_SET_BY_AN_IMPORT", "1")  # as importing deepspeed sets a variable
    done = run_python(script, "ok", cwd=tmp_path)
    assert done.returncode == 0 and "preloaded True" in done.stdout


RANKS = """
import os, sys
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
total = torch.tensor([dist.get_rank() + 1.0])
dist.all_reduce(total)
names = ("RANK", "LOCAL_RANK", "GROUP_RANK", "ROLE_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_WORLD_SIZE",
         "ROLE_WORLD_SIZE", "ROLE_NAME", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS")
with open(f"rank{dist.get_rank()}.txt", "w") as f:  # a file a rank: their output to one pipe would interleave
    print("env", " ".join(f"{name}={os.environ.get(name)}" for name in names), file=f)
    print("sum", int(total.item()), "preloaded", "transformers" in sys.modules, file=f)
dist.destroy_process_group()
"""


def test_a_distributed_launch_gives_each_fork_what_torchrun_gives_its_workers(tmp_path):
    script = tmp_path / "ranks.py"
    script.write_text(RANKS)
    env = dict(os.environ, **SERVER_ENV)
    (tmp_path / "forks").mkdir(), (tmp_path / "torchrun").mkdir()
    forks = run_distributed(script, nproc=2, cwd=tmp_path / "forks", env=env, timeout=120)
    torchrun = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", str(script)],
        cwd=tmp_path / "torchrun", env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert [fork.returncode for fork in forks] == [0, 0] and torchrun.returncode == 0, torchrun.stderr[-2000:]
    for rank in (0, 1):
        forked = (tmp_path / "forks" / f"rank{rank}.txt").read_text().splitlines()
        launched = (tmp_path / "torchrun" / f"rank{rank}.txt").read_text().splitlines()
        assert forked[0] == launched[0]  # the same variables with the same values
        assert f"RANK={rank} LOCAL_RANK={rank}" in forked[0] and " WORLD_SIZE=2" in forked[0]
        # one process group of both ranks: 1 + 2 summed across them; the forks had the server's imports
        assert (forked[1], launched[1]) == ("sum 3 preloaded True", "sum 3 preloaded False")


def test_a_failing_rank_ends_the_launch_instead_of_leaving_the_other_waiting(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text(
        "import os, torch.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        "if dist.get_rank() == 1:\n    raise RuntimeError('rank 1 fails')\n"
        "dist.barrier()  # rank 0 would wait here for ever\n"
    )
    forks = run_distributed(script, nproc=2, cwd=tmp_path, env=dict(os.environ, **SERVER_ENV), timeout=60)
    assert forks[1].returncode == 1 and "RuntimeError: rank 1 fails" in forks[1].stderr
    assert forks[0].returncode != 0  # ended, not timed out


def test_on_a_machine_with_a_cuda_gpu_every_run_is_a_plain_process(tmp_path, monkeypatch):
    import torch

    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    done = run_python(script, "ok", cwd=tmp_path)
    assert done.returncode == 0 and "preloaded False" in done.stdout
    (ranks,) = run_distributed(tmp_path / "script.py", "ok", nproc=2, cwd=tmp_path)  # torchrun itself: one result
    assert ranks.returncode == 0 and "preloaded True" not in ranks.stdout
