"""The output phase of a run (`runner/outputs.py`, `runner/run.py`): the results file is the last file a run writes,
so a run killed while writing its card, merged checkpoint or train predictions is not counted as finished; and a full
disk met while saving is one error line naming where (issue 33)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from hf_srnets.commands.glue_sparse import main
from hf_srnets.errors import DEBUG_ENV, run_script
from hf_srnets.run_files import CARD_NAME, MERGED_DIR, RESULTS_NAME, is_finished


def _run_args(model: Path, data_dir: Path, tmp: Path, *extra: str) -> list[str]:
    """A 1-step mask search of a tiny SST-2 classifier on 20 real SST-2 rows."""
    rows = (data_dir / "sst2" / "sst2_dev_glue.tsv").read_text(encoding="utf-8").splitlines()[:21]
    train = tmp / "train.tsv"
    train.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return [
        "--model_name_or_path", str(model), "--task", "sst2", "--train_file", str(train), "--validation_file",
        str(train), "--no_default_ood", "true", "--do_train", "--max_steps", "1", "--pruning", "mask", "--sparsity",
        "0.5", "--per_device_train_batch_size", "8", "--save_strategy", "no", "--report_to", "none", "--use_cpu",
        "true", "--disable_tqdm", "true", "--output_dir", str(tmp / "out"), *extra,
    ]  # fmt: skip


class Killed(BaseException):
    """A kill (SIGTERM, Ctrl-C) arriving in the middle of a write."""


@pytest.mark.parametrize("killed_in", ["card", "merged"])
def test_a_run_killed_while_writing_its_card_or_merged_model_is_not_finished(
    killed_in, sst2_classifier, data_dir, tmp_path, monkeypatch
):
    """Issue 33 leftover: all_results.json was written before the card and the merged checkpoint, so a run killed
    while writing those counted as finished (`is_finished`) and a sweep skipped it with a cut card or model."""
    import hf_srnets.runner.outputs as outputs

    def kill(*_args, **_kwargs):
        raise Killed()

    monkeypatch.setattr(outputs, "render_model_card" if killed_in == "card" else "save_merged", kill)
    with pytest.raises(Killed):
        main(_run_args(sst2_classifier, data_dir, tmp_path, "--save_merged", "true"))
    out = tmp_path / "out"
    assert not (out / RESULTS_NAME).exists() and not is_finished(str(out))
    monkeypatch.undo()
    main(_run_args(sst2_classifier, data_dir, tmp_path, "--save_merged", "true", "--overwrite_output_dir", "true"))
    assert is_finished(str(out)) and (out / CARD_NAME).is_file() and (out / MERGED_DIR / "config.json").is_file()
    last = max((p for p in out.rglob("*") if p.is_file() and not p.name.startswith(".")), key=os.path.getmtime)
    assert last.name == RESULTS_NAME


def _full_disk(*_args, **_kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as a write() on a full disk: no file name


@pytest.mark.parametrize("where", ["torch.save", "safetensors", "trainer_state", "eval_predictions", "card"])
def test_a_full_disk_while_saving_is_one_error_line_naming_the_path(
    where, sst2_classifier, data_dir, tmp_path, monkeypatch, capsys
):
    """Issue 33 leftover: ENOSPC from torch.save (training_args.bin), from safetensors (the masks) or from writing
    trainer_state.json, the per-example predictions or the card ended in a traceback, or in a line naming no path;
    now one `error:` line names the file or folder."""
    import hf_srnets.evaluation.eval_predictions as eval_predictions
    import hf_srnets.pruning.mask_files as mask_files
    import hf_srnets.runner.outputs as outputs
    import hf_srnets.training.trainer as trainer

    monkeypatch.delenv(DEBUG_ENV, raising=False)
    out = tmp_path / "out"
    if where == "torch.save":
        monkeypatch.setattr(trainer.torch, "save", _full_disk)
        path = out
    elif where == "safetensors":
        monkeypatch.setattr(mask_files, "save_file", _full_disk)
        path = out / "srnet_masks.safetensors"
    elif where == "trainer_state":
        monkeypatch.setattr(trainer.Trainer, "save_state", _full_disk)
        path = out / "trainer_state.json"
    elif where == "eval_predictions":
        monkeypatch.setattr(eval_predictions, "prediction_rows", _full_disk)
        path = out / "eval_predictions" / "sst2.jsonl"
    else:
        monkeypatch.setattr(outputs, "render_model_card", _full_disk)
        path = out / CARD_NAME
    status = run_script(lambda: main(_run_args(sst2_classifier, data_dir, tmp_path)))
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert status == 2 and "Traceback" not in err and len(lines) == 1, err[-3000:]
    assert lines[0].startswith(
        f"error: cannot write {path}: No space left on device (errno 28, ENOSPC): the disk is full: free some space"
    ), lines[0]
    assert not is_finished(str(out))


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--push_to_hub", "true", "--hub_model_id", "bad id//x"], r"'bad id//x' \(--hub_model_id\) is not a valid"),
        (["--push_to_hub", "true"], r"'out put' \(the default, from --hub_model_id or the --output_dir's name\)"),
        (["--save_merged", "true", "--push_merged", "true", "--hub_merged_model_id", "a/b/c"], r"'a/b/c' \(--hub_merg"),
    ],
)
def test_an_invalid_hub_repo_id_is_refused_before_training(extra, expected, sst2_classifier, data_dir, tmp_path):
    """Issue 33, round 4: a repo id the Hub refuses was only found at upload time, after the whole run."""
    from hf_srnets.errors import InputError

    argv = _run_args(sst2_classifier, data_dir, tmp_path, *extra)
    argv[argv.index("--output_dir") + 1] = str(tmp_path / "out put")
    with pytest.raises(InputError, match=expected + r".* Give --hub\w*model_id NAME or NAMESPACE/NAME"):
        main(argv)
    assert not (tmp_path / "out put").exists()


def test_describe_run_states_each_argument_given_and_the_settings_used():
    """The card's run description, each field from the argument of its name (issue 51: 21 fields were copied by
    hand); the expected values are the flags below."""
    from hf_srnets.arguments import parse_args
    from hf_srnets.runner.outputs import describe_run

    run = parse_args(["--model_name_or_path", "m", "--output_dir", "out/r", "--do_train", "--pruning", "mask",
                      "--sparsity", "0.3", "--loss", "focal", "--learning_rate", "3e-5", "--seed", "7",
                      "--max_steps", "11", "--mask_learning_rate", "0.02", "--max_seq_length", "64",
                      "--per_device_train_batch_size", "4"])  # fmt: skip
    described = describe_run(run)
    assert (described.model_name_or_path, described.output_dir, described.pruning) == ("m", "out/r", "mask")
    assert (described.do_train, described.loss, described.learning_rate, described.seed) == (True, "focal", 3e-5, 7)
    assert (described.max_steps, described.mask_learning_rate, described.max_seq_length) == (11, 0.02, 64)
    assert described.per_device_train_batch_size == 4 and described.precision == "fp32"
    assert described.step_objective == "none" and "focal_gamma" in described.loss_options  # as used: defaults filled
    assert described.mask_from is None and described.reference_results is None
