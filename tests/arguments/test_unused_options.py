"""Every pruning option given to a run either reaches the selected method's config or is refused by name: for each
registered method and `--pruning none` (with and without `--mask_from`), and for options that the method's other
settings leave unused (`--block_size` without block granularity, `--sparsity` with `--pruning random`, ...)."""

import dataclasses
import re
from dataclasses import dataclass, field

import pytest

from hf_srnets.arguments import parse_args, validate_args
from hf_srnets.arguments.glue_sparse_arguments import SCORE_OPTIONS
from hf_srnets.errors import InputError
from hf_srnets.pruning import (
    PRUNING_METHODS,
    MaskedLinear,
    PruningConfig,
    PruningMethod,
    register_pruning_method,
    unregister_pruning_method,
)
from hf_srnets.pruning.threshold.config import ThresholdConfig

BASE = ["--model_name_or_path", "m", "--output_dir", "o"]
# a valid value other than every method's default for each pruning option (flags: the option and what it needs)
VALUES = {
    "target_modules": ["--target_modules", "query"],
    "mask_classifier": ["--mask_classifier", "false"],
    "trainable_classifier": ["--trainable_classifier", "true"],
    "sparsity": ["--sparsity", "0.3"],
    "sparsity_scope": ["--sparsity_scope", "global"],  # l0's default: local (_value)
    "mask_granularity": ["--mask_granularity", "neuron"],
    "block_size": ["--block_size", "16"],
    "nm_n": ["--nm_n", "1", "--sparsity", "0.75"],  # without --mask_granularity nm: refused by name
    "nm_m": ["--nm_m", "8", "--sparsity", "0.75"],
    "initial_sparsity": ["--initial_sparsity", "0.2"],
    "sparsity_schedule": ["--sparsity_schedule", "cubic", "--initial_sparsity", "0.2"],
    "schedule_start": ["--schedule_start", "0.1"],
    "schedule_end": ["--schedule_end", "0.5"],
    "mask_init": ["--mask_init", "soft"],
    "alpha": ["--alpha", "3"],
    "init_threshold": ["--init_threshold", "0.02"],
    "threshold_update_interval": ["--threshold_update_interval", "5"],
    "train_weights": ["--train_weights", "true"],
    "weight_learning_rate": ["--weight_learning_rate", "3e-5", "--train_weights", "true"],  # alone: unused
    "imp_prune_ratio": ["--imp_prune_ratio", "0.25"],
    "imp_interval": ["--imp_interval", "0.25"],
    "rewind": ["--rewind", "true"],
    "l0_lambda": ["--l0_lambda", "0.1"],
    "l0_temperature": ["--l0_temperature", "0.5"],
    "l0_init_keep": ["--l0_init_keep", "0.8"],
    "l0_lambda_start_fraction": ["--l0_lambda_start_fraction", "0.2"],
    "l0_lambda_warmup_fraction": ["--l0_lambda_warmup_fraction", "0.2"],
    "l0_constraint": ["--l0_constraint", "lagrangian"],
    # alone (the penalty's): unused
    "l0_target_warmup_fraction": ["--l0_target_warmup_fraction", "0.2", "--l0_constraint", "lagrangian"],
    "l0_lagrangian_learning_rate": ["--l0_lagrangian_learning_rate", "0.5", "--l0_constraint", "lagrangian"],
    "random_seed": ["--random_seed", "7"],
    "calibration_samples": ["--calibration_samples", "16"],
    "wanda_nm": ["--wanda_nm", "2:4"],
    "mask_learning_rate": ["--mask_learning_rate", "0.01"],
    "mask_weight_decay": ["--mask_weight_decay", "0.001"],
}


def _cli_fields(config_class):
    return {f.name for f in dataclasses.fields(config_class) if f.init and f.metadata.get("cli", True)}


def _all_options():
    options = set(SCORE_OPTIONS)
    for method in PRUNING_METHODS.values():
        options |= _cli_fields(method.config_class)
    return sorted(options - {"random_like"})  # random's required option: given to every random run below


def test_the_value_table_covers_every_registered_option():
    assert set(_all_options()) <= set(VALUES), "give the new option a value in VALUES"


def _value(option, pruning):
    if option == "sparsity_scope" and pruning == "l0":
        return ["--sparsity_scope", "local"]
    return VALUES[option]


def _method_flags(pruning, tmp_path):
    if pruning == "random":
        return ["--pruning", "random", "--random_like", str(tmp_path)]
    if pruning == "mask_from":
        return ["--mask_from", str(tmp_path)]
    return ["--pruning", pruning]


@pytest.mark.parametrize("pruning", ["none", "mask_from", *sorted(PRUNING_METHODS)])
@pytest.mark.parametrize("option", _all_options())
def test_an_option_given_reaches_the_config_or_is_refused_by_name(pruning, option, tmp_path):
    argv = [*BASE, *_method_flags(pruning, tmp_path), *_value(option, pruning)]
    try:
        run = parse_args(argv)
        validate_args(run)
    except ValueError as err:  # InputError, or a config's own validation (a ValueError naming the field)
        assert f"--{option}" in str(err) or f"{option} " in str(err) or f"{option}=" in str(err), str(err)
        return
    assert run.pruning is not None, f"--{option} with {pruning} was accepted and dropped"
    if option in SCORE_OPTIONS:
        assert PRUNING_METHODS[run.pruning.pruning_method].trains_scores
        assert getattr(run.training, option) is not None
        return
    default = next(f for f in dataclasses.fields(type(run.pruning)) if f.name == option).default
    assert getattr(run.pruning, option) != default, f"--{option} did not reach the {pruning} config"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--sparsity", "0.5"], "--sparsity would do nothing: --pruning none fine-tunes the whole model without masks"),
        (["--sparsity", "0.5", "--sparsity_scope", "global"], "--sparsity, --sparsity_scope would do nothing"),
        (["--mask_from", "M", "--sparsity", "0.7"], "--pruning none --mask_from M retrains the masks saved there"),
        (["--pruning", "mask", "--block_size", "16"], "--block_size would do nothing with --pruning mask: it is the"),
        (
            ["--pruning", "mask", "--mask_granularity", "neuron", "--mask_classifier", "true"],
            "--mask_classifier would do nothing with --pruning mask: the classifier is masked at",
        ),
        (["--pruning", "mask", "--nm_n", "1"], "--nm_n would do nothing with --pruning mask: they set the pattern"),
        (["--pruning", "mask", "--schedule_end", "0.5"], "the cubic schedule runs only with --initial_sparsity"),
        (["--pruning", "mask", "--mask_init", "soft", "--alpha", "3"], "α sets the hard init only"),
        (["--pruning", "mask", "--mask_init", "soft", "--init_threshold", "0.1"], "φ is set by the hard init only"),
        (["--pruning", "random", "--random_like", "R", "--sparsity", "0.3"], "copies the per-matrix zeros"),
        (["--pruning", "random", "--random_like", "R", "--sparsity_scope", "global"], "copies --random_like"),
    ],
)
def test_options_the_run_would_not_use_are_refused_with_the_reason(flags, message, tmp_path):
    flags = [str(tmp_path) if f in ("M", "R") else f for f in flags]
    message = message.replace("--mask_from M", f"--mask_from {tmp_path}")
    with pytest.raises(InputError, match=re.escape(message)):
        validate_args(parse_args([*BASE, *flags]))


def test_options_that_the_settings_use_are_accepted():
    for flags in [
        ["--pruning", "mask", "--mask_granularity", "block", "--block_size", "16"],
        ["--pruning", "mask", "--mask_granularity", "nm", "--nm_n", "1", "--nm_m", "8", "--sparsity", "0.875"],
        ["--pruning", "mask", "--initial_sparsity", "0.2", "--schedule_end", "0.5"],
        ["--pruning", "mask", "--mask_init", "hard", "--alpha", "3", "--init_threshold", "0.1"],
        ["--pruning", "imp", "--sparsity", "0.3", "--mask_classifier", "false"],
        ["--pruning", "mask", "--sparsity", "0.3", "--sparsity_scope", "global"],
    ]:
        run = parse_args([*BASE, *flags])
        validate_args(run)
        assert isinstance(run.pruning, PruningConfig)
    assert isinstance(run.pruning, ThresholdConfig) and run.pruning.sparsity_scope == "global"


def test_a_step_objectives_options_without_it_are_refused_by_name():
    run = parse_args(["--model_name_or_path", "m", "--output_dir", "o", "--adv_steps", "3", "--adv_lr", "0.1"])
    with pytest.raises(InputError, match=r"--adv_lr, --adv_steps configure --step_objective freelb and would do "):
        validate_args(run)
    with pytest.raises(InputError, match="give them one way"):
        parse_args(["--model_name_or_path", "m", "--output_dir", "o", "--step_objective", "freelb", "--adv_steps", "3",
                    "--step_objective_options", '{"adv_lr": 0.1}'])  # fmt: skip


@dataclass
class GatedConfig(PruningConfig):
    """A method's config with a conditional option: `toy_gate_width` does something only with `toy_gate`."""

    toy_gate: bool = field(default=False, metadata={"help": "Gate the toy masks."})
    toy_gate_width: int = field(default=4, metadata={"help": "Width of the toy gate (with --toy_gate true)."})

    def unused_options(self) -> dict[str, str]:
        unused = super().unused_options()
        if not self.toy_gate:
            unused["toy_gate_width"] = "the width is the toy gate's"
        return unused


class GatedPruning(PruningMethod):
    name = "toy_gated"
    config_class = GatedConfig
    layer_class = MaskedLinear


@pytest.fixture
def gated_method():
    assert "toy_gated" not in PRUNING_METHODS
    register_pruning_method(GatedPruning)
    yield GatedPruning
    unregister_pruning_method("toy_gated")
    assert "toy_gated" not in PRUNING_METHODS


def test_a_registered_methods_conditional_option_is_refused_when_its_settings_leave_it_unused(gated_method):
    with pytest.raises(InputError) as err:
        validate_args(parse_args([*BASE, "--pruning", "toy_gated", "--toy_gate_width", "8"]))
    expected = "--toy_gate_width would do nothing with --pruning toy_gated: the width is the toy gate's. Drop it."
    assert str(err.value) == expected
    # the common conditional options still come from PruningConfig's part
    with pytest.raises(InputError, match=re.escape("--block_size would do nothing with --pruning toy_gated: it is")):
        validate_args(parse_args([*BASE, "--pruning", "toy_gated", "--toy_gate", "true", "--block_size", "16"]))
    run = parse_args([*BASE, "--pruning", "toy_gated", "--toy_gate", "true", "--toy_gate_width", "8"])
    validate_args(run)
    assert isinstance(run.pruning, GatedConfig) and run.pruning.toy_gate_width == 8
