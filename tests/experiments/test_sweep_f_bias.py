"""Sweeps with a reference method: each run's F_bias against the reference run of its seed (else that of the lowest
seed: `hf_srnets.experiments.pairing.reference_of`, the rule of every table), in runs.csv, summary.csv (mean ± std),
summary.md and the plot."""

import csv
import json
import os

import pytest

from hf_srnets.experiments import sweep as sweep_lib
from hf_srnets.experiments.sweep_runs import RUN_META, run_dir
from hf_srnets.experiments.sweep_summary import add_f_bias, collect, evaluated_sets, metric_title


def _write_run(root, method, sparsity, seed, dev, hans, n=1000):
    out = run_dir(str(root), method, sparsity, seed)
    os.makedirs(out)
    with open(os.path.join(out, RUN_META), "w") as f:
        json.dump({"method": method, "sparsity": sparsity, "seed": seed}, f)
    results = {
        "eval_mnli_accuracy": dev,
        "eval_mnli_examples": 100,
        "eval_mnli_easy_accuracy": 0.9,  # the ID set's easy/hard parts are not OOD sets
        "eval_mnli_easy_examples": 60,
        "eval_hans_accuracy": hans,
        "eval_hans_examples": n,
    }
    with open(os.path.join(out, "all_results.json"), "w") as f:
        json.dump(results, f)


def _gap(dev, ood):
    return (dev - ood) / dev


def test_f_bias_per_run_against_the_reference_of_its_seed_else_the_lowest_seeds(tmp_path):
    _write_run(tmp_path, "full", 0.0, 1, 0.842, 0.598)  # Table 1's BERT-base
    _write_run(tmp_path, "full", 0.0, 2, 0.84, 0.62)
    _write_run(tmp_path, "imp", 0.2, 1, 0.844, 0.555)  # Table 1's 20%: 1.182
    _write_run(tmp_path, "imp", 0.2, 2, 0.84, 0.56)
    _write_run(tmp_path, "imp", 0.2, 3, 0.83, 0.55)  # no reference of seed 3: seed 1's
    records = collect(str(tmp_path))
    assert evaluated_sets(records[0], "eval_mnli_accuracy") == ("mnli", ["hans"])
    keys = add_f_bias(records, "full", "eval_mnli_accuracy")
    assert keys == ["f_bias", "f_bias_hans", "f_bias_mean"]
    imp = {r["seed"]: r for r in records if r["method"] == "imp"}
    assert imp[1]["f_bias"] == pytest.approx(1.182, abs=5e-4)
    assert imp[2]["f_bias"] == pytest.approx(_gap(0.84, 0.56) / _gap(0.84, 0.62))
    assert imp[3]["f_bias"] == pytest.approx(_gap(0.83, 0.55) / _gap(0.842, 0.598))  # not the mean's 0.841, 0.609
    assert all("f_bias" not in r for r in records if r["method"] == "full")


def test_sweep_writes_f_bias_to_runs_summary_and_plot(tmp_path):
    root = tmp_path / "sweep"
    _write_run(root, "full", 0.0, 1, 0.842, 0.598)
    _write_run(root, "full", 0.0, 2, 0.84, 0.62)
    _write_run(root, "imp", 0.2, 1, 0.844, 0.555)
    _write_run(root, "imp", 0.2, 2, 0.84, 0.56)
    recipe = {
        "output_dir": str(root),
        "sparsities": [0.2],
        "seeds": [1, 2],
        "metrics": ["eval_mnli_accuracy", "eval_hans_accuracy"],
        "methods": {"full": {"pruning": "none"}, "imp": {"pruning": "imp"}},
        "reference": "full",
    }
    rows = sweep_lib.sweep(recipe, runner=lambda argv: pytest.fail("every run is finished"))
    one, two = 1.1816, _gap(0.84, 0.56) / _gap(0.84, 0.62)
    imp = next(r for r in rows if r["method"] == "imp")
    assert imp["f_bias_mean"] == pytest.approx((one + two) / 2, abs=5e-4)
    assert imp["f_bias_std"] == pytest.approx(abs(one - two) / 2**0.5, abs=5e-4)  # sample std of two
    with open(root / "runs.csv") as f:
        runs = list(csv.DictReader(f))
    assert float(next(r for r in runs if r["method"] == "imp" and r["seed"] == "1")["f_bias"]) == pytest.approx(
        1.182, abs=5e-4
    )
    with open(root / "summary.csv") as f:
        assert "f_bias_mean" in next(csv.DictReader(f))
    summary = (root / "summary.md").read_text()
    assert f"| imp | 20% | 2 | {(one + two) / 2:.3f} ± " in summary and "F_bias = Δ_run / Δ_full" in summary
    assert os.path.getsize(root / "summary.png") > 1000


def test_f_bias_plot_titles():
    assert metric_title("f_bias") == "F_bias"
    assert metric_title("f_bias_paws_qqp") == "F_bias PAWS-QQP"
    assert metric_title("f_bias_mean") == "F_bias (mean of sets)"
    assert metric_title("eval_mnli_easy_hard_gap") == "MNLI easy hard gap"
