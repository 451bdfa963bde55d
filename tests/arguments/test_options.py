"""run_glue_sparse.py's options: every option of today's parser sets its dataclass field to a non-default value
given (typed), every spelling of the old --help still parses, the pruning configs parsed directly, a method
registered at test time gets its flags, options of another method are refused."""

import argparse
import enum
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from transformers.debug_utils import DebugOption

from hf_srnets.arguments import build_parser, parse_args, validate_args
from hf_srnets.arguments.glue_sparse_arguments import RunArguments, loss_options_classes, objective_options_classes
from hf_srnets.arguments.parser import cli_field_names
from hf_srnets.errors import InputError
from hf_srnets.pruning import (
    PRUNING_METHODS,
    MagnitudeConfig,
    MaskedLinear,
    PruningConfig,
    PruningMethod,
    ThresholdConfig,
    register_pruning_method,
    unregister_pruning_method,
)

BASE = ["--model_name_or_path", "m", "--output_dir", "o"]
# every option string of run_glue_sparse.py --help at e6ac851 (before this parser), with a value it accepted
FLAGS_BEFORE = json.loads((Path(__file__).parent / "flags_e6ac851.json").read_text())
# options whose value reaches the run only with other options, or needs a value of its own form:
# dest -> (the flag's values, other options, the parsed value expected in the dataclass)
SPECIAL: dict[str, tuple[list[str], list[str], Any]] = {
    "adv_norm_type": (["linf"], [], "linf"),
    "step_objective": (["freelb"], [], "freelb"),
    "step_objective_options": (['{"adv_lr": 0.1}'], ["--step_objective", "freelb"], {"adv_lr": 0.1}),
    "alpha": (["3.5"], [], 3.5),  # >= 1 (appendix Eq. 1)
    "bf16": (["true"], ["--use_cpu", "true"], True),
    "bf16_full_eval": (["true"], ["--use_cpu", "true"], True),
    "dataloader_prefetch_factor": (["3"], ["--dataloader_num_workers", "2"], 3),
    "cue_rho": (["0.5"], ["--data_transform", "cue"], 0.5),
    "cue_seed": (["3"], ["--data_transform", "cue"], 3),
    "cue_tokens": (["a", "b", "c"], ["--data_transform", "cue"], ["a", "b", "c"]),
    "data_transform": (["cue"], [], "cue"),
    "debug": (["underflow_overflow"], [], [DebugOption.UNDERFLOW_OVERFLOW]),
    "fsdp": (["full_shard"], [], True),  # TrainingArguments turns the deprecated string form into fsdp=True
    "include_num_input_tokens_seen": (["true"], [], "all"),  # TrainingArguments maps True to "all"
    "load_best_model_at_end": (["true"], ["--eval_strategy", "steps", "--save_strategy", "steps"], True),
    "loss": (["poe"], [], "poe"),
    "loss_options": (['{"focal_gamma": 1.5}'], ["--loss", "focal"], {"focal_gamma": 1.5}),
    "pruning": (["l0"], [], "l0"),
    "report_to": (["tensorboard"], [], ["tensorboard"]),
    "sparsity_schedule": (["cubic"], ["--initial_sparsity", "0.2"], "cubic"),
    "wanda_nm": (["2:4"], [], "2:4"),  # N:M
}
# options TrainingArguments refuses in a single process whatever the value (they need DeepSpeed installed or a process
# group), on a CPU or a GPU machine alike: the parser must still read the value, and the refusal must name the
# option's subject. `--tf32` depends on the machine: test_tf32_is_read_then_taken_or_refused_by_what_the_gpu_has.
REFUSED_HERE = {
    "ddp_backend": (["gloo"], "process group"),
    "deepspeed": (["ds.json"], "deepspeed"),
}
# TrainingArguments' dict options argparse cannot read: a config file gives them as mappings
CONFIG_FILE_ONLY = {
    "accelerator_config": ({"split_batches": True}, lambda v: v.split_batches is True),
    "liger_kernel_config": ({"rope": True}, lambda v: v == {"rope": True}),
    "parallelism_config": ({"dp_replicate_size": 1}, lambda v: v == {"dp_replicate_size": 1}),
}


def options() -> dict[str, argparse.Action]:
    """Each option of today's parser (its dest) -> its action, `--no_<flag>` complements left out."""
    actions = build_parser()._actions
    return {a.dest: a for a in actions if a.dest != "help" and not isinstance(a, argparse._StoreFalseAction)}


def non_default(action: argparse.Action) -> tuple[list[str], Any]:
    """A value for `action` other than its default, as typed on the command line and as parsed."""
    kind = getattr(action.type, "__name__", "")
    if action.choices is not None:
        value = next(c for c in action.choices if c != action.default)
        return [value], value
    if kind == "string_to_bool":
        value = not action.default if isinstance(action.default, bool) else True
        return [str(value).lower()], value
    if action.type is int:
        value = (action.default or 0) + 3
        return [str(value)], value
    if action.type is float:
        return ["0.37"], 0.37
    if action.nargs in ("+", "*"):
        return ["v1", "v2"], ["v1", "v2"]
    return [f"v_{action.dest}"], f"v_{action.dest}"


def method_for(dest: str) -> list[str]:
    """`--pruning <method>` for a pruning option (mask training for the common ones), `--step_objective <name>` or
    `--loss <name>` for a step objective's or a loss's option, else nothing."""
    if dest in cli_field_names(PruningConfig) or dest in ("mask_learning_rate", "mask_weight_decay"):
        return ["--pruning", "threshold"]
    for name, method in sorted(PRUNING_METHODS.items()):
        if dest in cli_field_names(method.config_class):
            return ["--pruning", name]
    for name, options_class in objective_options_classes().items():
        if dest in cli_field_names(options_class):
            return ["--step_objective", name]
    for name, options_class in sorted(loss_options_classes().items()):
        if dest in cli_field_names(options_class):
            return ["--loss", name]
    return []


def parsed_value(run: RunArguments, dest: str) -> Any:
    holders = [
        h
        for h in (
            run.model,
            run.data,
            run.training,
            run.pruning,
            run.objective,
            run.loss_options,
            run.transform_options,
        )
        if h is not None and hasattr(h, dest)
    ]
    assert holders, f"no dataclass of the run holds {dest}"
    return getattr(holders[0], dest)


def same(got: Any, expected: Any) -> bool:
    """Equal and of the expected type (an enum member counts as its string value, bool is not an int)."""
    if isinstance(got, enum.Enum) and not isinstance(expected, enum.Enum):
        got = got.value
    return got == expected and type(got) is type(expected)


PARSED = sorted(set(options()) - set(REFUSED_HERE) - set(CONFIG_FILE_ONLY) - {"tf32"})


@pytest.mark.parametrize("dest", PARSED)
def test_each_option_sets_its_field_to_the_value_given(dest):
    action = options()[dest]
    values, expected = non_default(action)
    values, extra, expected = SPECIAL.get(dest, (values, [], expected))
    assert not same(action.default, expected), "the value checked must differ from the default"
    run = parse_args([*BASE, *method_for(dest), *extra, action.option_strings[0], *values])
    got = parsed_value(run, dest)
    assert same(got, expected), f"--{dest} {values}: {got!r} ({type(got).__name__}), expected {expected!r}"


@pytest.mark.parametrize("dest", sorted(REFUSED_HERE))
def test_options_this_machine_cannot_use_are_read_then_refused(dest):
    values, error = REFUSED_HERE[dest]
    parser = build_parser()
    assert parser.given_options([*BASE, f"--{dest}", *values])[dest] == parser._option_string_actions[f"--{dest}"].type(
        values[0]
    )
    with pytest.raises(Exception, match=f"(?i){error}"):
        parse_args([*BASE, f"--{dest}", *values])


def tf32_outcome(monkeypatch, gpu_has_tf32: bool) -> list[bool]:
    """Parse `--tf32 true` on a machine whose GPU has TF32 or not (`gpu_has_tf32`); return the calls TrainingArguments
    made to switch TF32 on, recorded instead of made: a real switch is global to the process and would turn every
    later fp32 matmul of this test worker into TF32."""
    import transformers.training_args as training_args

    switched: list[bool] = []
    monkeypatch.setattr(training_args, "is_torch_tf32_available", lambda: gpu_has_tf32)
    monkeypatch.setattr(training_args, "enable_tf32", switched.append)
    assert build_parser().given_options([*BASE, "--tf32", "true"])["tf32"] is True
    if not gpu_has_tf32:
        with pytest.raises(ValueError, match="tf32 requires Ampere"):
            parse_args([*BASE, "--tf32", "true"])
        return switched
    assert parse_args([*BASE, "--tf32", "true"]).training.tf32 is True
    return switched


@pytest.mark.parametrize("gpu_has_tf32", [False, True], ids=["no_tf32", "ampere_or_newer_gpu"])
def test_tf32_is_read_then_taken_or_refused_by_what_the_gpu_has(monkeypatch, gpu_has_tf32):
    """`--tf32 true` is read on every machine; TrainingArguments takes it (and switches TF32 on) where the GPU has
    TF32 (compute capability >= 8, as on the H200 of issue 34) and refuses it elsewhere (a CPU, a V100)."""
    assert tf32_outcome(monkeypatch, gpu_has_tf32) == ([True] if gpu_has_tf32 else [])


def test_tf32_on_this_machine_follows_what_it_has(monkeypatch):
    """The same, with the answer this machine's transformers gives (True on an Ampere or newer GPU, else False)."""
    from transformers.utils import is_torch_tf32_available

    has = is_torch_tf32_available()
    assert tf32_outcome(monkeypatch, has) == ([True] if has else [])


@pytest.mark.parametrize("dest", sorted(CONFIG_FILE_ONLY))
def test_dict_options_are_read_from_a_config_file(dest, tmp_path):
    mapping, holds = CONFIG_FILE_ONLY[dest]
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({"model_name_or_path": "m", "output_dir": "o", dest: mapping}))
    assert holds(getattr(parse_args([str(config)]).training, dest))


def newer_trainer_options(parser: argparse.ArgumentParser) -> set[str]:
    """The old help's option strings that neither today's parser nor the installed transformers' own
    `TrainingArguments` parser knows: options a newer transformers added (the help was written under 5.24.0; 5.17
    lacks `--activation_checkpointing` and its kwargs, for one)."""
    from transformers import HfArgumentParser, TrainingArguments

    trainer_flags = HfArgumentParser(TrainingArguments)._option_string_actions
    return {f for f in FLAGS_BEFORE if f not in parser._option_string_actions and f not in trainer_flags}


def test_every_spelling_of_the_old_help_still_parses_to_its_option():
    """Each of the 323 option strings of the help at e6ac851 reads the value it accepted then into the same option
    as the option's first spelling (`--no_<flag>` complements give False). Under a transformers older than the one
    the help was written with (5.24.0), the TrainingArguments options it does not have yet are left out; from 5.24.0
    on, none may be."""
    import transformers
    from packaging.version import Version

    parser = build_parser()
    newer = newer_trainer_options(parser)
    assert not newer or Version(transformers.__version__) < Version("5.24.0"), sorted(newer)
    for flag, values in FLAGS_BEFORE.items():
        if flag in newer:
            continue
        action = parser._option_string_actions[flag]
        if action.dest in CONFIG_FILE_ONLY:
            continue
        given = parser.given_options([*BASE, flag, *values])
        if isinstance(action, argparse._StoreFalseAction):
            assert given[action.dest] is False, flag
            continue
        first = parser.given_options([*BASE, action.option_strings[0], *values])
        assert given[action.dest] == first[action.dest], flag


def test_each_option_is_declared_once_and_recorded_fields_are_not_options():
    dests = [a.dest for a in build_parser()._actions if not a.option_strings[0].startswith("--no")]
    assert len(dests) == len(set(dests))
    assert not {"base_fingerprint", "module_shapes", "pruning_method", "tensor_checksums"} & set(dests)


def test_old_spellings_set_the_threshold_config():
    run = parse_args([*BASE, "--pruning", "mask", "--mask_alpha", "3", "--mask-threshold", "0.02", "--sparsity", "0.7"])
    assert isinstance(run.pruning, ThresholdConfig)
    assert (run.pruning.alpha, run.pruning.init_threshold, run.pruning.sparsity) == (3.0, 0.02, 0.7)
    assert run.model.pruning == "mask" and run.pruning.pruning_method == "threshold"


def test_adversarial_is_the_step_objectives_alias_on_the_command_line_and_in_a_config(tmp_path):
    """The Robust Tickets recipes' `--adversarial freelb` / `adversarial:` key set `--step_objective`; a config giving
    both names is refused (which one would win is not obvious)."""
    run = parse_args([*BASE, "--adversarial", "freelb", "--adv_steps", "2"])
    assert run.training.step_objective_settings()[0] == "freelb" and run.objective.adv_steps == 2
    run = parse_args([*BASE, "--adversarial_options", '{"distil_alpha": 0.25}', "--step_objective", "dense_distil"])
    assert run.training.step_objective_settings() == (
        "dense_distil",
        {"distil_alpha": 0.25, "distil_temperature": 2.0, "distil_hidden_weight": 0.0, "teacher_model": None},
    )
    config = tmp_path / "run.yaml"
    config.write_text("model_name_or_path: m\noutput_dir: o\nadversarial: dense_distil\n")
    assert parse_args([str(config)]).training.step_objective == "dense_distil"
    config.write_text("model_name_or_path: m\noutput_dir: o\nadversarial: freelb\nstep_objective: none\n")
    with pytest.raises(InputError, match="adversarial and step_objective are two spellings of the option"):
        parse_args([str(config)])


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
    layer_class = MaskedLinear


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


def test_a_step_objective_registered_at_test_time_gets_its_flags():
    from hf_srnets.objectives import OBJECTIVES, StepObjective, register_objective

    @dataclass
    class WiggleOptions:
        wiggle_size: float = field(default=0.5, metadata={"help": "how much to wiggle"})

    @register_objective
    class Wiggle(StepObjective):
        name = "wiggle"
        options_class = WiggleOptions

    try:
        run = parse_args([*BASE, "--step_objective", "wiggle", "--wiggle_size", "0.25"])
        validate_args(run)
        assert run.objective == WiggleOptions(0.25)
        assert run.training.step_objective_settings() == ("wiggle", {"wiggle_size": 0.25})
    finally:
        OBJECTIVES.pop("wiggle")
    assert "--wiggle_size" not in build_parser().format_help()


@pytest.mark.parametrize(
    ("extra", "taken"),
    [
        (["--ood_file", "mnli=other.tsv"], "the name of the ID dev set"),
        (
            ["--data_transform", "cue", "--ood_file", "cue_agree=other.tsv"],
            "the name of a set --data_transform cue makes",
        ),
    ],
)
def test_an_ood_file_named_as_another_evaluated_set_is_refused_before_any_work(extra, taken):
    """Issue 70 (silent): `--ood_file mnli=FILE` replaced the ID set's eval_mnli_* results and its predictions file
    with the OOD file's; a name the cue transform makes did the same to its set."""
    name = extra[-1].partition("=")[0]
    argv = ["--model_name_or_path", "m", "--output_dir", "o", "--task", "mnli", *extra]
    with pytest.raises(InputError, match=rf"'{name}' is {taken}; this set would overwrite .*--ood_file {name}_ood="):
        validate_args(parse_args(argv))
    validate_args(parse_args([*argv[:-1], f"{name}_ood=other.tsv"]))


def test_a_loss_option_of_the_wrong_type_in_the_python_api_names_the_field():
    """Issue 70 (old corner): `loss_options={"focal_gamma": "2"}` ended in "'>=' not supported between instances of
    'str' and 'int'" from the options' own check; the type is checked first, naming the loss, field and example."""
    from hf_srnets.training.arguments import SRNetTrainingArguments

    with pytest.raises(
        InputError, match=r"^--loss focal: FocalOptions: focal_gamma must be float, got str '2': pass e"
    ):
        SRNetTrainingArguments(output_dir="o", loss="focal", loss_options={"focal_gamma": "2"})
    assert SRNetTrainingArguments(output_dir="o", loss="focal", loss_options={"focal_gamma": 2}).loss == "focal"


def test_a_deepspeed_config_that_is_not_json_or_a_machine_without_gpu_is_one_line(tmp_path, monkeypatch):
    """Issue 70: a cut --deepspeed JSON file failed in transformers naming neither the file nor the flag, and
    --deepspeed without --use_cpu on a machine with no GPU ended in "No module named 'mpi4py'"."""
    import torch

    from hf_srnets.training.arguments import SRNetTrainingArguments

    cut = tmp_path / "zero2.json"
    cut.write_text('{"zero_optimization": {"stage": 2,')
    with pytest.raises(InputError, match=rf"--deepspeed {cut} is not a valid JSON config \(.*line 1"):
        SRNetTrainingArguments(output_dir=str(tmp_path / "o"), deepspeed=str(cut), use_cpu=True)
    good = tmp_path / "good.json"
    good.write_text('{"zero_optimization": {"stage": 2}, "train_micro_batch_size_per_gpu": "auto"}')
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(InputError, match=r"on a machine without a GPU: add --use_cpu --ddp_backend gloo"):
        SRNetTrainingArguments(output_dir=str(tmp_path / "o"), deepspeed=str(good))
