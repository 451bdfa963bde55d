"""Checks that run before any data is read or any model trains: sample caps and --max_seq_length at parse time, the
model path, --max_seq_length against the model's position limit, run_sample_difficulty.py's --alpha, the NAMEs that
become file names (--ood_file, --extra_train, run_bias_model.py's splits, a sweep's methods)."""

import json

import pytest

from hf_srnets.arguments import parse_args
from hf_srnets.arguments.model_data_arguments import ModelArguments
from hf_srnets.arguments.sample_difficulty_arguments import SampleDifficultyArguments
from hf_srnets.compact.loading import check_model_path
from hf_srnets.errors import InputError, MissingInputError
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


@pytest.mark.parametrize(
    "flag, spec",
    [
        ("--ood_file", "../../notes=dev.tsv"),  # issue 50: overwrote X/notes.jsonl outside the output dir
        ("--predict_file", "my/set=dev.tsv"),  # trained, then a FileNotFoundError on eval_predictions/my/set.jsonl
        ("--extra_train", "../up=train.tsvx2"),  # its p_b file is bias_<NAME>.jsonl
    ],
)
def test_a_set_name_that_is_no_safe_file_name_is_refused_when_parsed(flag, spec):
    option = "--ood_file" if flag == "--predict_file" else flag
    with pytest.raises(
        InputError, match=rf"^{option} '[^']+': the NAME becomes a file name.* e\.g\. {option} \w+=PATH"
    ):
        parse_args([*BASE, flag, spec])


def test_run_bias_model_and_run_sweep_refuse_unsafe_names_before_any_work():
    from hf_srnets.arguments.bias_model_arguments import BiasModelArguments
    from hf_srnets.arguments.glue_sparse_arguments import build_parser
    from hf_srnets.experiments.sweep_recipe import check_methods

    with pytest.raises(InputError, match=r"--ood_file 'sub/../../escape': the NAME becomes a file name"):
        BiasModelArguments(output_dir="o", ood_file=["sub/../../escape=dev.tsv"])
    with pytest.raises(
        InputError, match=r"r.yaml: methods: method name '../ce': .* e\.g\. methods: \{ce: \{loss: ce\}\}"
    ):
        check_methods({"../ce": {"loss": "ce"}}, "r.yaml: methods", build_parser())


@pytest.mark.parametrize(
    "flag, value, expected",
    [
        ("--loss_options", '{"focal_gamma": 1, "focal_gamma": 5}', "key 'focal_gamma' is given twice"),  # trained γ=5
        ("--loss_options", "[1,2]", "must be a JSON object, got \\[1,2\\]"),  # was a TypeError
        ("--loss_options", '"gamma"', 'must be a JSON object, got "gamma"'),  # was "no option a, g, m"
        ("--step_objective_options", '{"adv_steps": 1, "adv_steps": 2}', "key 'adv_steps' is given twice"),
    ],
)
def test_json_options_refuse_repeated_keys_and_values_that_are_no_object(flag, value, expected):
    objective = ["--step_objective", "freelb"] if flag == "--step_objective_options" else []
    with pytest.raises(
        InputError, match=rf"^{flag}:? {expected}.*: give one JSON object, each key once, e\.g\. {flag} '\{{"
    ):
        parse_args([*BASE, "--loss", "focal", *objective, flag, value])


def test_sample_difficulty_refuses_a_model_given_twice_before_any_run(tmp_path):
    # issue 50: --sparsities 0.2 0.2 0.4 entered the 0.2 model's losses twice into the variance, without a word
    with pytest.raises(InputError, match=r"^--sparsities repeats 0\.2: .* e\.g\. --sparsities 0\.2 0\.4"):
        SampleDifficultyArguments(output_dir="d", sparsities=[0.2, 0.2, 0.4])
    with pytest.raises(InputError, match=r"^--model_dirs repeats \S+/m: "):
        SampleDifficultyArguments(output_dir="d", model_dirs=[str(tmp_path / "m"), str(tmp_path / "m/"), "other"])


@pytest.mark.parametrize("script", ["bias_model", "sample_difficulty", "extract_ticket", "export"])
def test_scripts_with_their_own_parser_name_an_unknown_flag_in_one_line(script, tmp_path, capsys):
    # issue 50: run_bias_model.py --bogus ended in HfArgumentParser's "Some specified arguments are not used"
    import importlib

    from hf_srnets.errors import run_script

    main = importlib.import_module(f"hf_srnets.commands.{script}").main
    argv = ["--output_dir", str(tmp_path / "out"), "--bogus_flag", "1"]
    if script == "extract_ticket":
        argv = [str(tmp_path), "--sparsity", "0.5", *argv]
    if script == "export":
        argv = [str(tmp_path), "--format", "onnx", *argv]
    assert run_script(lambda: main(argv)) == 2
    assert capsys.readouterr().err.startswith("error: unrecognized arguments: --bogus_flag 1 (see --help")
    assert not (tmp_path / "out").exists()


class _Payload:
    """A pickled object that would run `print` when unpickled without `weights_only`."""

    def __reduce__(self):
        return (print, ("unpickled",))


def test_a_pickled_pytorch_model_bin_is_refused_in_one_line_naming_it(tmp_path, capsys):
    # issue 50: refused (nothing ran), but as an UnpicklingError traceback
    import torch
    from conftest import tiny_model

    from hf_srnets import load_pretrained_model
    from hf_srnets.errors import run_script

    model = tiny_model("bert", 3)
    model.save_pretrained(tmp_path / "m")
    (tmp_path / "m" / "model.safetensors").unlink()
    torch.save({**model.state_dict(), "payload": _Payload()}, tmp_path / "m" / "pytorch_model.bin")
    assert run_script(lambda: load_pretrained_model(str(tmp_path / "m"))) == 2
    out, err = capsys.readouterr()
    (line,) = [line for line in err.splitlines() if line.startswith("error:")]  # the rest: progress bars
    assert line.startswith(f"error: {tmp_path}/m/pytorch_model.bin holds pickled Python objects besides tensors (")
    assert "unpickled" not in out + err and "Traceback" not in err


@pytest.mark.parametrize(
    "bound, expected",
    [
        (["--max_train_samples", "8", "--per_device_train_batch_size", "8"], "--max_train_samples 8 in batches of 8"),
        (["--max_steps", "1"], "--max_steps 1"),
    ],
)
def test_sample_difficulty_refuses_imp_runs_too_short_for_their_rounds_before_any_run(bound, expected, tmp_path):
    # issue 50: the first IMP runs trained, then a child ended in "ValueError: IMP needs 2 pruning rounds ..."
    from hf_srnets.experiments.sample_difficulty import check_run_argv

    args = SampleDifficultyArguments(output_dir=str(tmp_path / "d"), sparsities=[0.1, 0.2])
    run_argv = ["--model_name_or_path", "m", "--task", "mnli", "--num_train_epochs", "1", *bound]
    message = rf"^the IMP model at sparsity 0\.2 needs 2 pruning rounds.* at most 1 step\(s\) \({expected}"
    with pytest.raises(InputError, match=message):
        check_run_argv(run_argv, args)
