"""The attacks reproduce, example by example, the results stored before they were made faster
(`tests/fixtures/attack_outcomes.json`, written by `outcome_fixture.py` with the attack code of commit 24b7017):
the same outcome, #Query, perturbed text, words changed and final prediction for TextFooler and TextBugger on 12
SST-2 and 12 MNLI dev rows (see `outcome_fixture.py` for the victims and resources)."""

from __future__ import annotations

import json

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
