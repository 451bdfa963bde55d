"""A sweep's records on disk: a damaged results file is an unfinished run, a damaged sweep_run.json is a one-line
error naming it, a record written while the disk fills up keeps the previous one, and a sweep refused by a run
dir's lock leaves that dir's record as it was, and the sweep holds a run dir's lock until its run ends (issue 33)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hf_srnets.errors import InputError
from hf_srnets.experiments import sweep as sweep_lib
from hf_srnets.experiments.sweep_runs import RUN_META, planned_runs, run_status, status_report, write_meta
from hf_srnets.training.output_dir import LOCK_HANDOVER_ENV, OutputDirError, acquire_lock


def recipe_for(root: Path, **common) -> dict:
    return {
        "output_dir": str(root),
        "sparsities": [0.5],
        "seeds": [1],
        "metrics": ["eval_mnli_accuracy"],
        "common": {"task": "mnli", "do_train": True, "model_name_or_path": "m", **common},
        "methods": {"full_ce": {"pruning": "none", "loss": "ce"}},
    }


def finishing_runner(calls: list[list[str]]):
    """A run as the real one: it takes its dir's lock, then writes its results."""

    def run(argv: list[str]) -> None:
        calls.append(argv)
        out = argv[argv.index("--output_dir") + 1]
        lock = acquire_lock(out)
        try:
            (Path(out) / "all_results.json").write_text(json.dumps({"eval_mnli_accuracy": 0.5}))
        finally:
            lock.release()

    return run


@pytest.mark.parametrize("text", ["", '{"eval_mnli_accuracy": 0.', "[]"])
def test_an_empty_or_cut_results_file_is_not_counted_as_done_and_the_run_is_made_again(tmp_path, text):
    recipe, calls = recipe_for(tmp_path), []
    sweep_lib.sweep(recipe, runner=finishing_runner(calls))
    (run,) = planned_runs(recipe)
    results = Path(run.output_dir) / "all_results.json"
    results.write_text(text)  # the disk filled up while the run wrote it
    status = run_status(run)
    assert status.state == "start"
    assert status_report([status]).splitlines() == [
        "1 run: 0 done, 0 to resume, 1 to start",
        "  start full_ce sparsity=0 seed=1 (its all_results.json is empty, cut or not a JSON object: the run did "
        "not finish)",
    ]
    rows = sweep_lib.sweep(recipe, runner=finishing_runner(calls))
    assert len(calls) == 2 and json.loads(results.read_text()) == {"eval_mnli_accuracy": 0.5}
    assert rows[0]["eval_mnli_accuracy_mean"] == 0.5


def test_aggregating_a_cut_results_file_is_one_line_naming_it(tmp_path):
    recipe = recipe_for(tmp_path)
    sweep_lib.sweep(recipe, runner=finishing_runner([]))
    (run,) = planned_runs(recipe)
    results = os.path.join(run.output_dir, "all_results.json")
    Path(results).write_text('{"eval_mnli_acc')
    with pytest.raises(InputError) as error:
        sweep_lib.sweep(recipe, runner=finishing_runner([]), aggregate_only=True)
    assert str(error.value).startswith(f"{results} is empty, cut or not a JSON object")
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("text", ["", '{"method": "full_ce", "spars', '{"fingerprint": "0"}'])
def test_a_cut_sweep_run_json_is_one_line_naming_it_and_the_fix(tmp_path, text):
    recipe, calls = recipe_for(tmp_path), []
    sweep_lib.sweep(recipe, runner=finishing_runner(calls))
    (run,) = planned_runs(recipe)
    meta = os.path.join(run.output_dir, RUN_META)
    Path(meta).write_text(text)
    with pytest.raises(InputError) as error:
        sweep_lib.sweep(recipe, runner=finishing_runner(calls))
    message = str(error.value)
    assert "\n" not in message and f"its {RUN_META} is empty, cut or not a sweep run's record" in message
    assert run.output_dir in message and "--rerun_changed" in message
    with pytest.raises(InputError) as error:
        sweep_lib.sweep(recipe, runner=finishing_runner(calls), aggregate_only=True)
    assert str(error.value).startswith(f"{meta} is empty, cut or not a sweep run's record")
    assert "--rerun_changed" in str(error.value) and "\n" not in str(error.value)
    assert len(calls) == 1
    sweep_lib.sweep(recipe, runner=finishing_runner(calls), rerun_changed=True)
    assert len(calls) == 2 and json.loads(Path(meta).read_text())["fingerprint"] == run.fingerprint


def test_a_record_written_while_the_disk_fills_up_keeps_the_previous_one(tmp_path, monkeypatch):
    (run,) = planned_runs(recipe_for(tmp_path))
    write_meta(run)
    meta = Path(run.output_dir) / RUN_META
    before = meta.read_text()

    def full_disk(data, f, **options):
        f.write('{"method": "full_ce", ')
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(json, "dump", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_meta(run)
    assert meta.read_text() == before
    assert sorted(os.listdir(run.output_dir)) == [RUN_META]


def test_a_sweep_refused_by_the_lock_of_a_run_dir_leaves_its_record_unchanged(tmp_path):
    first = recipe_for(tmp_path)
    (first_run,) = planned_runs(first)
    write_meta(first_run)  # the first sweep recorded its run and started it: the run holds its dir's lock
    record = Path(first_run.output_dir) / RUN_META
    before = record.read_text()
    lock = acquire_lock(first_run.output_dir)
    calls: list[list[str]] = []
    try:
        with pytest.raises(OutputDirError, match="Another run is using --output_dir"):
            sweep_lib.sweep(recipe_for(tmp_path, learning_rate=1.0), runner=finishing_runner(calls))
        assert record.read_text() == before and calls == []
    finally:
        lock.release()
    (Path(first_run.output_dir) / "all_results.json").write_text('{"eval_mnli_accuracy": 0.7}')  # the run ends
    assert run_status(first_run).state == "done"
    with pytest.raises(InputError, match=r"1 run dir\(s\) hold a run made with other settings"):
        sweep_lib.sweep(recipe_for(tmp_path, learning_rate=1.0), runner=finishing_runner(calls))


def test_a_run_dir_finished_by_another_sweep_since_the_plan_is_refused_before_its_record_is_written(tmp_path):
    (run,) = planned_runs(recipe_for(tmp_path))
    planned = run_status(run)
    assert planned.state == "start"
    os.makedirs(run.output_dir)
    (Path(run.output_dir) / "all_results.json").write_text('{"eval_mnli_accuracy": 0.7}')  # another sweep's run
    with pytest.raises(InputError, match=r"changed while this sweep started \(planned: start, now: changed\)"):
        sweep_lib.record_run(planned)
    assert os.listdir(run.output_dir) == ["all_results.json"]  # no record written, the lock released


_TAKE_LOCK = (
    "import sys\n"
    "from hf_srnets.training.output_dir import OutputDirError, acquire_lock\n"
    "try:\n"
    "    acquire_lock(sys.argv[1]).release()\n"
    "except OutputDirError as err:\n"
    "    sys.exit(f'refused: {err}')\n"
)


def _take_lock(out: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Another process that tries to take `out`'s lock (as a run does at its start)."""
    return subprocess.run([sys.executable, "-c", _TAKE_LOCK, out], capture_output=True, text=True, env=env)


def test_the_sweep_holds_the_run_dirs_lock_until_its_run_ends_and_hands_it_to_the_run(tmp_path):
    """Issue 33 leftover: the sweep released the lock between recording a run and starting it, so another run could
    take the dir in between. Now a process started by the sweep (its run) takes the handed-over lock; any other
    process is refused for as long as the run goes on."""
    seen: list[tuple[int, str, int]] = []

    def runner(argv: list[str]) -> None:
        out = argv[argv.index("--output_dir") + 1]
        others = {k: v for k, v in os.environ.items() if k != LOCK_HANDOVER_ENV}  # a process the sweep did not start
        other, child = _take_lock(out, others), _take_lock(out, dict(os.environ))
        seen.append((other.returncode, other.stderr, child.returncode))
        finishing_runner([])(argv)  # in this process, as an in-process runner: the handed-over lock is taken too

    sweep_lib.sweep(recipe_for(tmp_path), runner=runner)
    ((other_status, other_error, child_status),) = seen
    assert other_status == 1 and "refused: Another run is using --output_dir" in other_error
    assert child_status == 0
    (run,) = planned_runs(recipe_for(tmp_path))
    assert run_status(run).state == "done" and not (Path(run.output_dir) / ".hf_srnets.lock").exists()
    assert LOCK_HANDOVER_ENV not in os.environ
    assert _take_lock(run.output_dir, dict(os.environ)).returncode == 0  # released once the run ended
