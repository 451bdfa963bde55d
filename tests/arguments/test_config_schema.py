"""run_glue_sparse.py config files against the options: repeated keys, unknown keys with the nearest option, and
values of the wrong type are one `InputError` naming the file and the key (issue 33)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hf_srnets.arguments import parse_args
from hf_srnets.arguments.parser import load_config_file
from hf_srnets.errors import InputError

HEAD = "model_name_or_path: m\ntask: mnli\npruning: mask\n"  # lines 1-3


def parse_config(tmp_path: Path, text: str, name: str = "run.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return parse_args([str(path), "--output_dir", str(tmp_path / "out")])


def test_a_key_given_twice_in_a_yaml_config_is_refused_with_its_lines(tmp_path):
    # yaml.safe_load keeps the last value: this trained at 90% sparsity
    with pytest.raises(InputError, match=r"run\.yaml line 5: key 'sparsity' is given twice \(first at line 4\)"):
        parse_config(tmp_path, HEAD + "sparsity: 0.5\nsparsity: 0.9\n")


def test_a_key_given_twice_in_a_json_config_is_refused(tmp_path):
    text = '{"model_name_or_path": "m", "sparsity": 0.5, "pruning": "mask", "sparsity": 0.9}'
    with pytest.raises(InputError, match=r"run\.json: key 'sparsity' is given twice"):
        parse_config(tmp_path, text, "run.json")


def test_yaml_keeps_safe_load_semantics_otherwise(tmp_path):
    path = tmp_path / "c.yaml"
    # the same key in two mappings, and a merge key whose value the mapping's own key overrides
    path.write_text("a: {x: 1}\nb: {x: 2}\nbase: &base {lr: 1, wd: 0}\nrun:\n  <<: *base\n  lr: 2\nwhen: 2024-01-02\n")
    content = load_config_file(path)
    assert content["a"] == {"x": 1} and content["b"] == {"x": 2}
    assert content["run"] == {"lr": 2, "wd": 0}
    assert str(content["when"]) == "2024-01-02"  # a date, as yaml.safe_load reads it
    (tmp_path / "c.json").write_text(json.dumps({"a": {"x": 1}, "b": {"x": 2}}))
    assert load_config_file(tmp_path / "c.json") == {"a": {"x": 1}, "b": {"x": 2}}


def test_a_key_repeated_inside_a_nested_mapping_is_refused(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("methods:\n  full_ce:\n    loss: ce\n    loss: poe\n")
    with pytest.raises(InputError, match=r"c\.yaml line 4: key 'loss' is given twice \(first at line 3\)"):
        load_config_file(path)


def test_an_unknown_key_names_the_nearest_option(tmp_path):
    with pytest.raises(InputError, match=r"run\.yaml: unknown option 'sparsty' \(did you mean 'sparsity'\?\)"):
        parse_config(tmp_path, HEAD + "sparsty: 0.5\n")


@pytest.mark.parametrize(
    "line, message",
    [
        ("sparsity: [0.5, 0.7]", r"run\.yaml: sparsity: \[0\.5, 0\.7\] is a list, but the option takes one value: a"),
        ("sparsity: {a: 1}", r"run\.yaml: sparsity: \{'a': 1\} is a mapping, but the option takes one value"),
        ("seed: 1.5", r"run\.yaml: seed: 1\.5 is not an integer"),
        ("seed: true", r"run\.yaml: seed: True is not an integer"),
        ("learning_rate: false", r"run\.yaml: learning_rate: False is not a number"),
        ("do_train: 5", r"run\.yaml: do_train: 5 is not true or false"),
        ("train_file: [a, b]", r"run\.yaml: train_file: \['a', 'b'\] is a list, but the option"),
    ],
)
def test_a_value_of_the_wrong_type_names_the_key_value_and_type(tmp_path, line, message):
    with pytest.raises(InputError, match=message):
        parse_config(tmp_path, HEAD + line + "\n")


def test_values_of_the_right_type_still_parse(tmp_path):
    run = parse_config(tmp_path, HEAD + "sparsity: 0\nseed: 3\nlearning_rate: 2\ndo_train: 1\nlogging_steps: 25\n")
    assert run.pruning.sparsity == 0 and run.training.seed == 3 and run.training.learning_rate == 2
    assert run.training.do_train is True and run.training.logging_steps == 25


def test_a_folder_given_as_a_config_file_is_named_as_a_folder(tmp_path):
    # issue 50: run_sweep.py DIR said "config file not found: DIR"
    with pytest.raises(InputError, match=r"config file .* is a folder, not a file: give the path of the file in it"):
        load_config_file(tmp_path)
