"""run_glue_sparse.py never writes over what a user keeps: `--write_train_predictions` refuses the run's own inputs,
its outputs and any existing file (unless `--overwrite_output_dir` hands over the `--output_dir` it is in). A resumed
run reports the whole run's train_loss, and a checkpoint cut short while saving is refused by name."""

import json
import os
import re
import shutil
import sys

import pytest
from conftest import mnli_run_args

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

import run_glue_sparse
from hf_srnets.arguments.glue_sparse_arguments import parse_args
from hf_srnets.errors import InputError
from hf_srnets.runner import files_read
from hf_srnets.runner.outputs import check_train_predictions_path

TSV = "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1_parse\t"


def _argv(tmp_path, *extra):
    # a model path that does not exist: a check that is not made before loading fails on it instead
    return ["--model_name_or_path", str(tmp_path / "no_model"), "--task", "mnli", "--output_dir", str(tmp_path / "out"),
            "--report_to", "none", "--do_train", *extra]  # fmt: skip


@pytest.fixture
def inputs(tmp_path):
    train, bias = tmp_path / "train.tsv", tmp_path / "bias_train.jsonl"
    train.write_text(TSV + "\n")
    bias.write_text('{"id": "1", "probs": [0.2, 0.3, 0.5]}\n')
    return train, bias


@pytest.mark.parametrize(
    ("target", "extra", "message"),
    [
        ("train", [], "would overwrite {train}, which this run reads"),
        ("bias", ["--loss", "poe"], "would overwrite {bias}, which this run reads"),
        ("train", ["--overwrite_output_dir", "true"], "would overwrite {train}, which this run reads"),
        ("elsewhere", [], "exists (it is outside --output_dir, so --overwrite_output_dir does not apply)"),
        ("elsewhere", ["--overwrite_output_dir", "true"], "exists (it is outside --output_dir"),
        ("in_out", [], "exists: delete or move it"),
        ("own_output", ["--overwrite_output_dir", "true"], "is a file the run itself writes in --output_dir"),
        ("directory", [], "is a directory: pass a file path"),
    ],
)
def test_write_train_predictions_refuses_inputs_outputs_and_existing_files(target, extra, message, tmp_path, inputs):
    train, bias = inputs
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "elsewhere.jsonl").write_text("keep\n")
    (out / "teacher.jsonl").write_text("earlier run\n")
    paths = {
        "train": train,
        "bias": bias,
        "elsewhere": tmp_path / "elsewhere.jsonl",
        "in_out": out / "teacher.jsonl",
        "own_output": out / "all_results.json",
        "directory": tmp_path,
    }
    argv = _argv(tmp_path, "--train_file", str(train), "--bias_predictions", str(bias), *extra)
    argv += ["--write_train_predictions", str(paths[target])]
    before = {p: p.read_text() for p in [train, bias, tmp_path / "elsewhere.jsonl", out / "teacher.jsonl"]}
    with pytest.raises(InputError, match=re.escape(message.format(train=train, bias=bias))):
        run_glue_sparse.main(argv)
    assert {p: p.read_text() for p in before} == before


def test_write_train_predictions_may_replace_a_file_in_the_output_dir_it_overwrites(tmp_path, inputs):
    train, _ = inputs
    out = tmp_path / "out"
    out.mkdir()
    (out / "teacher.jsonl").write_text("earlier run\n")
    argv = _argv(tmp_path, "--train_file", str(train), "--write_train_predictions", str(out / "teacher.jsonl"))
    run = parse_args([*argv, "--overwrite_output_dir", "true"])
    check_train_predictions_path(run, files_read(run))
    run = parse_args([*argv[:-1], str(out / "new.jsonl")])
    check_train_predictions_path(run, files_read(run))


def _tiny_run(pretrained, data_dir, out, *extra):
    return mnli_run_args(pretrained, data_dir, out, "--do_train", "--pruning", "mask", "--threshold_update_interval",
                         "2", "--max_steps", "8", "--logging_steps", "3", "--save_strategy", "steps", "--save_steps",
                         "4", *extra, train=64, eval=16, ood=16, batch=8)  # fmt: skip


def test_a_resumed_run_reports_the_whole_runs_train_loss_and_refuses_a_checkpoint_cut_short(
    pretrained, data_dir, tmp_path
):
    out = tmp_path / "out"
    full = run_glue_sparse.main(_tiny_run(pretrained, data_dir, out))
    resumed = run_glue_sparse.main(
        _tiny_run(pretrained, data_dir, tmp_path / "resumed", "--resume_from_checkpoint", str(out / "checkpoint-4"))
    )
    assert resumed["train_steps"] == full["train_steps"] == 8
    saved = json.loads((tmp_path / "resumed" / "all_results.json").read_text())
    assert saved["train_loss"] == resumed["train_loss"] == pytest.approx(full["train_loss"], rel=1e-6)

    # a run killed while saving checkpoint-12 left only its SRNet state (the Trainer writes trainer_state.json last)
    cut = out / "checkpoint-12"
    cut.mkdir()
    shutil.copy(out / "checkpoint-8" / "srnet_training_state.safetensors", cut)
    with pytest.raises(InputError) as err:
        run_glue_sparse.main(_tiny_run(pretrained, data_dir, out))
    assert f"--resume_from_checkpoint {out / 'checkpoint-8'} to continue" in str(err.value)
    assert "checkpoint-12: incomplete" in str(err.value)
    with pytest.raises(InputError, match=re.escape(f"{cut} is incomplete: it has no whole trainer_state.json")):
        run_glue_sparse.main(_tiny_run(pretrained, data_dir, out, "--resume_from_checkpoint", str(cut)))
