"""The example recipes and scripts: every `examples/*.yaml` parses with the parser that runs it (a sweep recipe's
every planned run with run_glue_sparse.py's parser, through `run_sweep.planned_runs`; a run config directly) and
passes `validate_args`; every `bench/*.py` and `examples/*.py` script answers `--help` (or imports, if it takes no
options); every example shell script is valid bash and passes each project script only options it has (the
suite does not run them: they take hours). The lists are globs, so a new file is covered. Each script's run to
completion on tiny settings: `test_script_smoke_runs.py`."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from prewarmed import run_python

from hf_srnets.arguments import bias_model_arguments, parse_args, validate_args
from hf_srnets.bias.kinds import get_bias_model, uses_word_vectors
from hf_srnets.experiments import sweep_runs

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_CONFIGS = sorted(p.name for p in (ROOT / "examples").glob("*.yaml"))
SCRIPTS = sorted(str(p.relative_to(ROOT)) for d in ("bench", "examples") for p in (ROOT / d).glob("*.py"))
SHELL_SCRIPTS = sorted(p.name for p in (ROOT / "examples").glob("*.sh"))


def fields(runs: list[sweep_runs.PlannedRun]) -> list[tuple[str, float, int, list[str]]]:
    """(method, sparsity, seed, arguments) of each planned run."""
    return [(r.method, r.sparsity, r.seed, list(r.argv)) for r in runs]


def is_sweep_recipe(config: dict) -> bool:
    return "methods" in config


def planned(name: str, monkeypatch) -> tuple[dict, list]:
    """A sweep recipe and its planned runs, with the environment its shell script sets."""
    monkeypatch.setenv("MINILM", "/models/minilm")
    monkeypatch.setenv("DATA_DIR", "/data")
    monkeypatch.setenv("TEACHER", "/models/teacher")  # structured_large_minilm_mnli.sh
    recipe = yaml.safe_load((ROOT / "examples" / name).read_text())
    return recipe, sweep_runs.planned_runs(recipe)


def test_the_globs_find_the_examples():
    assert {"structured_minilm_mnli.yaml", "rmc_minilm_mnli.yaml", "mnli_full_ce_bert_base.yaml"} <= set(
        EXAMPLE_CONFIGS
    )
    assert "bench/bench_inference.py" in SCRIPTS and "examples/structured_table.py" in SCRIPTS


@pytest.mark.parametrize("name", EXAMPLE_CONFIGS)
def test_every_example_config_parses_and_validates(name, monkeypatch):
    config = yaml.safe_load((ROOT / "examples" / name).read_text())
    if not is_sweep_recipe(config):
        run = parse_args([str(ROOT / "examples" / name)])
        validate_args(run)
        assert run.model.model_name_or_path == config["model_name_or_path"] and run.data.task == config["task"]
        return
    recipe, runs = planned(name, monkeypatch)
    full = [m for m, args in recipe["methods"].items() if sweep_runs.is_full_model(args)]
    assert len(runs) == len(recipe["seeds"]) * sum(
        1 if m in full else len(args.get("sparsities", recipe["sparsities"])) for m, args in recipe["methods"].items()
    )
    for method, sparsity, seed, argv in fields(runs):
        run = parse_args(argv)
        validate_args(run)
        assert run.training.seed == seed and run.training.output_dir.startswith(recipe["output_dir"])
        unpruned = method in full or sweep_runs.starts_from_sparse_model(recipe["methods"][method])
        assert (run.pruning is None) == unpruned, method
        if run.pruning is not None:
            assert run.pruning.sparsity == sparsity, method
        assert "$" not in " ".join(argv), "every environment variable is filled in"


def test_structured_recipe_runs_each_granularity_at_each_sparsity(monkeypatch):
    _, runs = planned("structured_minilm_mnli.yaml", monkeypatch)
    searched = set()
    for method, sparsity, _seed, argv in fields(runs):
        run = parse_args(argv)
        if run.pruning is not None:
            searched.add((run.pruning.mask_granularity, sparsity))
            assert run.model.save_compact and run.model.model_name_or_path.endswith("full_ce/s0/seed42"), method
            assert run.data.bias_predictions.endswith("bias/bias_train.jsonl"), method
    granularities = ("element", "block", "neuron", "head")
    assert searched == {(g, s) for g in granularities for s in (0.5, 0.7)}


def test_structured_weights_recipe_runs_three_recipes_per_unit_and_recovers_each_search(monkeypatch):
    """Issue 48: (a) frozen, (b) weights (train_weights, the teacher loaded), (c) (b)'s compact model fine-tuned
    without pruning, with distillation, from the search of its own sparsity and seed."""
    _, runs = planned("structured_weights_large_minilm_mnli.yaml", monkeypatch)
    parsed = {(m, sp, seed): parse_args(argv) for m, sp, seed, argv in fields(runs)}
    for (method, sparsity, seed), run in parsed.items():
        if method.endswith("_recovered"):
            search = method.replace("_recovered", "_weights")
            assert run.pruning is None and run.training.do_train
            assert run.model.model_name_or_path == f"{parsed[(search, sparsity, seed)].training.output_dir}/merged"
            assert run.training.step_objective == "dense_distil"
            assert run.training.step_objective_options["teacher_model"] == "/models/teacher"
        elif method.endswith("_weights"):
            assert run.pruning.train_weights and run.pruning.weight_learning_rate == 3e-5 and run.model.save_compact
            assert run.training.step_objective_options["teacher_model"] == "/models/teacher"
        elif method in ("ffn", "hybrid", "element"):
            assert not run.pruning.train_weights and run.pruning.mask_granularity == method
            assert run.training.step_objective_options["teacher_model"] is None  # the masks-off model teaches
    searched = {(m, sp) for m, sp, _ in parsed if m != "dense"}
    units = ("ffn", "hybrid")
    recipes = [f"{u}{suffix}" for u in units for suffix in ("", "_weights", "_recovered")] + ["element"]
    assert searched == {(m, sp) for m in recipes for sp in (0.5, 0.7)}
    assert {seed for *_, seed in parsed} == {42, 43, 44}


def test_structured_students_recipe_gives_every_row_the_same_steps_and_its_students(monkeypatch):
    """Issue 69: every trained row 3 epochs of the 9,832 pairs (924 steps at batch 32), a search of 2 epochs with its
    1-epoch recovery counting as one row; the recoveries start from their own search's model (issue 48's compact
    model, the l0 search's ticket with its trained weights); the new method is l0 at hybrid with the Lagrangian and
    trained weights; the students are dense runs of the teacher with fewer layers or narrower FFNs."""
    recipe, runs = planned("structured_students_large_minilm_mnli.yaml", monkeypatch)
    parsed = {(m, sp, seed): parse_args(argv) for m, sp, seed, argv in fields(runs)}
    epochs = {m: run.training.num_train_epochs for (m, _, _), run in parsed.items() if run.training.do_train}
    for search, recovery in (("hybrid_weights", "hybrid_recovered"), ("cofi", "cofi_recovered")):
        assert epochs.pop(search) + epochs.pop(recovery) == 3
    assert set(epochs.values()) == {3}, epochs
    assert set(epochs) == {"element", "hybrid_weights_924", "student_l3", "student_l2", "student_l3_ffn768"}
    for (method, sparsity, seed), run in parsed.items():
        if method == "hybrid_recovered":
            assert (
                run.model.model_name_or_path
                == f"{parsed[('hybrid_weights', sparsity, seed)].training.output_dir}/merged"
            )
        elif method == "cofi_recovered":
            assert (
                run.model.mask_from == parsed[("cofi", sparsity, seed)].training.output_dir and run.model.save_compact
            )
            assert run.model.model_name_or_path == "/models/teacher" and run.pruning is None
        elif method == "cofi":
            config = run.pruning
            assert (config.pruning_method, config.mask_granularity, config.l0_constraint) == (
                "l0",
                "hybrid",
                "lagrangian",
            )
            assert config.train_weights and config.sparsity == sparsity
        elif method.startswith("student"):
            assert run.pruning is None and run.model.student_layers in (2, 3) and sparsity == 0
            assert run.training.step_objective_options["teacher_model"] == "/models/teacher"
    assert parsed[("student_l3_ffn768", 0, 42)].model.student_ffn_size == 768
    assert {seed for *_, seed in parsed} == {42, 43, 44} and recipe["sparsities"] == [0.5, 0.7]


def test_the_125k_recipe_searches_every_row_from_dense_ce_with_the_same_steps(monkeypatch):
    """Issue 72, deliverable 4: the mask searches (ce, PoE with the overlap bias model), one-shot Wanda and issue 48's
    structured chain all start from dense_ce's saved model (seed 42) at every seed; each trained row takes 1,954
    steps (the structured search and its recovery together), one-shot one; the structured chain at 50% only."""
    recipe, _ = planned("nli125k_minilm_mnli.yaml", monkeypatch)
    runs = sweep_runs.planned_runs({**recipe, "seeds": [42, 43, 44]})  # SEEDS="42 43 44" in its shell script
    teacher = f"{recipe['output_dir']}/dense_ce/s0/seed42"
    steps: dict[tuple[str, float, int], int] = {}
    for method, sparsity, seed, argv in fields(runs):
        if method.startswith("dense"):
            continue
        flags = dict(zip(argv[::2], argv[1::2]))
        start = flags["--model_name_or_path"]
        if method == "hybrid_recovered":
            assert start == f"{recipe['output_dir']}/hybrid_weights/s{sparsity:g}/seed{seed}/merged"
        else:
            assert start == teacher, method
        assert flags["--loss"] == ("poe" if "poe" in method or "hybrid" in method else "ce"), method
        assert flags.get("--bias_model") == ("overlap" if flags["--loss"] == "poe" else None), method
        if method.startswith("hybrid"):
            assert flags["--teacher_model"] == teacher and sparsity == 0.5
        row = ("hybrid" if method.startswith("hybrid") else method, sparsity, seed)  # a chain is one row
        steps[row] = steps.get(row, 0) + int(flags["--max_steps"])
    assert {key: value for key, value in steps.items() if key[0] != "wanda_oneshot"} == {
        (method, sparsity, seed): 1954
        for method, sparsities in (("mask_ce", (0.3, 0.5, 0.7)), ("mask_poe", (0.3, 0.5, 0.7)), ("hybrid", (0.5,)))
        for sparsity in sparsities
        for seed in (42, 43, 44)
    }
    assert {value for key, value in steps.items() if key[0] == "wanda_oneshot"} == {1}


@pytest.mark.parametrize("name", ["cue_minilm_mnli.yaml", "hard_minilm_mnli.yaml"])
def test_issue_52_recipes_search_on_each_dense_model_and_prune_it_one_shot(name, monkeypatch):
    """Issue 52: the masks are searched on dense_ce's frozen weights (Win-win's claim that the biased model holds
    SRNets) and, with PoE, on dense_poe's (against the one-shot pruning of the same dense model); one-shot pruning
    starts from the dense model its name says, the structured SRNets train their weights with distillation from the
    model they start from, every PoE run uses the testbed's bias model; three seeds."""
    _, runs = planned(name, monkeypatch)
    parsed = {(m, sp, seed): parse_args(argv) for m, sp, seed, argv in fields(runs)}
    out = "outputs/" + name.removesuffix(".yaml")
    bias = {"cue_minilm_mnli.yaml": ("cue", None), "hard_minilm_mnli.yaml": (None, f"{out}/bias/bias_train.jsonl")}
    for (method, sparsity, seed), run in parsed.items():
        source = (
            f"{out}/dense_poe_long/s0/seed{seed}"  # issue 72: the runs made from the PoE model trained to its peak
            if method.endswith("_long") and method != "dense_poe_long"
            else f"{out}/dense_poe/s0/seed{seed}"
            if method.endswith("_from_poe") or method in ("magnitude_poe", "wanda_poe")
            else f"{out}/dense_ce/s0/seed{seed}"
        )
        assert run.training.train_sampling_strategy == "group_by_length", method  # ~2x fewer padded tokens
        if method.startswith("dense_"):
            assert run.pruning is None and run.model.model_name_or_path == "/models/minilm"
            continue
        assert run.model.model_name_or_path == source, method
        poe = method.startswith(("dense_poe", "mask_poe", "hybrid"))
        assert run.training.loss == ("poe" if poe else "ce"), method
        poe_bias = bias[name] if run.training.loss == "poe" else (None, None)
        assert (run.data.bias_model, run.data.bias_predictions) == poe_bias, method
        if method.startswith("mask_"):
            assert run.training.do_train and not run.pruning.train_weights and run.pruning.mask_granularity == "element"
        if method.startswith("hybrid"):
            assert run.pruning.train_weights and run.pruning.mask_granularity == "hybrid" and sparsity == 0.5
            assert run.training.step_objective_options["teacher_model"] == source, method
    methods = {m for m, *_ in parsed}
    assert {
        "dense_ce",
        "dense_poe",
        "mask_ce",
        "mask_poe",
        "mask_poe_from_poe",
        "magnitude_ce",
        "wanda_ce",
        "magnitude_poe",
        "wanda_poe",
        "hybrid_poe",
    } <= methods
    assert {s for m, s, _ in parsed if m.startswith(("mask_", "magnitude", "wanda"))} == {0.3, 0.5, 0.7}
    assert {seed for *_, seed in parsed} == {42, 43, 44}


def test_rmc_recipe_compares_the_losses_on_the_same_teacher(monkeypatch):
    _, runs = planned("rmc_minilm_mnli.yaml", monkeypatch)
    runs = {method: parse_args(argv) for method, _sparsity, _seed, argv in fields(runs)}
    imp = {m: r for m, r in runs.items() if m.startswith("imp_")}
    assert sorted(r.training.loss for r in imp.values()) == ["ce", "distil", "focal", "jtt", "rmc", "smooth"]
    assert all(r.pruning.imp_interval == 0.25 for r in imp.values())
    assert runs["heads20_ce"].model.prune_heads == 0.2 and runs["heads20_ce"].pruning is None
    teachers = {r.model.model_name_or_path for r in runs.values()}
    assert teachers == {"outputs/rmc_minilm_mnli/teacher"}, "every method starts from the teacher"
    assert runs["imp_rmc"].data.sample_difficulty == "outputs/rmc_minilm_mnli/difficulty/difficulty.jsonl"


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_every_bench_and_example_script_answers_help_or_imports(script):
    path = ROOT / script
    if "ArgumentParser" not in path.read_text(encoding="utf-8"):  # a worker another script starts
        spec = importlib.util.spec_from_file_location(path.stem, path)
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
        return
    result = run_python(path, "--help", cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("usage:"), result.stdout[:500]


@pytest.mark.parametrize("name", SHELL_SCRIPTS)
def test_every_example_shell_script_is_valid_bash(name):
    result = subprocess.run(["bash", "-n", str(ROOT / "examples" / name)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def script_body(path: Path) -> str:
    """A shell script's text with its comments stripped (test_docs.py's reading), line numbers kept."""
    import test_docs as docs

    return "\n".join(docs.strip_comment(line) for line in path.read_text(encoding="utf-8").splitlines())


def shell_script_calls(path: Path) -> list:
    """The project-script calls of one example shell script (test_docs.py's reading of a bash block, with the arrays
    this script defines), each with its flags."""
    import test_docs as docs

    body = script_body(path)
    arrays: dict[str, list[list[str]]] = {}
    for match in docs.ARRAY_DEFINITION.finditer(body):
        arrays.setdefault(match[1], []).append(docs.shell_words(match[2], path.name))
    calls = []
    for line, text in docs.logical_lines(1, body):
        where = f"examples/{path.name}:{line}"
        for command in docs.commands(docs.shell_words(text, where)):
            calls += docs._script_calls(command, where, arrays)
    return calls


@pytest.mark.slow
def test_every_flag_in_the_example_shell_scripts_is_an_option_of_its_script():
    """The shell scripts run for hours, so the suite does not run them; a renamed option they pass fails here."""
    import test_docs as docs

    calls = [call for name in SHELL_SCRIPTS for call in shell_script_calls(ROOT / "examples" / name)]
    assert {"run_glue_sparse.py", "run_sweep.py", "examples/structured_table.py"} <= {call.script for call in calls}
    scripts = sorted({call.script for call in calls})
    env = {**os.environ, "OMP_NUM_THREADS": "1", "COLUMNS": "120", "HF_HUB_OFFLINE": "1"}
    result = subprocess.run(
        [sys.executable, docs.__file__, *scripts], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    options = {script: docs.option_strings(text) for script, text in json.loads(result.stdout).items()}
    unknown = [
        f"{call.where}: {call.script} has no option {flag}" + (f" (from {origin})" if origin else "")
        for call in calls
        for flag, origin in call.flags
        if flag not in options[call.script]
    ]
    assert not unknown, "flags in examples/*.sh that the scripts do not accept:\n" + "\n".join(unknown)


def test_every_example_recipe_that_fits_a_bias_model_names_its_vectors_and_c():
    """run_bias_model.py's defaults (the vectors found, C chosen on held-out rows) may change between versions and
    machines, and p_b with them: results/sweep_minilm_mnli moved by up to 12 points of HANS entailment when they did.
    A recipe behind committed results names both (the vectors where its bias model uses any: run_bias_model.py
    refuses --vectors for one that does not), so running it again fits the same bias model."""
    calls = [
        call
        for name in SHELL_SCRIPTS
        for call in shell_script_calls(ROOT / "examples" / name)
        if call.script == "run_bias_model.py"
    ]
    assert len(calls) >= 7, [call.where for call in calls]  # every MNLI recipe with PoE/RMC runs

    def pinned(call) -> bool:
        flags, kind = {flag for flag, _ in call.flags}, call_value(call, "--bias_model")
        needs_vectors = kind is None or uses_word_vectors(get_bias_model(kind))
        return "--C" in flags and ("--vectors" in flags or not needs_vectors)

    unpinned = [call.where for call in calls if not pinned(call)]
    assert not unpinned, f"run_bias_model.py without --C, or without the --vectors its bias model uses: {unpinned}"
    assert any(call_value(call, "--bias_model") == "hypothesis" for call in calls)  # one that uses no vectors
    for call in calls:  # and run_bias_model.py takes the call's options together (its checks before any work)
        words = call_words(call)
        bias_model_arguments.parse_args(words[words.index("run_bias_model.py") + 1 :])


def call_words(call) -> list[str]:
    """The words of the shell-script call `call` (its logical line, comments stripped)."""
    import test_docs as docs

    name, line = call.where.removeprefix("examples/").rsplit(":", 1)
    body = script_body(ROOT / "examples" / name)
    return docs.shell_words(dict(docs.logical_lines(1, body))[int(line)], call.where)


def call_value(call, flag: str) -> str | None:
    """The word after `flag` in the shell-script call `call`, None without the flag."""
    words = call_words(call)
    return words[words.index(flag) + 1] if flag in words else None
