"""Checks that run before any data is read or any model trains: sample caps and --max_seq_length at parse time, the
model path, --max_seq_length against the model's position limit, run_sample_difficulty.py's --alpha."""

import json

import pytest

from hf_srnets.cli import parse_args
from hf_srnets.cli.arguments import ModelArguments
from hf_srnets.compact.loading import check_model_path
from hf_srnets.errors import InputError, MissingInputError
from hf_srnets.experiments.sample_difficulty import SampleDifficultyArguments
from hf_srnets.runner.data import check_model_inputs

BASE = ["--model_name_or_path", "m", "--output_dir", "o"]


@pytest.mark.parametrize("option", ["max_train_samples", "max_eval_samples", "max_ood_samples", "max_seq_length"])
@pytest.mark.parametrize("value", ["0", "-3"])
def test_counts_below_one_are_refused_when_parsed(option, value):
    # 0 trained on nothing (a sampler error after the model loaded) or, for --max_seq_length, turned truncation off
    with pytest.raises(InputError, match=rf"--{option} must be at least 1, got {value}"):
        parse_args([*BASE, f"--{option}", value])


def test_the_model_path_must_exist_and_hold_a_config(tmp_path):
    with pytest.raises(MissingInputError, match=r"--model_name_or_path \S+/nowhere/model does not exist"):
        check_model_path(str(tmp_path / "nowhere" / "model"))
    (tmp_path / "notes").mkdir()
    with pytest.raises(InputError, match=r"notes has no config\.json, so it is not a saved model"):
        check_model_path(str(tmp_path / "notes"))
    (tmp_path / "masks").mkdir()
    (tmp_path / "masks" / "srnet_config.json").write_text("{}")
    with pytest.raises(InputError, match=r"masks holds hf_srnets masks .* --mask_from"):
        check_model_path(str(tmp_path / "masks"))
    (tmp_path / "weights.bin").write_bytes(b"")
    with pytest.raises(InputError, match="is a file, not a model directory"):
        check_model_path(str(tmp_path / "weights.bin"), "--base_model")


def test_max_seq_length_must_fit_the_models_positions(pretrained):
    positions = json.loads((pretrained / "config.json").read_text())["max_position_embeddings"]
    model = ModelArguments(model_name_or_path=str(pretrained))
    ok = parse_args([*BASE, "--max_seq_length", str(positions)]).data
    check_model_inputs(model, ok)
    too_long = parse_args([*BASE, "--max_seq_length", str(positions + 1)]).data
    with pytest.raises(InputError, match=rf"--max_seq_length {positions + 1} is above the {positions} tokens"):
        check_model_inputs(model, too_long)


@pytest.mark.parametrize("alpha", [1.5, 0.0, -0.2])
def test_sample_difficulty_refuses_alpha_outside_0_1_before_any_run(alpha):
    with pytest.raises(InputError, match=r"--alpha must be in \(0, 1\]"):
        SampleDifficultyArguments(output_dir="d", alpha=alpha)
