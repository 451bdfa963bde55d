"""One run per output dir: a reused dir is refused or cleared of run outputs only, and a second run is locked out."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hf_srnets.training import output_dir as od
from hf_srnets.training.output_dir import LOCK_NAME, OutputDirError, acquire_lock, prepare_output_dir

MODULE = od.__file__


def _earlier_run(out: Path) -> None:
    """What a mask run with --save_merged, --save_total_limit, --early_start_patience and --bias_model leaves."""
    out.mkdir(parents=True, exist_ok=True)
    for name in [
        "srnet_config.json",
        "srnet_masks.safetensors",
        "all_results.json",
        "sparsity_report.json",
        "README.md",
        "trainer_state.json",
        "training_args.bin",
        "tokenizer.json",
        "tokenizer_config.json",
        "vocab.txt",
    ]:
        (out / name).write_text("{}")
    for sub in ["merged", "checkpoint-4", "checkpoint-6", "early_start/checkpoint-2", "bias_model"]:
        (out / sub).mkdir(parents=True)
        (out / sub / "config.json").write_text("{}")
    (out / "checkpoint-6" / "trainer_state.json").write_text("{}")
    (out / "eval_predictions").mkdir()
    (out / "eval_predictions" / "mnli.jsonl").write_text('{"index": 0, "label": "entailment"}\n')


def _user_files(out: Path) -> None:
    (out / "notes.txt").write_text("my notes")
    (out / "other_run").mkdir()
    (out / "other_run" / "README.md").write_text("keep")
    (out / ".git").mkdir()
    (out / ".git" / "HEAD").write_text("ref")


def test_new_or_empty_dir_is_used_and_locked_while_the_run_is_on(tmp_path):
    for out in [tmp_path / "new" / "run", tmp_path / "empty"]:
        if out.name == "empty":
            out.mkdir()
        with prepare_output_dir(str(out), overwrite=False, resume=None, is_main_process=True) as lock:
            assert out.is_dir()
            holder = json.loads((out / LOCK_NAME).read_text())
            assert holder["pid"] == os.getpid() and holder["host"] == socket.gethostname()
            assert holder["started"] and lock is not None
        assert not (out / LOCK_NAME).exists()


def test_dir_with_an_earlier_run_is_refused_with_the_fix(tmp_path):
    out = tmp_path / "out"
    _earlier_run(out)
    before = sorted(p.name for p in out.iterdir())
    with pytest.raises(OutputDirError) as err:
        with prepare_output_dir(str(out), overwrite=False, resume=None, is_main_process=True):
            pass
    message = str(err.value)
    assert "--overwrite_output_dir" in message and f"--resume_from_checkpoint {out / 'checkpoint-6'}" in message
    assert "merged" in message and "checkpoint-4" in message
    assert sorted(p.name for p in out.iterdir()) == before  # nothing touched, lock released


def test_dir_with_only_unrelated_files_is_refused_too(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("x")
    with pytest.raises(OutputDirError, match=r"is not empty \(notes.txt\).*--overwrite_output_dir"):
        od.check_output_dir(str(out), overwrite=False)
    (out / "notes.txt").unlink()
    (out / ".gitattributes").write_text("*.safetensors filter=lfs")  # a cloned Hub repo is still "empty"
    od.check_output_dir(str(out), overwrite=False)


def test_overwrite_deletes_run_outputs_and_keeps_other_files(tmp_path):
    out = tmp_path / "out"
    _earlier_run(out)
    _user_files(out)
    with prepare_output_dir(str(out), overwrite=True, resume=None, is_main_process=True):
        assert sorted(p.name for p in out.iterdir()) == [".git", LOCK_NAME, "notes.txt", "other_run"]
    assert sorted(p.name for p in out.iterdir()) == [".git", "notes.txt", "other_run"]
    assert (out / "other_run" / "README.md").read_text() == "keep"


def test_overwrite_refuses_to_delete_what_the_run_reads(tmp_path):
    out = tmp_path / "out"
    _earlier_run(out)
    model = out / "checkpoint-4"
    with pytest.raises(OutputDirError, match=r"would delete .*checkpoint-4, which this run reads"):
        with prepare_output_dir(str(out), overwrite=True, resume=None, is_main_process=True, reads=[str(model), None]):
            pass
    assert model.is_dir() and (out / "all_results.json").exists()
    od.check_output_dir(str(out), overwrite=True, reads=[str(tmp_path / "elsewhere"), str(out / "notes.txt")])


def test_resume_keeps_the_dir_and_checks_the_checkpoint(tmp_path):
    out = tmp_path / "out"
    _earlier_run(out)
    before = sorted(p.name for p in out.iterdir())
    with prepare_output_dir(str(out), overwrite=False, resume=str(out / "checkpoint-6"), is_main_process=True):
        pass
    assert sorted(p.name for p in out.iterdir()) == before
    with pytest.raises(OutputDirError, match=r"checkpoint-9 is not a directory"):
        od.check_output_dir(str(out), overwrite=False, resume=str(out / "checkpoint-9"))
    with pytest.raises(OutputDirError, match="drop one of the two flags"):
        od.check_output_dir(str(out), overwrite=True, resume=str(out / "checkpoint-6"))
    other = tmp_path / "other"
    _earlier_run(other)
    with pytest.raises(OutputDirError, match="is not one of its checkpoints"):
        od.check_output_dir(str(other), overwrite=False, resume=str(out / "checkpoint-6"))
    od.check_output_dir(str(other), overwrite=True, resume=str(out / "checkpoint-6"))
    od.check_output_dir(str(tmp_path / "fresh"), overwrite=False, resume=str(out / "checkpoint-6"))


HOLDER = textwrap.dedent(
    """
    import importlib, os, sys, time, types
    for name, folder in (("hf_srnets", os.path.dirname(os.path.dirname({module!r}))),
                         ("hf_srnets.training", os.path.dirname({module!r}))):
        package = types.ModuleType(name)  # the packages without their __init__'s heavy imports
        package.__path__ = [folder]  # found here, not by an editable install's finder: a plain checkout works too
        sys.modules[name] = package
    prepare_output_dir = importlib.import_module("hf_srnets.training.output_dir").prepare_output_dir
    with prepare_output_dir({out!r}, overwrite=False, resume=None, is_main_process=True):
        print("locked", flush=True)
        time.sleep(120)
    """
)


def _hold_lock(out: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER.format(module=MODULE, out=str(out))], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_second_run_on_a_locked_dir_fails_at_start_naming_the_first(tmp_path):
    out = tmp_path / "out"
    proc = _hold_lock(out)
    try:
        with pytest.raises(OutputDirError) as err:
            with prepare_output_dir(str(out), overwrite=True, resume=None, is_main_process=True):
                pass
        message = str(err.value)
        assert f"pid {proc.pid} on host {socket.gethostname()}" in message
        assert "Another run is using" in message and str(out / LOCK_NAME) in message
        assert (out / LOCK_NAME).exists()  # the failed run left the holder's lock alone
        # a non-main process neither checks nor locks
        with prepare_output_dir(str(out), overwrite=False, resume=None, is_main_process=False) as lock:
            assert lock is None
    finally:
        proc.kill()
        proc.wait()
    # killed without cleaning up: the lock file is still there but no longer blocks
    assert json.loads((out / LOCK_NAME).read_text())["pid"] == proc.pid
    with prepare_output_dir(str(out), overwrite=False, resume=None, is_main_process=True):
        assert json.loads((out / LOCK_NAME).read_text())["pid"] == os.getpid()
    assert not (out / LOCK_NAME).exists()


def test_lock_without_os_file_locks_takes_over_only_a_dead_local_holder(tmp_path, monkeypatch):
    monkeypatch.setattr(od, "fcntl", None)
    out = tmp_path / "out"
    out.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for host, pid, taken in [
            (socket.gethostname(), dead.pid, True),
            (socket.gethostname(), live.pid, False),
            ("another-host", dead.pid, False),
        ]:
            (out / LOCK_NAME).write_text(json.dumps({"pid": pid, "host": host, "started": "t", "command": "c"}))
            if taken:
                with prepare_output_dir(str(out), overwrite=False, resume=None, is_main_process=True):
                    assert json.loads((out / LOCK_NAME).read_text())["pid"] == os.getpid()
                assert not (out / LOCK_NAME).exists()
            else:
                with pytest.raises(OutputDirError, match=f"pid {pid} on host {host}.*delete .*{LOCK_NAME}"):
                    with prepare_output_dir(str(out), overwrite=False, resume=None, is_main_process=True):
                        pass
    finally:
        live.send_signal(signal.SIGKILL)
        live.wait()


WORKER = textwrap.dedent(
    """
    import importlib, json, os, sys, types
    import torch.distributed as dist
    for name, folder in (("hf_srnets", os.path.dirname(os.path.dirname({module!r}))),
                         ("hf_srnets.training", os.path.dirname({module!r}))):
        package = types.ModuleType(name)  # the packages without their __init__'s heavy imports
        package.__path__ = [folder]  # found here, not by an editable install's finder: a plain checkout works too
        sys.modules[name] = package
    od = importlib.import_module("hf_srnets.training.output_dir")
    OutputDirError, prepare_output_dir = od.OutputDirError, od.prepare_output_dir
    rank = int(sys.argv[1])
    dist.init_process_group("gloo", init_method="file://" + {init!r}, rank=rank, world_size=2)
    try:
        with prepare_output_dir({out!r}, overwrite={overwrite}, resume=None, is_main_process=rank == 0):
            result = sorted(n for n in os.listdir({out!r}) if not n.startswith("."))
    except OutputDirError as err:
        result = "error: " + str(err)
    print(json.dumps(result), flush=True)
    dist.destroy_process_group()
    """
)


@pytest.mark.parametrize("overwrite", [False, True])
def test_all_processes_of_a_distributed_run_share_the_main_process_outcome(tmp_path, overwrite):
    out = tmp_path / "out"
    _earlier_run(out)
    (out / "notes.txt").write_text("x")
    script = WORKER.format(module=MODULE, init=str(tmp_path / "init"), out=str(out), overwrite=overwrite)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(rank)], stdout=subprocess.PIPE, text=True, env=env)
        for rank in (0, 1)
    ]
    deadline = time.time() + 120
    results = [json.loads(p.communicate(timeout=max(1, deadline - time.time()))[0]) for p in procs]
    if overwrite:  # both go on once rank 0 has cleared the dir
        assert results == [["notes.txt"], ["notes.txt"]]
    else:  # both stop with rank 0's message; nothing deleted
        assert results[0] == results[1] and results[0].startswith("error: --output_dir")
        assert (out / "srnet_masks.safetensors").exists()


def test_overwrite_deletes_only_trainer_checkpoints_and_every_scripts_results(tmp_path):
    out = tmp_path / "out"
    _earlier_run(out)
    (out / "checkpoint-8").mkdir()  # killed while saving: the SRNet state only, no trainer_state.json
    (out / "checkpoint-8" / "srnet_training_state.safetensors").write_bytes(b"x")
    (out / "checkpoint-9").mkdir()  # killed right after creating it
    for name in ["attack_textfooler.jsonl", "attack_results.json", "bias_train.jsonl", "bias_report.json"]:
        (out / name).write_text("{}")
    (out / "checkpoint-notes").mkdir()  # a user's folders that only look like checkpoints
    (out / "checkpoint-notes" / "todo.txt").write_text("mine")
    (out / "checkpoint-7").mkdir()
    (out / "checkpoint-7" / "optimizer.pt").write_bytes(b"x")
    (out / "checkpoint-7" / "my_analysis.ipynb").write_text("mine")
    with prepare_output_dir(str(out), overwrite=True, resume=None, is_main_process=True):
        left = sorted(p.name for p in out.iterdir() if p.name != LOCK_NAME)
    assert left == ["checkpoint-7", "checkpoint-notes"]
    assert (out / "checkpoint-notes" / "todo.txt").read_text() == "mine"
    assert (out / "checkpoint-7" / "my_analysis.ipynb").read_text() == "mine"


def test_a_checkpoint_cut_short_is_named_and_the_last_complete_one_offered(tmp_path):
    out = tmp_path / "out"
    _earlier_run(out)  # checkpoint-6 is complete, checkpoint-4 has no trainer_state.json
    (out / "checkpoint-8").mkdir()
    (out / "checkpoint-8" / "srnet_training_state.safetensors").write_bytes(b"x")
    with pytest.raises(OutputDirError) as err:
        od.check_output_dir(str(out), overwrite=False)
    message = str(err.value)
    assert f"--resume_from_checkpoint {out / 'checkpoint-6'} to continue" in message
    assert "checkpoint-8: incomplete" in message and f"--resume_from_checkpoint {out / 'checkpoint-8'}" not in message
    for resume in ["checkpoint-8", "checkpoint-4"]:
        with pytest.raises(OutputDirError, match=rf"{resume} is incomplete: it has no whole trainer_state\.json"):
            od.check_output_dir(str(out), overwrite=False, resume=str(out / resume))
        with pytest.raises(OutputDirError, match=re.escape(f"resume from {out / 'checkpoint-6'}, the last complete")):
            od.check_output_dir(str(tmp_path / "fresh"), overwrite=False, resume=str(out / resume))
    (out / "checkpoint-6" / "trainer_state.json").unlink()
    with pytest.raises(OutputDirError, match=r"checkpoint-8 is incomplete.*start the run again"):
        od.check_output_dir(str(out), overwrite=False, resume=str(out / "checkpoint-8"))


@pytest.mark.parametrize("written", ["", '{"global_step": 8, "log_history": [{"loss": 0.6'])
def test_a_checkpoint_killed_while_writing_its_trainer_state_is_not_complete(tmp_path, written):
    """The Trainer writes trainer_state.json last but not atomically (`open(path, "w")`, then the text): a run killed
    in between leaves an empty or cut file. Such a checkpoint was taken as complete, and its resume failed."""
    out = tmp_path / "out"
    _earlier_run(out)  # checkpoint-6 is complete
    (out / "checkpoint-8").mkdir()
    (out / "checkpoint-8" / "srnet_training_state.safetensors").write_bytes(b"x")
    (out / "checkpoint-8" / "trainer_state.json").write_text(written)
    assert od.last_complete_checkpoint(str(out)) == str(out / "checkpoint-6")
    with pytest.raises(OutputDirError, match=r"checkpoint-8 is incomplete: it has no whole trainer_state\.json"):
        od.check_output_dir(str(out), overwrite=False, resume=str(out / "checkpoint-8"))


def _run_reads(tmp_path: Path, flag: str, given: str) -> list[tuple[str, str | None]]:
    """What run_glue_sparse.py reads when `flag` names `given` (the reads its main passes to prepare_output_dir)."""
    from hf_srnets.arguments.glue_sparse_arguments import parse_args
    from hf_srnets.runner.run import flagged_files_read

    argv = ["--model_name_or_path", str(tmp_path / "base"), "--task", "mnli", "--output_dir", str(tmp_path / "out")]
    argv += ["--report_to", "none", "--pruning", "mask", "--sparsity", "0.5", "--overwrite_output_dir", "true"]
    if flag == "--model_name_or_path":
        argv[1] = given
    else:
        argv += [flag, given]
    return flagged_files_read(parse_args(argv))


@pytest.mark.parametrize("flag", ["--model_name_or_path", "--mask_from", "--reference_results"])
@pytest.mark.parametrize("form", ["relative", "absolute", "symlink"])
def test_overwrite_refuses_an_input_that_is_the_output_dir(flag, form, tmp_path, monkeypatch):
    out = tmp_path / "out"
    _earlier_run(out)
    (out / "model.safetensors").write_bytes(b"weights")
    (tmp_path / "out_link").symlink_to(out, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    given = {"relative": "out", "absolute": str(out), "symlink": "out_link"}[form]
    before = sorted(p.name for p in out.iterdir())
    message = f"{flag} {given} is the output dir that --overwrite_output_dir would clear"
    with pytest.raises(OutputDirError, match=re.escape(message) + r".*write to another --output_dir"):
        reads = _run_reads(tmp_path, flag, given)
        with prepare_output_dir(str(out), overwrite=True, resume=None, is_main_process=True, reads=reads):
            pass
    assert sorted(p.name for p in out.iterdir()) == before  # nothing deleted, lock released
    assert (out / "model.safetensors").read_bytes() == b"weights"


def test_overwrite_refuses_a_symlink_to_an_input_inside_the_output_dir(tmp_path):
    out = tmp_path / "out"
    _earlier_run(out)
    (tmp_path / "masks").symlink_to(out / "checkpoint-6", target_is_directory=True)
    reads = [("--mask_from", str(tmp_path / "masks"))]
    message = f"would delete --mask_from {tmp_path / 'masks'}, which this run reads. Write to another --output_dir"
    with pytest.raises(OutputDirError, match=re.escape(message)):
        od.check_output_dir(str(out), overwrite=True, reads=reads)
    assert (out / "checkpoint-6" / "trainer_state.json").is_file()


def test_overwrite_keeps_a_hard_link_to_a_file_it_deletes(tmp_path):
    out = tmp_path / "out"
    _earlier_run(out)
    (out / "all_results.json").write_text('{"eval_accuracy": 0.8}')
    reference = tmp_path / "reference.json"
    os.link(out / "all_results.json", reference)  # one file, two names: deleting the one in out leaves the other
    reads = [("--reference_results", str(reference))]
    with prepare_output_dir(str(out), overwrite=True, resume=None, is_main_process=True, reads=reads):
        assert not (out / "all_results.json").exists()
    assert reference.read_text() == '{"eval_accuracy": 0.8}'


def test_overwrite_clears_a_tensorboard_runs_dir_and_keeps_one_holding_a_users_file(tmp_path, caplog):
    for keep in [False, True]:
        out = tmp_path / f"out_{keep}"
        _earlier_run(out)
        events = out / "runs" / "Nov27_08-00-00_host" / "1764230400.123"
        events.mkdir(parents=True)
        (events.parent / "events.out.tfevents.1764230400.host.1234.0").write_bytes(b"tb")
        (events / "events.out.tfevents.1764230400.host.1234.1").write_bytes(b"hparams")
        if keep:
            (out / "runs" / "Nov27_08-00-00_host" / "notes.md").write_text("mine")
        with caplog.at_level("INFO", logger=od.__name__):
            with prepare_output_dir(str(out), overwrite=True, resume=None, is_main_process=True):
                pass
        assert sorted(p.name for p in out.iterdir()) == (["runs"] if keep else [])
        if keep:
            assert (out / "runs" / "Nov27_08-00-00_host" / "notes.md").read_text() == "mine"
            assert (events.parent / "events.out.tfevents.1764230400.host.1234.0").read_bytes() == b"tb"
            assert f"kept {out / 'runs'}: besides TensorBoard's event files it holds Nov27_08-00-00_host/notes.md" in (
                caplog.text
            )


def test_a_full_disk_met_while_writing_the_lock_names_the_lock_file(tmp_path, monkeypatch):
    """Issue 33, round 4: ENOSPC while writing the lock file said 'cannot write the outputs', naming no file."""
    import errno

    import hf_srnets.training.output_dir as output_dir

    def full(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # os.write on a full disk: no file name

    monkeypatch.setattr(output_dir.os, "write", full)
    out = tmp_path / "out"
    with pytest.raises(OutputDirError, match=rf"--output_dir {out}: cannot write {out}/\.hf_srnets\.lock: No space"):
        acquire_lock(str(out))
