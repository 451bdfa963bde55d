"""run_glue_sparse.py's options: every flag of today's --help, the pruning configs parsed directly, a method
registered at test time gets its flags, options of another method are refused."""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from torch import nn

from hf_srnets.cli import build_parser, parse_args, validate_args
from hf_srnets.pruning import (
    MagnitudeConfig,
    PruningConfig,
    PruningMethod,
    ThresholdConfig,
    register_pruning_method,
    unregister_pruning_method,
)

BASE = ["--model_name_or_path", "m", "--output_dir", "o"]
# every option string of run_glue_sparse.py --help at e6ac851 (before this parser), with a value it accepted
FLAGS_BEFORE = json.loads((Path(__file__).parent / "flags_e6ac851.json").read_text())


@pytest.mark.parametrize("flag", sorted(FLAGS_BEFORE))
def test_every_flag_of_the_old_help_still_parses(flag):
    parser = build_parser()
    action = parser._option_string_actions[flag]
    if action.dest in ("liger_kernel_config", "parallelism_config"):
        pytest.skip("TrainingArguments' dict/ParallelismConfig options: argparse cannot read them, before or now")
    given = parser.given_options([*BASE, flag, *FLAGS_BEFORE[flag]])
    assert action.dest in given


def test_each_option_is_declared_once_and_recorded_fields_are_not_options():
    dests = [a.dest for a in build_parser()._actions if not a.option_strings[0].startswith("--no")]
    assert len(dests) == len(set(dests))
    assert not {"base_fingerprint", "module_shapes", "pruning_method", "tensor_checksums"} & set(dests)


def test_old_spellings_set_the_threshold_config():
    run = parse_args([*BASE, "--pruning", "mask", "--mask_alpha", "3", "--mask-threshold", "0.02", "--sparsity", "0.7"])
    assert isinstance(run.pruning, ThresholdConfig)
    assert (run.pruning.alpha, run.pruning.init_threshold, run.pruning.sparsity) == (3.0, 0.02, 0.7)
    assert run.model.pruning == "mask" and run.pruning.pruning_method == "threshold"


@pytest.mark.parametrize(("pruning", "rewind"), [("imp", False), ("imp-rw", True), ("magnitude", False)])
def test_imp_spellings_give_the_magnitude_config(pruning, rewind):
    run = parse_args([*BASE, "--pruning", pruning, "--imp_prune_ratio", "0.2", "--sparsity", "0.4"])
    assert isinstance(run.pruning, MagnitudeConfig)
    assert (run.pruning.imp_prune_ratio, run.pruning.rewind, run.pruning.sparsity) == (0.2, rewind, 0.4)


def test_common_options_parse_without_pruning_and_are_refused_as_unused():
    run = parse_args([*BASE, "--mask_from", "masks"])
    validate_args(run)
    assert run.pruning is None and run.model.mask_from == "masks"
    run = parse_args([*BASE, "--sparsity", "0.7", "--mask_from", "masks", "--mask_classifier", "false"])
    assert run.given["sparsity"] == 0.7
    with pytest.raises(ValueError, match=re.escape("--mask_classifier, --sparsity would do nothing")):
        validate_args(run)


@pytest.mark.parametrize(
    ("flags", "error"),
    [
        (["--pruning", "imp", "--mask_init", "soft"], "--mask_init configure mask training"),
        (["--pruning", "mask", "--imp_interval", "0.2"], "--imp_interval configure --pruning magnitude"),
        (["--imp_prune_ratio", "0.2"], "would do nothing with --pruning none: use --pruning magnitude"),
        (["--pruning", "imp", "--mask_learning_rate", "1e-3"], "--mask_learning_rate configure --pruning l0 / thresh"),
        (["--pruning", "imp", "--mask_weight_decay", "1e-6"], "--mask_weight_decay configure --pruning l0 / thresh"),
        (["--pruning", "mask", "--l0_lambda", "0.1"], "--l0_lambda configure --pruning l0"),
        (["--pruning", "l0", "--random_like", "x"], "--random_like configure --pruning random"),
    ],
)
def test_an_option_of_another_method_is_refused_naming_it(flags, error):
    with pytest.raises(ValueError, match=re.escape(error)):
        validate_args(parse_args([*BASE, *flags]))


def test_unknown_pruning_lists_the_choices():
    with pytest.raises(ValueError, match="threshold"):
        parse_args([*BASE, "--pruning", "bogus"])


@dataclass
class ToyConfig(PruningConfig):
    toy_keep: float = field(default=0.25, metadata={"help": "toy option", "aliases": ["--toy_old"]})


class ToyMethod(PruningMethod):
    name = "toy_cli"
    config_class = ToyConfig
    layer_class = nn.Identity


@pytest.fixture
def toy_method():
    register_pruning_method(ToyMethod)
    yield ToyMethod
    unregister_pruning_method(ToyMethod.name)


def test_a_method_registered_at_test_time_gets_its_flags(toy_method, tmp_path):
    run = parse_args([*BASE, "--pruning", "toy_cli", "--toy-old", "0.5", "--sparsity", "0.3"])
    assert isinstance(run.pruning, ToyConfig) and (run.pruning.toy_keep, run.pruning.sparsity) == (0.5, 0.3)
    config = tmp_path / "toy.yaml"
    config.write_text("model_name_or_path: m\noutput_dir: o\npruning: toy_cli\ntoy_old: 0.75\n")
    assert parse_args([str(config)]).pruning.toy_keep == 0.75
    with pytest.raises(ValueError, match=re.escape("--toy_keep configure --pruning toy_cli")):
        validate_args(parse_args([*BASE, "--pruning", "mask", "--toy_keep", "0.1"]))


def test_an_unregistered_method_has_no_flags():
    options = {o for a in build_parser()._actions for o in a.option_strings}
    assert "--toy_keep" not in options and "--imp_prune_ratio" in options and "--mask_alpha" in options
