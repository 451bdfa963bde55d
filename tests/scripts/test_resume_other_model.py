"""`--resume_from_checkpoint` of a run of another model (issue 33: a raw `load_state_dict` traceback) is one
`error:` line naming the checkpoint and the fix, with or without masks."""

from __future__ import annotations

import shutil

import pytest
import torch
from conftest import mnli_run_args
from transformers import BertConfig, BertModel

from hf_srnets.commands.glue_sparse import main
from hf_srnets.errors import run_script


def _wider_encoder(pretrained, path):
    """The tiny pre-trained encoder's layout with hidden size 48 instead of 32, the same tokenizer."""
    torch.manual_seed(0)
    config = BertConfig(hidden_size=48, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
    BertModel(BertConfig(**{**config.to_dict(), "vocab_size": 100})).save_pretrained(path)
    for file in pretrained.iterdir():
        if file.is_file() and not file.name.startswith(("model", "config")):
            shutil.copy(file, path / file.name)
    return path


@pytest.mark.parametrize("pruning", [["--pruning", "none"], ["--pruning", "mask", "--sparsity", "0.5"]])
def test_resuming_a_checkpoint_of_another_model_is_one_error_line(pruning, pretrained, data_dir, tmp_path, capsys):
    first = tmp_path / "first"
    args = mnli_run_args(pretrained, data_dir, first, train=32, eval=16, ood=12, batch=16)
    args[args.index("--save_strategy") + 1] = "steps"
    main([*args, *pruning, "--do_train", "--max_steps", "2", "--save_steps", "1"])
    wide = _wider_encoder(pretrained, tmp_path / "wide")
    second = mnli_run_args(wide, data_dir, tmp_path / "second", train=32, eval=16, ood=12, batch=16)
    checkpoint = first / "checkpoint-2"
    argv = [*second, *pruning, "--do_train", "--max_steps", "4", "--resume_from_checkpoint", str(checkpoint)]
    assert run_script(lambda: main(argv)) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]  # after the tokenizing progress bars
    assert last.startswith(f"error: --resume_from_checkpoint {checkpoint} holds the weights of another model")
    assert "size mismatch" in last and "--model_name_or_path" in last
