"""A sweep stopped at any point continues where it stopped: finished runs skipped by the fingerprint of their
settings, a run in progress resumed from its last checkpoint, a run of other settings refused; and a real sweep
killed mid-run (SIGKILL, as a session that ends) finishes on the next invocation with the results of one that was
never stopped."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import mnli_run_args
from prewarmed import run_python

from hf_srnets.errors import InputError
from hf_srnets.experiments import sweep as sweep_lib
from hf_srnets.experiments.sweep_runs import RUN_META, planned_runs, run_dir, run_status, status_report

ROOT = Path(__file__).resolve().parents[2]


def recipe_for(root: Path, **extra) -> dict:
    return {
        "output_dir": str(root),
        "sparsities": [0.5],
        "seeds": [1, 2],
        "metrics": ["eval_mnli_accuracy"],
        "common": {"task": "mnli", "do_train": True, "model_name_or_path": "m"},
        "methods": {"full_ce": {"pruning": "none", "loss": "ce"}},
        **extra,
    }


def finishing_runner(calls: list[list[str]]):
    def run(argv: list[str]) -> None:
        calls.append(argv)
        out = argv[argv.index("--output_dir") + 1]
        with open(os.path.join(out, "all_results.json"), "w") as f:
            json.dump({"eval_mnli_accuracy": 0.5}, f)

    return run


def fake_checkpoint(run_dir_path: str, step: int) -> str:
    path = os.path.join(run_dir_path, f"checkpoint-{step}")
    os.makedirs(path)
    with open(os.path.join(path, "trainer_state.json"), "w") as f:
        json.dump({"global_step": step}, f)
    return path


def test_finished_runs_are_skipped_by_fingerprint_and_a_changed_recipe_is_refused(tmp_path):
    recipe, calls = recipe_for(tmp_path), []
    sweep_lib.sweep(recipe, runner=finishing_runner(calls))
    assert len(calls) == 2
    meta = json.loads((Path(run_dir(str(tmp_path), "full_ce", 0.0, 1)) / RUN_META).read_text())
    assert meta["argv"] == calls[0][: len(meta["argv"])] and len(meta["fingerprint"]) == 64
    sweep_lib.sweep(recipe, runner=finishing_runner(calls))
    assert len(calls) == 2  # both done, same settings

    changed = recipe_for(tmp_path, common={**recipe["common"], "learning_rate": 1e-4})
    with pytest.raises(InputError, match=r"2 run dir\(s\) hold a run made with other settings .* --rerun_changed"):
        sweep_lib.sweep(changed, runner=finishing_runner(calls))
    assert len(calls) == 2
    sweep_lib.sweep(changed, runner=finishing_runner(calls), rerun_changed=True)
    assert len(calls) == 4 and all("--overwrite_output_dir" in c for c in calls[2:])
    assert {s.state for s in map(run_status, planned_runs(changed))} == {"done"}


def test_a_run_with_a_checkpoint_of_its_settings_resumes_from_the_last_complete_one(tmp_path):
    recipe, calls = recipe_for(tmp_path, checkpoint_steps=4), []
    first, second = planned_runs(recipe)
    sweep_lib.sweep(recipe_for(tmp_path, seeds=[1], checkpoint_steps=4), runner=finishing_runner(calls))
    from hf_srnets.experiments.sweep_runs import write_meta

    write_meta(second)  # the second run started, saved checkpoint-4 and -8, and was killed while saving -12
    fake_checkpoint(second.output_dir, 4)
    fake_checkpoint(second.output_dir, 8)
    os.makedirs(os.path.join(second.output_dir, "checkpoint-12"))
    statuses = [run_status(run) for run in (first, second)]
    assert [s.state for s in statuses] == ["done", "resume"]
    assert status_report(statuses).splitlines() == [
        "2 runs: 1 done, 1 to resume, 0 to start",
        "  resume full_ce sparsity=0 seed=2 from checkpoint-8",
    ]
    calls.clear()
    sweep_lib.sweep(recipe, runner=finishing_runner(calls))
    (argv,) = calls
    assert argv[-2:] == ["--resume_from_checkpoint", os.path.join(second.output_dir, "checkpoint-8")]
    assert argv[argv.index("--save_strategy") + 1] == "steps" and argv[argv.index("--save_steps") + 1] == "4"
    assert not [n for n in os.listdir(second.output_dir) if n.startswith("checkpoint-")]  # removed once finished


def test_a_checkpoint_of_other_settings_is_not_resumed(tmp_path):
    recipe = recipe_for(tmp_path, seeds=[1])
    (run,) = planned_runs(recipe)
    other = planned_runs(recipe_for(tmp_path, seeds=[1], common={**recipe["common"], "learning_rate": 1.0}))[0]
    from hf_srnets.experiments.sweep_runs import write_meta

    write_meta(other)
    fake_checkpoint(run.output_dir, 4)
    assert run_status(run).state == "changed"


def test_a_run_whose_input_file_changed_is_refused_and_its_own_outputs_are_not_inputs(tmp_path):
    bias, teacher = tmp_path / "bias.jsonl", tmp_path / "teacher"
    bias.write_text('{"id": "0", "probs": [0.5, 0.5]}\n')
    teacher.mkdir()
    (teacher / "model.safetensors").write_bytes(b"weights v1")
    (teacher / "notes.txt").write_text("not weights")
    common = {"task": "mnli", "do_train": True, "model_name_or_path": str(teacher), "bias_predictions": str(bias)}
    common["write_train_predictions"] = str(tmp_path / "p_t.jsonl")  # written by the run, not read
    recipe, calls = recipe_for(tmp_path / "sweep", seeds=[1], common=common), []
    sweep_lib.sweep(recipe, runner=finishing_runner(calls))
    (run,) = planned_runs(recipe)
    meta = json.loads((Path(run.output_dir) / RUN_META).read_text())
    assert list(meta["inputs"]) == [str(teacher / "model.safetensors"), str(bias)]
    assert meta["inputs"][str(bias)] == hashlib.sha256(bias.read_bytes()).hexdigest()  # hashlib, not the code's
    (tmp_path / "p_t.jsonl").write_text("made by the run")
    os.utime(bias, ns=(1, 1))  # touched, same content: still done
    assert run_status(run).state == "done"

    bias.write_text('{"id": "0", "probs": [0.9, 0.1]}\n')  # the bias model made again
    status = run_status(run)
    assert status.state == "changed" and status.reason == f"changed since the run read it: {bias}"
    with pytest.raises(InputError, match=r"from inputs that have changed since .*bias\.jsonl.* --rerun_changed"):
        sweep_lib.sweep(recipe, runner=finishing_runner(calls))
    sweep_lib.sweep(recipe, runner=finishing_runner(calls), rerun_changed=True)
    assert len(calls) == 2 and run_status(run).state == "done"

    (teacher / "model.safetensors").write_bytes(b"weights v2")  # the teacher trained again
    assert "teacher/model.safetensors" in run_status(run).reason
    meta.pop("inputs")  # a run recorded before inputs were: judged by its settings only
    (Path(run.output_dir) / RUN_META).write_text(json.dumps(meta))
    assert run_status(run).state == "done"


def sweep_command(recipe: Path, *extra: str) -> list[str]:
    return [sys.executable, str(ROOT / "run_sweep.py"), str(recipe), "--checkpoint_steps", "2", *extra]


def tiny_sweep_recipe(path: Path, out: Path, pretrained: Path, data_dir: Path) -> Path:
    argv = mnli_run_args(pretrained, data_dir, "unused", train=96, eval=64, ood=64, batch=8)
    common = {argv[i][2:]: argv[i + 1] for i in range(0, len(argv), 2) if argv[i] != "--output_dir"}
    recipe = {
        "output_dir": str(out),
        "sparsities": [0.5],
        "seeds": [1],
        "metrics": ["eval_mnli_accuracy", "eval_hans_accuracy"],
        "common": {**common, "do_train": True, "logging_steps": 2, "num_train_epochs": 1},
        "methods": {"mask_ce": {"pruning": "mask", "loss": "ce", "threshold_update_interval": 2}},
    }
    path.write_text(yaml.safe_dump(recipe))
    return path


def _whole_json(path: Path) -> bool:
    try:
        return isinstance(json.loads(path.read_text()), dict)
    except (OSError, ValueError):
        return False


def wait_for_checkpoint(run: Path, process: subprocess.Popen, timeout: float = 600) -> None:
    """Return once `run` holds a complete checkpoint: the Trainer writes trainer_state.json last, and not atomically
    (a file that exists may still be empty)."""
    start = time.time()
    while not any(_whole_json(state) for state in run.glob("checkpoint-*/trainer_state.json")):
        assert process.poll() is None, "the sweep ended before it could be killed"
        assert time.time() - start < timeout
        time.sleep(0.02)


@pytest.mark.slow
def test_a_sweep_killed_mid_run_finishes_with_the_results_of_one_never_stopped(tmp_path, pretrained, data_dir):
    """One run (the skipping of finished runs is the first test's): killed at its first checkpoint, resumed by the
    next invocation, equal to a run never stopped; a third invocation finds it done."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    killed = tiny_sweep_recipe(tmp_path / "killed.yaml", tmp_path / "killed", pretrained, data_dir)
    process = subprocess.Popen(sweep_command(killed), env=env, start_new_session=True, stdout=subprocess.DEVNULL)
    run = tmp_path / "killed" / "mask_ce" / "s0.5" / "seed1"
    wait_for_checkpoint(run, process)  # 12 steps, a checkpoint every 2: killed mid-run
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert not (run / "all_results.json").exists()

    # the next invocations: run_sweep.py forked from the warm server (tests/prewarmed.py), its runs plain processes
    resumed = run_python(*sweep_command(killed)[1:], env=env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "1 run: 0 done, 1 to resume, 0 to start" in resumed.stdout
    assert f"resuming from {run / 'checkpoint-'}" in resumed.stdout
    assert not list(run.glob("checkpoint-*"))  # removed once the run finished

    never = tiny_sweep_recipe(tmp_path / "never.yaml", tmp_path / "never", pretrained, data_dir)
    assert run_python(*sweep_command(never)[1:], env=env).returncode == 0
    got = json.loads((run / "all_results.json").read_text())
    want = json.loads((tmp_path / "never" / "mask_ce" / "s0.5" / "seed1" / "all_results.json").read_text())
    for key in ("eval_mnli_accuracy", "eval_hans_accuracy", "sparsity", "train_loss"):
        assert got[key] == pytest.approx(want[key], abs=1e-6), key
    again = run_python(*sweep_command(killed)[1:], env=env)
    assert again.returncode == 0 and "1 run: 1 done, 0 to resume, 0 to start" in again.stdout


@pytest.mark.parametrize("keep", [False, True])
def test_a_finished_run_whose_checkpoints_a_killed_sweep_left_loses_them_on_the_next_sweep(tmp_path, keep):
    """Issue 33, round 4: a sweep killed between a run's end and its clean-up left that run's checkpoint for good
    (the next sweep skipped the finished run); now the next sweep removes it, unless keep_checkpoints."""
    recipe, calls = recipe_for(tmp_path, seeds=[1], checkpoint_steps=4, keep_checkpoints=keep), []
    sweep_lib.sweep(recipe, runner=finishing_runner(calls))
    (run,) = planned_runs(recipe)
    fake_checkpoint(run.output_dir, 4)  # the run saved it, finished, and the sweep was killed before removing it
    assert run_status(run).state == "done"
    sweep_lib.sweep(recipe, runner=finishing_runner(calls))
    assert len(calls) == 1 and run_status(run).state == "done"
    assert os.path.isdir(os.path.join(run.output_dir, "checkpoint-4")) == keep
