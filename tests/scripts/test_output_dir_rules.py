"""run_glue_sparse.py in a folder that already holds a run: refuse, or clear and start over."""

import json
import os
import re
import sys

import pytest
from conftest import mnli_run_args

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
from test_checkpoint_labels_and_implied_training import _args, _checkpoint

import run_glue_sparse
from hf_srnets.commands.glue_sparse import main
from hf_srnets.errors import InputError

NLI = {0: "entailment", 1: "neutral", 2: "contradiction"}


def test_a_reused_output_dir_is_refused_then_cleared_on_request(minilm, data_dir, tmp_path):
    model = _checkpoint(minilm, tmp_path / "ckpt", NLI)
    out = tmp_path / "out"
    mask = ["--pruning", "mask", "--threshold_update_interval", "1"]
    run_glue_sparse.main(_args(model, data_dir, out, *mask, "--sparsity", "0.5", "--save_merged", "true"))
    assert (out / "merged" / "config.json").is_file()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="--overwrite_output_dir"):
        run_glue_sparse.main(_args(model, data_dir, out, *mask, "--sparsity", "0.3"))
    assert json.loads((out / "srnet_config.json").read_text())["sparsity"] == 0.5  # the first run is intact

    results = run_glue_sparse.main(_args(model, data_dir, out, "--pruning", "none", "--overwrite_output_dir", "true"))
    left = set(os.listdir(out)) - {".hf_srnets.lock"}
    assert "merged" not in left and not any(name.startswith("srnet_") for name in left)  # nothing of run 1 stays
    assert "notes.txt" in left  # nor is anything the runs did not write deleted
    assert json.loads((out / "all_results.json").read_text())["sparsity"] == results["sparsity"] == 0.0


def test_a_second_run_on_a_busy_output_dir_fails_at_start(minilm, data_dir, tmp_path):
    from hf_srnets.training.output_dir import OutputDirError, acquire_lock

    model = _checkpoint(minilm, tmp_path / "ckpt", NLI)
    out = tmp_path / "out"
    lock = acquire_lock(str(out))  # a run in progress
    try:
        with pytest.raises(OutputDirError, match="Another run is using --output_dir"):
            run_glue_sparse.main(_args(model, data_dir, out, "--pruning", "none"))
    finally:
        lock.release()
    assert not (out / "all_results.json").exists()


def test_overwrite_refuses_an_output_dir_the_run_reads_its_model_from(pretrained, data_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    small = {"train": 16, "eval": 16, "ood": 16, "batch": 8}
    main(mnli_run_args(pretrained, data_dir, "ft", "--do_train", "--pruning", "none", "--max_steps", "1", **small))
    weights = (tmp_path / "ft" / "model.safetensors").read_bytes()
    again = ["--pruning", "mask", "--sparsity", "0.5", "--overwrite_output_dir", "true", "--max_steps", "1"]
    message = "--model_name_or_path ft is the output dir that --overwrite_output_dir would clear"
    with pytest.raises(InputError, match=re.escape(message)):
        main(mnli_run_args("ft", data_dir, "ft", *again, **small))
    assert (tmp_path / "ft" / "model.safetensors").read_bytes() == weights  # the fine-tuned model is intact
    assert (tmp_path / "ft" / "config.json").is_file() and (tmp_path / "ft" / "all_results.json").is_file()
