"""A user error ends every script with one line `error: <message>` on stderr and exit status 2, no traceback; the
message names the file or option and the fix. Bad inputs are made from the real data (a Latin-1 copy of SST-2
rows); each case runs the script as a user does. `run_script` itself: SRNETS_DEBUG=1 keeps the traceback, and an
unexpected exception is not turned into a one-line error."""

import os
import re
import sys
from pathlib import Path

import pytest
from prewarmed import run_python

from hf_srnets.errors import DEBUG_ENV, InputError, naming_path, run_script

REPO_ROOT = Path(__file__).resolve().parents[2]


def _inputs(tmp: Path, data_dir: Path) -> dict[str, Path]:
    """Bad inputs from real SST-2 rows: a Latin-1 copy, a dir without config.json, a malformed YAML config."""
    rows = (data_dir / "sst2" / "sst2_dev_glue.tsv").read_text(encoding="utf-8").splitlines()[:21]
    good = tmp / "train.tsv"
    good.write_text("\n".join(rows) + "\n", encoding="utf-8")
    rows[4] = rows[4].replace(" ", " café ", 1)
    latin1 = tmp / "latin1.tsv"
    latin1.write_bytes(("\n".join(rows) + "\n").encode("latin-1"))
    (tmp / "notes").mkdir()
    (tmp / "notes" / "readme.txt").write_text("not a model\n")
    (tmp / "half_saved").mkdir()  # a merged/ whose save stopped after config.json (issue 70)
    (tmp / "half_saved" / "config.json").write_text('{"model_type": "bert"}\n')
    config = tmp / "run.yaml"
    config.write_text("task: sst2\nmax_train_samples: 10\n  nested: [1, 2\n")
    return {"train": good, "latin1": latin1, "notes": tmp / "notes", "half_saved": tmp / "half_saved", "config": config}


def _cases(tmp: Path, f: dict[str, Path], model: str) -> dict[str, tuple[list[str], str]]:
    """case -> (script and arguments, a regex the one error line must match)."""
    out = str(tmp / "out")
    run = ["--task", "sst2", "--validation_file", str(f["train"]), "--no_default_ood", "true", "--report_to", "none"]
    glue = ["run_glue_sparse.py", "--model_name_or_path", model, *run, "--output_dir", out]
    return {
        "non_utf8_train_file": (
            [*glue, "--train_file", str(f["latin1"]), "--do_train"],
            r"latin1\.tsv is not UTF-8 \(line 5, byte \d+ is 0xe9\)",
        ),
        "max_train_samples_0": (
            [*glue, "--train_file", str(f["train"]), "--max_train_samples", "0"],
            r"--max_train_samples must be at least 1, got 0",
        ),
        "missing_model_dir": (
            ["run_glue_sparse.py", "--model_name_or_path", str(tmp / "no" / "model"), *run, "--output_dir", out],
            r"--model_name_or_path \S+/no/model does not exist",
        ),
        "model_dir_without_config": (
            ["run_glue_sparse.py", "--model_name_or_path", str(f["notes"]), *run, "--output_dir", out],
            r"--model_name_or_path \S+/notes has no config\.json",
        ),
        "model_dir_with_config_alone": (
            ["run_glue_sparse.py", "--model_name_or_path", str(f["half_saved"]), *run, "--output_dir", out],
            r"--model_name_or_path \S+/half_saved holds config\.json but no weights \(model\.safetensors, .*again",
        ),
        "malformed_yaml_config": (
            ["run_glue_sparse.py", str(f["config"]), "--model_name_or_path", model, "--output_dir", out],
            r"run\.yaml line 3, column 9: not valid YAML",
        ),
        "max_seq_length_over_the_model": (
            [*glue, "--train_file", str(f["train"]), "--max_seq_length", "1000"],
            r"--max_seq_length 1000 is above the 512 tokens",
        ),
        "sweep_sparsities_abc": (
            ["run_sweep.py", "--sparsities", "0.3,abc", "--output_dir", out, "--", "--model_name_or_path", model],
            r"--sparsities 0\.3,abc: 'abc' is not a number",
        ),
        "difficulty_alpha_1_5": (
            ["run_sample_difficulty.py", "--output_dir", out, "--alpha", "1.5", "--", "--model_name_or_path", model],
            r"--alpha must be in \(0, 1\]",
        ),
        "extract_missing_search_dir": (
            ["run_extract_ticket.py", str(tmp / "no_search"), "--sparsity", "0.5", "--output_dir", out],
            r"search dir \S+no_search does not exist",
        ),
        "bias_model_non_utf8": (
            ["run_bias_model.py", "--task", "sst2", "--train_file", str(f["latin1"]), "--output_dir", out],
            r"latin1\.tsv is not UTF-8 \(line 5",
        ),
    }


CASES = [
    "non_utf8_train_file",
    "max_train_samples_0",
    "missing_model_dir",
    "model_dir_without_config",
    "model_dir_with_config_alone",
    "malformed_yaml_config",
    "max_seq_length_over_the_model",
    "sweep_sparsities_abc",
    "difficulty_alpha_1_5",
    "extract_missing_search_dir",
    "bias_model_non_utf8",
]


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_a_user_error_is_one_line_naming_the_problem(case, tmp_path, data_dir, minilm):
    argv, expected = _cases(tmp_path, _inputs(tmp_path, data_dir), minilm)[case]
    env = {k: v for k, v in os.environ.items() if k != DEBUG_ENV}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    done = run_python(REPO_ROOT / argv[0], *argv[1:], cwd=tmp_path, env=env)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert len(errors) == 1 and done.stderr.rstrip().endswith(errors[0]), done.stderr[-3000:]
    assert re.search(expected, errors[0]), errors[0]
    assert not (tmp_path / "out" / "all_results.json").exists()  # refused before any work


def _refuse() -> None:
    raise InputError("--x is bad: use --y")


def test_run_script_prints_one_line_and_returns_2(capsys, monkeypatch):
    monkeypatch.delenv(DEBUG_ENV, raising=False)
    assert run_script(_refuse) == 2
    assert capsys.readouterr().err == f"error: --x is bad: use --y (traceback: {DEBUG_ENV}=1)\n"
    assert run_script(lambda: None) == 0


def test_run_script_keeps_the_traceback_with_debug_and_for_unexpected_errors(monkeypatch):
    monkeypatch.setenv(DEBUG_ENV, "1")
    with pytest.raises(InputError):
        run_script(_refuse)
    monkeypatch.delenv(DEBUG_ENV)

    def crash() -> None:
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        run_script(crash)


def _one_error_line(capsys, call) -> str:
    """Run `call` as a script does (`run_script`): it must end in status 2 and one `error:` line; return that line."""
    assert run_script(call) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert "Traceback" not in err and len(lines) == 1 and err.rstrip().endswith(lines[0]), err[-3000:]
    return lines[0]


def _script_argv(script: str, out: str, tmp: Path, data_dir: Path, model: str) -> list[str]:
    """Arguments of one script, all good but `--output_dir out`."""
    train = _inputs(tmp, data_dir)["train"]
    run = ["--model_name_or_path", model, "--task", "sst2", "--train_file", str(train), "--validation_file", str(train)]
    return {
        "glue_sparse": [*run, "--no_default_ood", "true", "--report_to", "none", "--output_dir", out],
        "bias_model": ["--task", "sst2", "--train_file", str(train), "--output_dir", out],
        "attack": [*run[:4], "--data_dir", str(data_dir), "--num_examples", "2", "--output_dir", out],
        "sweep": ["--sparsities", "0.3", "--output_dir", out, "--", *run],
        "sample_difficulty": ["--alpha", "1", "--output_dir", out, "--", *run],
    }[script]


@pytest.mark.parametrize("script", ["glue_sparse", "bias_model", "attack", "sweep", "sample_difficulty"])
@pytest.mark.parametrize("under", [False, True])
def test_an_output_dir_that_is_a_file_is_one_error_line(script, under, tmp_path, data_dir, minilm, capsys, monkeypatch):
    """--output_dir naming a regular file (or a path under one) is refused by name, before any work."""
    import importlib

    monkeypatch.delenv(DEBUG_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("a user's file\n")
    out = "notes.txt/run" if under else "notes.txt"
    main = importlib.import_module(f"hf_srnets.commands.{script}").main
    line = _one_error_line(capsys, lambda: main(_script_argv(script, out, tmp_path, data_dir, minilm)))
    what = r"lies under \S+/notes\.txt, which is a file" if under else "is a file"
    assert re.match(f"error: --output_dir {re.escape(out)} {what}, not a folder: choose a folder", line), line
    assert (tmp_path / "notes.txt").read_text() == "a user's file\n"


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            PermissionError(13, "Permission denied", "out/model.safetensors"),
            r"cannot write out/model\.safetensors: "
            r"Permission denied \(errno 13, EACCES\): fix its permissions, or choose a writable --output_dir",
        ),
        (
            OSError(28, "No space left on device"),
            r"cannot write the outputs: No space left on device \(errno 28, "
            r"ENOSPC\): the disk is full: free some space, or choose an --output_dir on another disk",
        ),
        (OSError(30, "Read-only file system", "/mnt/ro/out"), r"cannot write /mnt/ro/out: Read-only file system"),
        (NotADirectoryError(20, "Not a directory", "notes.txt/out"), r"cannot write notes\.txt/out: Not a directory"),
    ],
)
def test_run_script_turns_an_os_error_on_a_path_into_one_line(error, expected, capsys, monkeypatch):
    monkeypatch.delenv(DEBUG_ENV, raising=False)

    def fail() -> None:
        raise error

    assert re.fullmatch(f"error: {expected}.*", _one_error_line(capsys, fail))
    monkeypatch.setenv(DEBUG_ENV, "1")
    with pytest.raises(OSError):
        run_script(fail)


def test_run_script_keeps_the_traceback_of_other_os_errors(monkeypatch):
    monkeypatch.delenv(DEBUG_ENV, raising=False)

    def fail() -> None:
        raise ConnectionResetError(104, "Connection reset by peer")

    with pytest.raises(ConnectionResetError):
        run_script(fail)


def test_a_read_only_output_dir_is_one_error_line_naming_it(tmp_path, capsys, monkeypatch):
    """A dir the run may not write (faked: the tests run as root) is refused at the lock, naming the dir."""
    from hf_srnets.training import output_dir

    monkeypatch.delenv(DEBUG_ENV, raising=False)

    def read_only(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(output_dir.os, "open", read_only)
    out = str(tmp_path / "ro")
    line = _one_error_line(capsys, lambda: output_dir.acquire_lock(out))
    assert line.startswith(f"error: --output_dir {out}: cannot write {out}/") and "Permission denied" in line


def _damaged_classifier(tmp: Path, name: str, keep: int | None) -> Path:
    """A tiny saved SST-2 classifier with a tokenizer, its model.safetensors cut to `keep` bytes (None: half)."""
    from conftest import tiny_model
    from training.helpers import tiny_tokenizer

    path = tmp / name
    tiny_model("bert", num_labels=2).save_pretrained(path)
    tiny_tokenizer(path).save_pretrained(path)
    weights = path / "model.safetensors"
    with open(weights, "r+b") as f:
        f.truncate(weights.stat().st_size // 2 if keep is None else keep)
    return path


@pytest.mark.parametrize("script", ["glue_sparse", "attack", "sample_difficulty", "api", "sentence_encoder"])
@pytest.mark.parametrize("keep", [0, 1000, None])
def test_a_damaged_weights_file_is_one_error_line_naming_it(script, keep, tmp_path, data_dir, capsys, monkeypatch):
    """An empty or cut model.safetensors (the model, the attack's victim, --model_dirs) is named, with the fix."""
    import importlib

    from hf_srnets import load_pretrained_model

    monkeypatch.delenv(DEBUG_ENV, raising=False)
    models = [_damaged_classifier(tmp_path, f"model{i}", keep) for i in range(2)]
    out = str(tmp_path / "out")
    if script == "api":
        call = lambda: load_pretrained_model(str(models[0]))  # noqa: E731
    elif script == "sentence_encoder":  # the attack's similarity model (--sentence_encoder)
        from hf_srnets.attack.sentence_encoder import SentenceEncoder

        call = lambda: SentenceEncoder(str(models[0]))  # noqa: E731
    elif script == "sample_difficulty":
        argv = ["--alpha", "1", "--output_dir", out, "--model_dirs", *map(str, models), "--"]
        argv += [
            "--model_name_or_path",
            str(models[0]),
            "--task",
            "sst2",
            "--data_dir",
            str(data_dir),
            "--max_train_samples",
            "20",
        ]
        call = lambda: importlib.import_module("hf_srnets.commands.sample_difficulty").main(argv)  # noqa: E731
    else:
        main = importlib.import_module(f"hf_srnets.commands.{script}").main
        call = lambda: main(_script_argv(script, out, tmp_path, data_dir, str(models[0])))  # noqa: E731
    line = _one_error_line(capsys, call)
    assert re.match(
        rf"error: {tmp_path}/model0/model\.safetensors is damaged and cannot be read \(.+\): it was cut short or "
        r"overwritten; save the model again \(or download it again\)\.",
        line,
    ), line


def _classifier(tmp: Path) -> Path:
    """A tiny saved SST-2 classifier (512 positions) with a tokenizer."""
    from conftest import tiny_model
    from training.helpers import tiny_tokenizer

    path = tmp / "classifier"
    tiny_model("bert", num_labels=2).save_pretrained(path)
    tiny_tokenizer(path).save_pretrained(path)
    return path


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--max_seq_length", "0"], r"--max_seq_length must be at least 1, got 0"),
        (["--max_seq_length", "-5"], r"--max_seq_length must be at least 1, got -5"),
        (["--max_seq_length", "100000"], r"--max_seq_length 100000 is above the 512 tokens \S+/classifier reads"),
        (["--query_budget", "0"], r"--query_budget must be at least 1, got 0"),
        (["--batch_size", "0"], r"--batch_size must be at least 1, got 0"),
        (["--sentence_encoder", "no/such/encoder"], r"--sentence_encoder no/such/encoder does not exist"),
        (["--mlm_model", "./no_mlm"], r"--mlm_model \./no_mlm does not exist"),
    ],
)
def test_run_attack_refuses_bad_options_as_run_glue_sparse_does(
    options, expected, tmp_path, data_dir, capsys, monkeypatch
):
    """The options run_glue_sparse.py refuses are refused by run_attack.py too, before any example is attacked."""
    from hf_srnets.commands.attack import main

    monkeypatch.delenv(DEBUG_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    argv = _script_argv("attack", str(tmp_path / "out"), tmp_path, data_dir, str(_classifier(tmp_path)))
    line = _one_error_line(capsys, lambda: main([*argv, *options]))
    assert re.match(f"error: {expected}", line), line
    assert not list((tmp_path / "out").glob("attack_*"))


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf"])
def test_run_bias_model_refuses_a_c_that_is_not_positive(value, tmp_path, data_dir, capsys, monkeypatch):
    from hf_srnets.commands.bias_model import main

    monkeypatch.delenv(DEBUG_ENV, raising=False)
    argv = _script_argv("bias_model", str(tmp_path / "out"), tmp_path, data_dir, "unused")
    line = _one_error_line(capsys, lambda: main([*argv, "--C", value]))
    assert line.startswith(f"error: --C must be a positive number (the inverse L2 strength), got {value}: e.g. --C 1")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--bf16", "true", "--fp16", "true"], r"--bf16 and --fp16 are both true, but a run has one mixed precision"),
        (  # another combination TrainingArguments refuses with a ValueError
            ["--load_best_model_at_end", "true", "--eval_strategy", "steps", "--save_strategy", "epoch"],
            r"the training options do not go together: .*save and eval strategy.*change the --options it names",
        ),
    ],
)
def test_training_options_transformers_refuses_are_one_error_line(options, expected, tmp_path, capsys, monkeypatch):
    from hf_srnets.commands.glue_sparse import main

    monkeypatch.delenv(DEBUG_ENV, raising=False)
    argv = ["--model_name_or_path", "unused", "--task", "sst2", "--output_dir", str(tmp_path / "out"), *options]
    line = _one_error_line(capsys, lambda: main(argv))
    assert re.match(f"error: {expected}", line), line
    assert not (tmp_path / "out").exists()


def test_a_failed_push_to_hub_ends_in_error_lines_without_a_traceback(tmp_path, capsys, monkeypatch):
    """`python -m hf_srnets.commands.push_to_hub` (the retry command a run prints) offline: the error lines with the
    retry command, status 1; a dir without masks is one error line naming --full_model."""
    from huggingface_hub import HfApi

    from hf_srnets.commands.push_to_hub import script_main

    monkeypatch.delenv(DEBUG_ENV, raising=False)
    out = _classifier(tmp_path)
    capsys.readouterr()  # the saving's progress bar

    def offline(self, *args, **kwargs):
        raise OSError("Name or service not known")

    monkeypatch.setattr(HfApi, "create_repo", offline)
    monkeypatch.setattr(sys, "argv", ["push_to_hub", str(out), "--repo_id", "someone/x", "--full_model"])
    with pytest.raises(SystemExit) as done:
        run_script(script_main)
    assert done.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: Upload of {out} to the Hub repo 'someone/x' failed (OSError: Name or service")
    assert err.rstrip().endswith(
        f"To retry: python -m hf_srnets.commands.push_to_hub {out} --repo_id someone/x --full_model"
    )
    monkeypatch.setattr(sys, "argv", ["push_to_hub", str(out), "--repo_id", "someone/x"])
    line = _one_error_line(capsys, script_main)
    assert line.startswith(f"error: {out} has no srnet_masks.safetensors: only mask-training runs make a mask repo")
    assert "--full_model" in line


def test_a_full_disk_while_safetensors_saves_is_one_error_line(capsys, monkeypatch):
    """safetensors reports a full disk as its own error, `... (os error 28)` (as seen on a full tmpfs): one line."""
    from safetensors import SafetensorError

    monkeypatch.delenv(DEBUG_ENV, raising=False)

    def save() -> None:
        raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")

    line = _one_error_line(capsys, save)
    assert line.startswith("error: cannot write the outputs: No space left on device (errno 28, ENOSPC): the disk")
    monkeypatch.setenv(DEBUG_ENV, "1")
    with pytest.raises(SafetensorError):
        run_script(save)


def _raises(err: BaseException):
    def write() -> None:
        with naming_path("out/model"):
            raise err

    return write


@pytest.mark.parametrize(
    ("error", "full"),
    [
        (OSError(28, "No space left on device"), False),  # a write() on a full disk: no file name
        (RuntimeError("Failed to write (os error 28)"), False),  # safetensors (Rust) on a full disk
        (RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 704 vs 598"), True),  # torch.save
    ],
)
def test_a_full_disk_met_while_writing_names_the_path_written(error, full, capsys, monkeypatch):
    """Issue 33 leftover: ENOSPC from torch.save or safetensors was a traceback, or a line naming no path."""
    import hf_srnets.errors as errors

    monkeypatch.delenv(DEBUG_ENV, raising=False)
    monkeypatch.setattr(errors, "_disk_is_full", lambda path: full)
    line = _one_error_line(capsys, _raises(error))
    assert line.startswith("error: cannot write out/model: No space left on device (errno 28, ENOSPC): the disk is")


def test_naming_the_path_keeps_other_errors_as_they_are(monkeypatch):
    import hf_srnets.errors as errors

    monkeypatch.setattr(errors, "_disk_is_full", lambda path: False)
    torch_failed = RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 704 vs 598")
    with pytest.raises(RuntimeError, match="unexpected pos"):  # torch's writer with space left: not a full disk
        _raises(torch_failed)()
    with pytest.raises(PermissionError) as named:  # an error naming its own file keeps it
        _raises(PermissionError(13, "Permission denied", "out/model/x.bin"))()
    assert named.value.filename == "out/model/x.bin"
    with pytest.raises(KeyError):
        _raises(KeyError("a bug"))()


def test_the_report_command_names_its_own_output_on_a_read_only_disk(tmp_path, capsys, monkeypatch):
    """issue 50: report writes into the experiment folder and has no --output_dir, yet a read-only disk told the
    user to "choose an --output_dir on a writable disk"."""
    import hf_srnets.commands.report as command
    import hf_srnets.experiments.report as report

    def read_only(*args, **kwargs):
        raise OSError(30, "Read-only file system", str(tmp_path / "report.md"))

    monkeypatch.delenv(DEBUG_ENV, raising=False)
    monkeypatch.setattr(report, "regenerate", read_only)
    monkeypatch.setattr(sys, "argv", ["report", str(tmp_path), "--no_plots"])
    assert command.run() == 2
    line = capsys.readouterr().err.strip()
    assert "--output_dir" not in line, line
    assert "the disk is read-only: choose a copy of the experiment folder on a writable disk." in line, line
