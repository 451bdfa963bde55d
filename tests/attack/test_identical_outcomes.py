"""The attacks reproduce, example by example, the results stored before they were made faster
(`tests/fixtures/attack_outcomes.json`, written by `outcome_fixture.py` with the attack code of commit 24b7017):
the same outcome, #Query, perturbed text, words changed and final prediction for TextFooler and TextBugger on 12
SST-2 and 12 MNLI dev rows (see `outcome_fixture.py` for the victims and resources)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from attack.outcome_fixture import FIXTURE, run_fixed_attacks
from conftest import DATA_DIR


@pytest.fixture(scope="module")
def stored() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def assert_same_results(got: dict, stored: dict) -> None:
    assert sorted(got) == sorted(stored)
    for key, rows in stored.items():
        for want, have in zip(rows, got[key], strict=True):
            assert have == want, f"{key}, row {want['index']}: {have} != stored {want}"


def test_the_fixture_covers_every_outcome(stored):
    """A fixture of only skips or only failures would check little: every recipe and task has successes, and the
    set holds all three outcomes."""
    outcomes = {r["outcome"] for rows in stored.values() for r in rows}
    assert outcomes == {"skipped", "successful", "failed"}
    for key, rows in stored.items():
        assert sum(r["outcome"] == "successful" for r in rows) >= 3, key


@pytest.mark.slow
def test_attacks_reproduce_the_stored_per_example_results(stored):
    if not (DATA_DIR / "sst2").is_dir():
        pytest.skip(f"real data not found at {DATA_DIR}")
    assert_same_results(run_fixed_attacks(DATA_DIR), stored)


@pytest.mark.slow
def test_two_workers_give_the_results_of_one(stored):
    """`attack_examples(num_workers=2)` (two forked processes) attacks every example as one process does: the
    stored per-example results, in example order (SST-2 rows: both recipes)."""
    if not (DATA_DIR / "sst2").is_dir():
        pytest.skip(f"real data not found at {DATA_DIR}")
    got = run_fixed_attacks(DATA_DIR, num_workers=2, tasks=("sst2",))
    assert_same_results(got, {k: v for k, v in stored.items() if k.startswith("sst2/")})


@pytest.mark.slow
def test_forked_workers_run_after_the_parent_used_torchs_thread_pool():
    """With 2 torch threads and the parent's OpenMP pool already used (as in the suite, where this hung), two forked
    workers still finish: each runs torch on one thread (`runner._one_thread_per_worker`)."""
    script = f"""
import sys, torch
sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
torch.set_num_threads(2)
torch.ones(512, 512) @ torch.ones(512, 512)  # a parallel region in the parent before the fork
from attack.outcome_fixture import run_fixed_attacks
got = run_fixed_attacks(num_workers=2, tasks=("sst2",))
print(len(got))
"""
    env = {**os.environ, "OMP_NUM_THREADS": "2"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=150)
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.split()[-1]) > 0
