"""Sweep recipes against their schema (`hf_srnets.experiments.sweep_recipe`): unknown keys with the nearest name,
repeated keys and values of the wrong type are one `InputError` naming the file and the key, before any run starts
(issue 33); every recipe of the repository still loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from hf_srnets.arguments import parse_args
from hf_srnets.commands import sweep as run_sweep
from hf_srnets.errors import InputError
from hf_srnets.experiments.sweep_recipe import load_recipe

ROOT = Path(__file__).resolve().parents[2]
METHODS = "methods:\n  full_ce:\n    pruning: none\n    loss: ce\n  mask_poe:\n    pruning: mask\n    loss: poe\n"


def recipe_text(tmp_path: Path, **lines: str) -> str:
    """A valid recipe whose top-level lines `lines` replace or add to (a value of None: the key left out)."""
    keys = {
        "output_dir": str(tmp_path / "out"),
        "sparsities": "[0.5]",
        "seeds": "[1, 2]",
        "metrics": "[eval_mnli_accuracy]",
        "common": "{task: mnli, model_name_or_path: m, do_train: true}",
    }
    keys.update(lines)
    return "".join(f"{k}: {v}\n" for k, v in keys.items() if v is not None) + METHODS


def sweep_refuses(tmp_path: Path, text: str, message: str) -> None:
    """The sweep of `text` raises `InputError` matching `message` and starts no run."""
    path = tmp_path / "recipe.yaml"
    path.write_text(text)
    calls: list[list[str]] = []
    with pytest.raises(InputError, match=message):
        run_sweep.main([str(path)], runner=calls.append)
    assert calls == []


def test_a_valid_recipe_runs_every_planned_run(tmp_path):
    path = tmp_path / "recipe.yaml"
    path.write_text(recipe_text(tmp_path, reference="full_ce"))
    calls: list[list[str]] = []
    run_sweep.main([str(path)], runner=calls.append)
    assert len(calls) == 4  # full_ce at 0 and mask_poe at 0.5, seeds 1 and 2


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("seedz", "[3]", r"recipe\.yaml: unknown key 'seedz' \(did you mean 'seeds'\?\); the keys are baseline, "),
        ("referense", "full_ce", r"recipe\.yaml: unknown key 'referense' \(did you mean 'reference'\?\)"),
        ("baseline_method", "full_ce", r"unknown key 'baseline_method' \(did you mean 'baseline'\?\)"),
    ],
)
def test_an_unknown_key_is_refused_with_the_nearest_name(tmp_path, key, value, message):
    sweep_refuses(tmp_path, recipe_text(tmp_path, **{key: value}), message)


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("sparsities", "half", r"recipe\.yaml: sparsities: 'half' is not a list of numbers, e\.g\. \[0\.3, 0\.5"),
        ("sparsities", "0.5", r"recipe\.yaml: sparsities: 0\.5 is not a list of numbers"),
        ("sparsities", "[0.5, [0.7]]", r"recipe\.yaml: sparsities: \[0\.7\] is not a number; give a list of numbers"),
        ("seeds", '[1.5, "two"]', r"recipe\.yaml: seeds: 1\.5 is not an integer; give a list of integers"),
        ("seeds", "[1, two]", r"recipe\.yaml: seeds: 'two' is not an integer"),
        ("metrics", "eval_mnli_accuracy", r"recipe\.yaml: metrics: 'eval_mnli_accuracy' is not a list of strings"),
        ("output_dir", "[a, b]", r"recipe\.yaml: output_dir: \['a', 'b'\] is not a string"),
        ("checkpoint_steps", "[100]", r"recipe\.yaml: checkpoint_steps: \[100\] is not an integer"),
        ("keep_checkpoints", "sometimes", r"recipe\.yaml: keep_checkpoints: 'sometimes' is not true or false"),
        ("reference", "[full_ce]", r"recipe\.yaml: reference: \['full_ce'\] is not a string"),
        ("common", "[task, mnli]", r"recipe\.yaml: common: \['task', 'mnli'\] is not a mapping"),
    ],
)
def test_a_value_of_the_wrong_type_names_the_key_value_and_type(tmp_path, key, value, message):
    sweep_refuses(tmp_path, recipe_text(tmp_path, **{key: value}), message)


@pytest.mark.parametrize(
    "method_lines, message",
    [
        # an option of run_glue_sparse.py misspelt in the second method: refused before the first method's runs
        ("    mask_lerning_rate: 0.01\n", r"methods\.mask_poe: unknown option 'mask_lerning_rate' \(did you mean "),
        ("    learning_rate: [1.0e-4, 2.0e-4]\n", r"methods\.mask_poe: learning_rate: \[0\.0001, 0\.0002\] is a list"),
        ("    max_train_samples: 1.5\n", r"methods\.mask_poe: max_train_samples: 1\.5 is not an integer"),
        ("    sparsities: half\n", r"methods\.mask_poe\.sparsities: 'half' is not a list of numbers"),
        ("    sparsity: 0.5\n", r"methods\.mask_poe: sparsity is set by the sweep for every run; give the recipe's"),
        ("    seed: 7\n", r"methods\.mask_poe: seed is set by the sweep for every run"),
        ("    loss: ce\n", r"recipe\.yaml line 13: key 'loss' is given twice \(first at line 12\)"),
    ],
)
def test_a_method_entry_is_checked_before_any_run_naming_the_method(tmp_path, method_lines, message):
    sweep_refuses(tmp_path, recipe_text(tmp_path) + method_lines, message)


def test_common_options_are_checked_too(tmp_path):
    common = "{task: mnli, model_name_or_path: m, lerning_rate: 0.1}"
    sweep_refuses(tmp_path, recipe_text(tmp_path, common=common), r"common: unknown option 'lerning_rate' \(did you")


def test_a_method_that_is_not_a_mapping_is_refused(tmp_path):
    text = recipe_text(tmp_path) + "  imp_poe: imp\n"
    sweep_refuses(tmp_path, text, r"recipe\.yaml: methods\.imp_poe: 'imp' is not a mapping of run_glue_sparse\.py")


def test_a_key_given_twice_at_the_top_is_refused(tmp_path):
    text = recipe_text(tmp_path) + "seeds: [3]\n"  # yaml.safe_load would keep [3]
    sweep_refuses(tmp_path, text, r"recipe\.yaml line 13: key 'seeds' is given twice \(first at line 3\)")


def test_placeholders_are_left_to_the_runs_but_their_keys_are_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("N_TRAIN", "100")
    text = recipe_text(tmp_path) + "    max_train_samples: $N_TRAIN\n    output_dir_of: '{output_dir}/x'\n"
    sweep_refuses(tmp_path, text, r"methods\.mask_poe: unknown option 'output_dir_of'")
    path = tmp_path / "recipe.yaml"
    path.write_text(recipe_text(tmp_path) + "    max_train_samples: $N_TRAIN\n")
    calls: list[list[str]] = []
    run_sweep.main([str(path)], runner=calls.append)
    assert ["--max_train_samples", "100"] == calls[-1][calls[-1].index("--max_train_samples") :][:2]


SWEEP_RECIPES = sorted(p for p in (ROOT / "examples").glob("*.yaml") if "\nmethods:" in p.read_text())
RUN_CONFIGS = sorted(
    p for p in [*(ROOT / "examples").glob("*.yaml"), *(ROOT / "recipes").rglob("*.yaml")] if p not in SWEEP_RECIPES
)


@pytest.mark.parametrize("path", SWEEP_RECIPES, ids=lambda p: p.name)
def test_every_sweep_recipe_of_the_repository_loads(path):
    assert load_recipe(str(path))["methods"]


@pytest.mark.parametrize("path", RUN_CONFIGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_run_config_of_the_repository_loads(path, tmp_path):
    run = parse_args([str(path), "--model_name_or_path", "m", "--output_dir", str(tmp_path / "out")])
    assert run.data.task


@pytest.mark.parametrize("value", ["{output_dir}/seed{Seed}", "run_{lr}"])
def test_an_unknown_placeholder_is_refused_before_any_run(tmp_path, value):
    """Issue 70: a misspelt or unknown placeholder was found only once earlier runs had trained."""
    text = recipe_text(tmp_path) + f'    teacher_model: "{value}"\n'
    name = value.rsplit("{", 1)[1].rstrip("}")
    sweep_refuses(tmp_path, text, rf"methods\.mask_poe\.teacher_model: \{{{name}\}} is no placeholder of a sweep")


def test_a_literal_dollar_is_written_twice_and_reaches_the_run_as_one(tmp_path, monkeypatch):
    """Issue 70: a `$` in a folder name or a regex was taken for an unset environment variable, with no escape; `$$`
    is a literal `$` (and `$VAR` still fills in)."""
    monkeypatch.setenv("SRNETS_TEST_PART", "value")
    path = tmp_path / "recipe.yaml"
    path.write_text(
        recipe_text(tmp_path) + '    target_modules: ".*(query|key)$$"\n    hub_model_id: "a$SRNETS_TEST_PART"\n'
    )
    calls: list[list[str]] = []
    run_sweep.main([str(path)], runner=calls.append)
    argv = next(call for call in calls if "--target_modules" in call)
    assert argv[argv.index("--target_modules") + 1] == ".*(query|key)$"
    assert argv[argv.index("--hub_model_id") + 1] == "avalue"


def test_a_dollar_in_the_sweeps_own_folder_is_a_path_not_a_variable(tmp_path):
    """Issue 70: `--output_dir price$4` was taken for an unset variable `$4` wherever a value named {output_dir}."""
    out = tmp_path / "price$4"
    path = tmp_path / "recipe.yaml"
    path.write_text(recipe_text(tmp_path, output_dir=f'"{out}"') + '    teacher_model: "{output_dir}/teacher"\n')
    calls: list[list[str]] = []
    run_sweep.main([str(path)], runner=calls.append)
    argv = next(call for call in calls if "--teacher_model" in call)
    assert argv[argv.index("--teacher_model") + 1] == f"{out}/teacher"
