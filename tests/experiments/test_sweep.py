"""Sweeps: mean ± std on hand-made results, skipping finished runs, CSV and plot."""

import csv
import json
import math
import os

import pytest

from hf_srnets.arguments import parse_args, validate_args
from hf_srnets.commands import sweep as run_sweep
from hf_srnets.data import custom_task, get_task
from hf_srnets.errors import InputError
from hf_srnets.experiments import sweep as sweep_lib
from hf_srnets.experiments import sweep_runs
from hf_srnets.experiments.sweep_runs import RUN_META, run_dir
from hf_srnets.experiments.sweep_summary import (
    aggregate,
    collect,
    compare_to_reference,
    default_metrics,
    markdown_table,
    metric_title,
)
from hf_srnets.run_files import is_finished


def fields(runs: list[sweep_runs.PlannedRun]) -> list[tuple[str, float, int, list[str]]]:
    """(method, sparsity, seed, arguments) of each planned run."""
    return [(r.method, r.sparsity, r.seed, list(r.argv)) for r in runs]


def _write_run(root, method, sparsity, seed, results):
    out = run_dir(str(root), method, sparsity, seed)
    os.makedirs(out)
    with open(os.path.join(out, RUN_META), "w") as f:
        json.dump({"method": method, "sparsity": sparsity, "seed": seed}, f)
    with open(os.path.join(out, "all_results.json"), "w") as f:
        json.dump(results, f)


def test_mean_and_sample_std_on_hand_made_results(tmp_path):
    _write_run(tmp_path, "mask-poe", 0.5, 1, {"eval_mnli_accuracy": 0.80, "eval_hans_accuracy": 0.60})
    _write_run(tmp_path, "mask-poe", 0.5, 2, {"eval_mnli_accuracy": 0.84, "eval_hans_accuracy": 0.64})
    _write_run(tmp_path, "mask-poe", 0.5, 3, {"eval_mnli_accuracy": 0.82, "eval_hans_accuracy": 0.65})
    _write_run(tmp_path, "full-ce", 0.0, 1, {"eval_mnli_accuracy": 0.85})
    rows = aggregate(collect(str(tmp_path)), ["eval_mnli_accuracy", "eval_hans_accuracy"])
    full, mask = rows
    assert full["method"] == "full-ce" and full["n_seeds"] == 1 and full["eval_mnli_accuracy_std"] == 0.0
    assert "eval_hans_accuracy_mean" not in full
    assert mask["eval_mnli_accuracy_mean"] == pytest.approx(0.82)
    assert mask["eval_mnli_accuracy_std"] == pytest.approx(0.02)  # sqrt(((-.02)^2 + .02^2 + 0) / 2)
    assert mask["eval_hans_accuracy_mean"] == pytest.approx(0.63)
    assert mask["eval_hans_accuracy_std"] == pytest.approx(math.sqrt((0.03**2 + 0.01**2 + 0.02**2) / 2))
    table = markdown_table(rows, ["eval_mnli_accuracy", "eval_hans_accuracy"]).splitlines()
    assert table[2] == "| full-ce | 0% | 1 | 85.00 ± 0.00 |  |"
    assert table[3] == "| mask-poe | 50% | 3 | 82.00 ± 2.00 | 63.00 ± 2.65 |"


def test_comparison_with_the_full_model_gives_id_retained_and_deltas(tmp_path):
    metrics = ["eval_mnli_accuracy", "eval_hans_accuracy"]
    _write_run(tmp_path, "full_ce", 0.0, 1, {"eval_mnli_accuracy": 0.84, "eval_hans_accuracy": 0.49})
    _write_run(tmp_path, "full_ce", 0.0, 2, {"eval_mnli_accuracy": 0.86, "eval_hans_accuracy": 0.51})
    _write_run(tmp_path, "mask_poe", 0.5, 1, {"eval_mnli_accuracy": 0.81, "eval_hans_accuracy": 0.62})
    _write_run(tmp_path, "mask_poe", 0.5, 2, {"eval_mnli_accuracy": 0.83, "eval_hans_accuracy": 0.64})
    rows = compare_to_reference(aggregate(collect(str(tmp_path)), metrics), metrics, "full_ce")
    full, mask = rows
    assert mask["eval_mnli_accuracy_retained"] == pytest.approx(0.82 / 0.85)
    assert mask["eval_mnli_accuracy_delta"] == pytest.approx(-0.03)
    assert mask["eval_hans_accuracy_delta"] == pytest.approx(0.13)
    assert "eval_hans_accuracy_retained" not in mask  # only the first (ID) metric is a ratio
    assert full["eval_mnli_accuracy_retained"] == pytest.approx(1.0)
    table = markdown_table(rows, metrics, "full_ce")
    assert "| method | sparsity | seeds | eval_mnli_accuracy: % of full_ce | Δ eval_mnli_accuracy |" in table
    assert "| mask_poe | 50% | 2 | 96.5% | -3.00 | +13.00 |" in table
    assert "| full_ce | 0% | 2 | 100.0%" not in table
    # no reference run yet: rows unchanged, the table says so; two reference rows are an error
    alone = [r for r in rows if r["method"] == "mask_poe"]
    assert "No finished run of the reference 'full_ce'" in markdown_table(
        compare_to_reference(aggregate(collect(str(tmp_path / "mask_poe")), metrics), metrics, "full_ce"),
        metrics,
        "full_ce",
    )
    with pytest.raises(ValueError, match="one full model"):
        compare_to_reference(alone + alone, metrics, "mask_poe")


def test_sweep_skips_finished_runs_and_writes_csv_and_plot(tmp_path):
    recipe = {
        "output_dir": str(tmp_path / "sweep"),
        "sparsities": [0.3, 0.5],
        "seeds": [1, 2],
        "metrics": ["eval_mnli_accuracy"],
        "common": {"task": "mnli", "do_train": True},
        "methods": {"full-ce": {"pruning": "none", "loss": "ce"}, "mask-poe": {"pruning": "mask", "loss": "poe"}},
        "reference": "full-ce",
    }
    _write_run(tmp_path / "sweep", "mask-poe", 0.5, 2, {"eval_mnli_accuracy": 0.7})  # already finished
    calls = []

    def fake_runner(argv):
        calls.append(argv)
        out = argv[argv.index("--output_dir") + 1]
        sparsity = float(argv[argv.index("--sparsity") + 1]) if "--sparsity" in argv else 0.0
        with open(os.path.join(out, "all_results.json"), "w") as f:
            json.dump({"eval_mnli_accuracy": 0.9 - sparsity / 2, "sparsity": sparsity + 0.001}, f)

    rows = sweep_lib.sweep(recipe, runner=fake_runner)
    assert len(calls) == 2 + 3  # full model: 2 seeds at sparsity 0; mask: 4 runs minus the finished one
    assert all("--seed" in c and "--output_dir" in c for c in calls)
    assert not any("--sparsity" in c for c in calls if "none" in c)
    assert {(r["method"], r["sparsity"], r["n_seeds"]) for r in rows} == {
        ("full-ce", 0.0, 2),
        ("mask-poe", 0.3, 2),
        ("mask-poe", 0.5, 2),
    }
    with open(tmp_path / "sweep" / "summary.csv") as f:
        table = list(csv.DictReader(f))
    assert len(table) == 3 and "eval_mnli_accuracy_std" in table[0]
    mask_03 = next(r for r in table if r["method"] == "mask-poe" and r["sparsity"] == "0.3")
    assert float(mask_03["eval_mnli_accuracy_retained"]) == pytest.approx(0.75 / 0.9)  # fake runner: 0.9 - s/2
    summary = (tmp_path / "sweep" / "summary.md").read_text()
    assert "| mask-poe | 30% |" in summary and "| mask-poe | 30% | 2 | 83.3% | -15.00 |" in summary
    with open(tmp_path / "sweep" / "runs.csv") as f:
        runs = list(csv.DictReader(f))
    assert len(runs) == 6  # one row per run, the measured sparsity beside the planned one
    mask_03 = [r for r in runs if r["method"] == "mask-poe" and r["sparsity"] == "0.3"]
    assert len(mask_03) == 2 and all(float(r["sparsity_measured"]) == pytest.approx(0.301) for r in mask_03)
    assert os.path.getsize(tmp_path / "sweep" / "summary.png") > 1000
    calls.clear()
    sweep_lib.sweep(recipe, runner=fake_runner)
    assert calls == []  # re-running skips every finished run


def test_recipe_values_expand_seed_output_dir_and_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("BACKBONE", "/models/minilm")
    recipe = {
        "output_dir": "out",
        "sparsities": [0.5],
        "seeds": [1, 2],
        "common": {"model_name_or_path": "$BACKBONE", "learning_rate": 1e-4},
        "methods": {
            "full_ce": {"pruning": "none"},
            "mask_poe": {"pruning": "mask", "model_name_or_path": "{output_dir}/full_ce/s0/seed{seed}"},
            "imp_poe": {"pruning": "imp", "sparsities": [0.7], "model_name_or_path": "x"},
        },
    }
    runs = sweep_runs.planned_runs(recipe)
    assert [(r.method, r.sparsity) for r in runs[-2:]] == [("imp_poe", 0.7), ("imp_poe", 0.7)]  # its own grid
    assert not any("--sparsities" in r.argv for r in runs)
    runs = runs[:-2]
    models = [(r.method, r.seed, r.argv[r.argv.index("--model_name_or_path") + 1]) for r in runs]
    assert models == [
        ("full_ce", 1, "/models/minilm"),
        ("full_ce", 2, "/models/minilm"),
        ("mask_poe", 1, "out/full_ce/s0/seed1"),
        ("mask_poe", 2, "out/full_ce/s0/seed2"),
    ]
    assert models[2][2] == run_dir("out", "full_ce", 0.0, 1)
    recipe["common"]["model_name_or_path"] = "$UNSET_BACKBONE_VARIABLE"
    with pytest.raises(ValueError, match="UNSET_BACKBONE_VARIABLE"):
        sweep_runs.planned_runs(recipe)


@pytest.mark.parametrize("name", ["sweep_minilm_mnli.yaml", "short_run_hparams.yaml"])
def test_example_sweep_recipes_plan_valid_runs(name, monkeypatch):
    import yaml

    monkeypatch.setenv("MINILM", "/models/minilm")
    monkeypatch.setenv("DATA_DIR", "/data")
    root = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
    with open(os.path.join(root, name)) as f:
        recipe = yaml.safe_load(f)
    runs = sweep_runs.planned_runs(recipe)
    assert runs
    for _method, sparsity, seed, argv in fields(runs):
        run = parse_args(argv)
        validate_args(run)
        model_args, data_args, args = run.model, run.data, run.training
        assert args.seed == seed and data_args.train_file == "/data/mnli/dev_mismatched.tsv"
        assert (run.pruning.sparsity == sparsity) if model_args.pruning != "none" else sparsity == 0.0
        if model_args.pruning != "none":  # paradigm (a): the search starts from the full ce model of its seed
            assert model_args.model_name_or_path.endswith(f"full_ce/s0/seed{seed}")


@pytest.mark.parametrize(
    ("metric", "title"),
    [
        ("eval_mnli_accuracy", "MNLI accuracy"),
        ("eval_hans_non-entailment_accuracy", "HANS non-entailment accuracy"),
        ("eval_paws-qqp_f1", "PAWS-qqp f1"),
        ("eval_paws_qqp_f1", "PAWS-QQP f1"),  # a known set: its display name (data/tasks.py)
        ("eval_fever_symmetric_v2_accuracy", "FEVER-Symmetric v2 accuracy"),
        ("eval_hans_lexical_overlap_entailment_accuracy", "HANS lexical overlap entailment accuracy"),
        ("eval_anli-r1_accuracy", "ANLI-r1 accuracy"),
        ("eval_loss", "loss"),
    ],
)
def test_plot_titles_name_the_dataset_and_metric(metric, title):
    assert metric_title(metric) == title


def test_methods_option_keeps_the_recipe_order_and_refuses_unknown_names(tmp_path):
    methods = {"full_ce": {"pruning": "none"}, "mask_poe": {"pruning": "mask"}, "imp_poe": {"pruning": "imp"}}
    assert list(sweep_lib.select_methods(methods, ["imp_poe", "full_ce"], "r.yaml")) == ["full_ce", "imp_poe"]
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        f"output_dir: {tmp_path / 'out'}\nsparsities: [0.5]\nseeds: [1]\nmetrics: [eval_mnli_accuracy]\n"
        "methods:\n  full_ce: {pruning: none}\n  mask_poe: {pruning: mask}\n"
    )
    with pytest.raises(ValueError, match=r"no method mask-poe; its methods are full_ce, mask_poe"):
        run_sweep.main([str(recipe), "--methods", "mask-poe", "--aggregate_only"])


def _fake_runner(calls):
    def runner(argv):
        calls.append(argv)
        out = argv[argv.index("--output_dir") + 1]
        with open(os.path.join(out, "all_results.json"), "w") as f:
            json.dump({"eval_mnli_accuracy": 0.6, "eval_hans_accuracy": 0.5, "sparsity": 0.5}, f)

    return runner


def test_a_run_glue_sparse_command_sweeps_without_a_recipe(tmp_path):
    run_args = ["--model_name_or_path", "m", "--task", "mnli", "--pruning", "mask", "--loss", "poe"]
    run_args += ["--bias_predictions", "b.jsonl", "--do_train", "--ood_file", "hans_sub=h.tsv"]
    calls = []
    out = str(tmp_path / "sweep")
    argv = ["--sparsities", "0.3,0.5", "--seeds", "1,2", "--output_dir", out, "--", *run_args]
    rows = run_sweep.main(argv, runner=_fake_runner(calls))
    assert len(calls) == 4
    planned = set()
    for call in calls:
        run = parse_args(call)
        model_args, data_args, args = run.model, run.data, run.training
        assert model_args.pruning == "mask" and args.loss == "poe" and data_args.ood_file == ["hans_sub=h.tsv"]
        assert args.output_dir == run_dir(out, "mask_poe", run.pruning.sparsity, args.seed)
        planned.add((run.pruning.sparsity, args.seed))
    assert planned == {(0.3, 1), (0.3, 2), (0.5, 1), (0.5, 2)}
    # default metrics (the --ood_file set has no results here, so it is left out of the rows)
    assert [k for k in rows[0] if k.endswith("_mean")] == ["eval_mnli_accuracy_mean", "eval_hans_accuracy_mean"]
    assert "eval_mnli_accuracy" in (tmp_path / "sweep" / "summary.md").read_text()
    assert run_sweep.main(argv, runner=_fake_runner(calls)) == rows and len(calls) == 4  # finished runs skipped


def test_a_full_model_sweeps_over_seeds_only(tmp_path):
    calls = []
    run_sweep.main(
        ["--seeds", "1,2", "--output_dir", str(tmp_path), "--method_name", "bert_std", "--"]
        + ["--model_name_or_path", "m", "--do_train"],
        runner=_fake_runner(calls),
    )
    assert sorted(c[c.index("--output_dir") + 1] for c in calls) == [
        run_dir(str(tmp_path), "bert_std", 0.0, 1),
        run_dir(str(tmp_path), "bert_std", 0.0, 2),
    ]
    assert not any("--sparsity" in c for c in calls)


def test_recipe_free_sweep_refuses_what_it_cannot_run(tmp_path):
    out = ["--output_dir", str(tmp_path)]
    mask = ["--model_name_or_path", "m", "--pruning", "mask"]
    with pytest.raises(ValueError, match="--sparsity is set by the sweep"):
        run_sweep.main(["--sparsities", "0.5", *out, "--", *mask, "--sparsity", "0.5"], runner=_fake_runner([]))
    with pytest.raises(ValueError, match="needs --sparsities"):
        run_sweep.main([*out, "--", *mask], runner=_fake_runner([]))
    with pytest.raises(ValueError, match="needs --teacher_predictions"):  # checked before any run starts
        run_sweep.main(["--sparsities", "0.5", *out, "--", *mask, "--loss", "confreg"], runner=_fake_runner([]))
    with pytest.raises(InputError, match="not both"):
        run_sweep.main(["recipe.yaml", *out, "--", *mask], runner=_fake_runner([]))
    with pytest.raises(InputError, match="needs --output_dir"):
        run_sweep.main(["--sparsities", "0.5", "--", *mask], runner=_fake_runner([]))
    with pytest.raises(InputError, match="give a recipe"):
        run_sweep.main(["--sparsities", "0.5"], runner=_fake_runner([]))


def test_default_metrics_are_the_id_metric_then_each_ood_sets():
    assert default_metrics(get_task("mnli")) == ["eval_mnli_accuracy", "eval_hans_accuracy"]
    assert default_metrics(get_task("qqp")) == ["eval_qqp_f1", "eval_paws_qqp_f1", "eval_paws_wiki_f1"]  # F1, B.1
    assert default_metrics(get_task("qqp"), ["hans_like=h.tsv", "other=o.tsv"], no_default_ood=True) == [
        "eval_qqp_f1",
        "eval_hans_like_accuracy",
        "eval_other_f1",
    ]
    custom = custom_task(["negative", "positive"])
    assert default_metrics(custom, ["imdb=x.tsv"]) == ["eval_validation_accuracy", "eval_imdb_accuracy"]
    # an --ood_file named like a default set replaces it (one key); --ood_labels can make a set HANS-like
    assert default_metrics(get_task("mnli"), ["hans=h.tsv"]) == ["eval_mnli_accuracy", "eval_hans_accuracy"]
    assert default_metrics(get_task("mnli"), ["paws=p.tsv"], ood_labels=["paws=non-entailment,entailment"]) == [
        "eval_mnli_accuracy",
        "eval_hans_accuracy",
        "eval_paws_accuracy",
    ]


def test_an_unfinished_run_starts_again_in_its_cleared_dir(tmp_path):
    """A run that died left outputs: re-running the sweep must not be refused by the output-dir rules."""
    from hf_srnets.training.output_dir import prepare_output_dir

    recipe = {
        "output_dir": str(tmp_path),
        "sparsities": [0.5],
        "seeds": [1],
        "metrics": ["eval_mnli_accuracy"],
        "methods": {"mask_poe": {"pruning": "mask", "loss": "poe", "model_name_or_path": "m"}},
    }
    out = run_dir(str(tmp_path), "mask_poe", 0.5, 1)
    os.makedirs(os.path.join(out, "checkpoint-2"))
    with open(os.path.join(out, "trainer_state.json"), "w") as f:
        f.write("{}")

    def runner(argv):
        run = parse_args(argv)
        model_args, args = run.model, run.training
        with prepare_output_dir(
            args.output_dir, overwrite=model_args.overwrite_output_dir, resume=None, is_main_process=True
        ):
            assert sorted(os.listdir(args.output_dir)) == [".hf_srnets.lock", "sweep_run.json"]
            _fake_runner([])(argv)

    sweep_lib.sweep(recipe, runner=runner)
    assert is_finished(out)


@pytest.mark.parametrize(("sparsities", "seeds"), [([0.5], [1, 1]), ([0.5, 0.50], [1]), ([0.3, 0.5, 0.3], [2, 3])])
def test_a_repeated_seed_or_sparsity_is_refused_before_any_run(tmp_path, sparsities, seeds):
    """Issue 33, round 4: `--seeds 1,1` ran the run once, then stopped with "changed while this sweep started ...
    another sweep or run is writing there", a wrong diagnosis; now the plan is refused naming the repeated run."""
    recipe = {
        "output_dir": str(tmp_path),
        "sparsities": sparsities,
        "seeds": seeds,
        "metrics": ["eval_mnli_accuracy"],
        "methods": {"mask_poe": {"pruning": "mask", "loss": "poe", "model_name_or_path": "m"}},
    }
    calls: list[list[str]] = []
    with pytest.raises(
        InputError,
        match=r"the sweep plans mask_poe sparsity=0\.[35] seed=[123] twice \(into \S+\): a "
        "seed or sparsity is repeated",
    ):
        sweep_lib.sweep(recipe, runner=calls.append)
    assert calls == [] and os.listdir(tmp_path) == []


@pytest.mark.parametrize("grid", ["0.5,1.5", "0.5,nan", "-0.1,0.5", "0.5,inf"])
def test_a_sparsity_outside_0_1_is_refused_before_any_run(tmp_path, grid):
    """Round 4, case 11: `--sparsities 0.5,1.5` trained the 0.5 run, then its 1.5 run refused the value and left
    `s1.5/seed1/sweep_run.json`; now the grid is checked when the runs are planned."""
    bad = next(s for s in grid.split(",") if not 0 <= float(s) < 1)
    calls: list[list[str]] = []
    argv = [f"--sparsities={grid}", "--seeds", "1", "--output_dir", str(tmp_path / "sweep"), "--"]
    with pytest.raises(InputError, match=rf"sparsity {bad} \(method mask_ce\) is not in \[0, 1\)"):
        run_sweep.main([*argv, "--model_name_or_path", "m", "--pruning", "mask", "--loss", "ce"], runner=calls.append)
    assert calls == [] and not (tmp_path / "sweep").exists()


def test_a_recipe_s_sparsity_outside_0_1_is_refused_before_any_run(tmp_path):
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        f"output_dir: {tmp_path / 'sweep'}\nsparsities: [0.5]\nseeds: [1]\nmetrics: [eval_mnli_accuracy]\n"
        "common: {model_name_or_path: m, task: mnli}\n"
        "methods:\n  full_ce: {pruning: none}\n  mask_ce: {pruning: mask, sparsities: [0.5, 1.0]}\n"
    )
    calls: list[list[str]] = []
    with pytest.raises(InputError, match=r"sparsity 1 \(method mask_ce\) is not in \[0, 1\)"):
        run_sweep.main([str(recipe)], runner=calls.append)
    assert calls == [] and not (tmp_path / "sweep").exists()
