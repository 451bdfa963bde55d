"""Sweep summaries with paired differences from a baseline and their bootstrap intervals, on a hand-made sweep folder
whose runs hold prediction files."""

from __future__ import annotations

import csv
import json
import math
import os

import pytest
from sklearn.metrics import f1_score

from hf_srnets.commands import sweep as run_sweep
from hf_srnets.experiments.sweep_runs import RUN_META, run_dir
from hf_srnets.experiments.sweep_summary import (
    add_paired_intervals,
    aggregate,
    baseline_runs,
    budget_line,
    collect,
    interval_metric,
    paired_plot_rows,
)

N = 40
LABELS = ["entailment" if i % 2 else "contradiction" for i in range(N)]


def first_right(k: int) -> list[str]:
    """Predictions right on the first k examples, wrong on the others."""
    wrong = {"entailment": "neutral", "contradiction": "neutral"}
    return [y if i < k else wrong[y] for i, y in enumerate(LABELS)]


def write_run(root, method: str, sparsity: float, seed: int, sets: dict, results: dict | None = None) -> None:
    """A finished run: meta, all_results.json with each set's accuracy, eval_predictions/<set>.jsonl."""
    out = run_dir(str(root), method, sparsity, seed)
    os.makedirs(os.path.join(out, "eval_predictions"))
    values = dict(results or {})
    for name, (labels, predictions) in sets.items():
        values.setdefault(f"eval_{name}_accuracy", sum(p == y for p, y in zip(predictions, labels)) / len(labels))
        with open(os.path.join(out, "eval_predictions", f"{name}.jsonl"), "w") as f:
            for i, (y, p) in enumerate(zip(labels, predictions)):
                f.write(json.dumps({"index": i, "id": f"ex{i}", "label": y, "prediction": p}) + "\n")
    with open(os.path.join(out, RUN_META), "w") as f:
        json.dump({"method": method, "sparsity": sparsity, "seed": seed}, f)
    with open(os.path.join(out, "all_results.json"), "w") as f:
        json.dump(values, f)


def hans(k: int) -> tuple[list[str], list[str]]:
    labels = ["entailment"] * 10 + ["non-entailment"] * 10
    return labels, ["entailment"] * k + ["non-entailment"] * (20 - k)


def binomial_quantile(n: int, p: float, q: float) -> int:
    """The smallest k with P(Bin(n, p) <= k) >= q."""
    total = 0.0
    for k in range(n + 1):
        total += math.comb(n, k) * p**k * (1 - p) ** (n - k)
        if total >= q:
            return k
    return n


def make_sweep(root) -> None:
    # full_ce: right on the first 20 (seed 1) and 24 (seed 2) MNLI pairs; mask_poe: 30 and 24, and a seed 3 the
    # reference lacks. Per example, the seed-mean difference is 0.5 on pairs 20-29 and 0 elsewhere.
    write_run(root, "full_ce", 0.0, 1, {"mnli": (LABELS, first_right(20)), "hans": hans(12)})
    write_run(root, "full_ce", 0.0, 2, {"mnli": (LABELS, first_right(24)), "hans": hans(14)})
    write_run(root, "mask_poe", 0.5, 1, {"mnli": (LABELS, first_right(30)), "hans": hans(12)})
    write_run(root, "mask_poe", 0.5, 2, {"mnli": (LABELS, first_right(24)), "hans": hans(14)})
    write_run(root, "mask_poe", 0.5, 3, {"mnli": (LABELS, first_right(0)), "hans": hans(0)})


METRICS = ["eval_mnli_accuracy", "eval_hans_accuracy", "eval_hans_entailment_accuracy"]


def test_differences_and_intervals_against_the_reference_over_paired_seeds(tmp_path) -> None:
    make_sweep(tmp_path)
    records = collect(str(tmp_path))
    rows, notes = add_paired_intervals(aggregate(records, METRICS), records, METRICS, "full_ce")
    full, mask = rows
    assert not any(k.endswith("_paired_diff") for k in full) and notes == []
    assert mask["eval_mnli_accuracy_paired_diff"] == pytest.approx((10 / 40 + 0) / 2)
    assert mask["eval_mnli_accuracy_paired_seeds"] == 2
    # a replicate's difference is 0.5·k/40 with k ~ Bin(40, 1/4) examples drawn from pairs 20-29: its 2.5% and
    # 97.5% quantiles (up to one step of 0.0125 of Monte-Carlo error with 1000 replicates)
    step = 0.5 / N
    assert mask["eval_mnli_accuracy_paired_low"] == pytest.approx(step * binomial_quantile(N, 0.25, 0.025), abs=step)
    assert mask["eval_mnli_accuracy_paired_high"] == pytest.approx(step * binomial_quantile(N, 0.25, 0.975), abs=step)
    assert mask["eval_mnli_accuracy_paired_outside_noise"] is True
    # the same HANS predictions as the reference's seed by seed: 0 difference, interval [0, 0]
    assert (mask["eval_hans_accuracy_paired_low"], mask["eval_hans_accuracy_paired_high"]) == (0.0, 0.0)
    assert mask["eval_hans_accuracy_paired_outside_noise"] is False
    assert "eval_hans_entailment_accuracy_paired_diff" not in mask  # a cell of HANS, not a set's accuracy


def test_run_sweep_writes_the_intervals_to_summary_csv_and_md(tmp_path) -> None:
    make_sweep(tmp_path)
    recipe = tmp_path / "recipe.json"
    recipe.write_text(
        json.dumps(
            {
                "output_dir": str(tmp_path),
                "sparsities": [0.5],
                "seeds": [1, 2, 3],
                "metrics": METRICS[:2],
                "reference": "full_ce",
                "methods": {"full_ce": {"pruning": "none"}, "mask_poe": {"pruning": "mask"}},
            }
        )
    )
    run_sweep.main([str(recipe), "--aggregate_only"])
    with open(tmp_path / "summary.csv") as f:
        mask = next(r for r in csv.DictReader(f) if r["method"] == "mask_poe")
    assert float(mask["eval_mnli_accuracy_paired_diff"]) == pytest.approx(0.125)
    assert mask["eval_mnli_accuracy_paired_outside_noise"] == "True" and mask["paired_baseline"] == "full_ce"
    summary = (tmp_path / "summary.md").read_text()
    assert (
        "| method | sparsity | paired seeds | Δ eval_mnli_accuracy [95% CI] | eval_mnli_accuracy seed signs, p (Holm) "
        "| Δ eval_hans_accuracy [95% CI] | eval_hans_accuracy seed signs, p (Holm) |" in summary
    )
    assert "10,000 paired bootstrap resamples" in summary and "Holm-adjusted over this table's rows" in summary
    line = next(s for s in summary.splitlines() if s.startswith("| mask_poe | 50% | 2 |"))
    # seed-level: differences +0.25 and 0 over 2 seeds, t = 0.125 / (0.177 / √2) = 1.0 on 1 degree of freedom
    # (Cauchy): p = 0.5, alone in its column so Holm leaves it; HANS's differences are both 0: no test. The interval
    # excludes 0 but seed 2's difference is 0, not +, and p = 0.5: not decided (°) under the seed-level rule
    assert line.startswith("| mask_poe | 50% | 2 | +12.50 [+")
    assert line.endswith("]° | +0 0.5 (0.5) | +0.00 [+0.00, +0.00] | 00 – |")
    assert mask["eval_mnli_accuracy_decided"] == "False" and mask["eval_mnli_accuracy_seed_signs"] == "+0"
    assert (tmp_path / "paired.png").stat().st_size > 1000  # a method per line with its interval


def test_the_paired_plot_takes_each_rows_interval_in_points_and_names_pruned_methods_with_their_sparsity():
    rows = [
        {"method": "full_ce", "sparsity": 0.0},
        {"method": "full_poe", "sparsity": 0.0, "m_paired_diff": 0.012, "m_paired_low": -0.004, "m_paired_high": 0.03},
        {"method": "mask_poe", "sparsity": 0.3, "m_paired_diff": -0.05, "m_paired_low": -0.07, "m_paired_high": -0.02},
    ]
    assert paired_plot_rows(rows, "m") == [
        ("full_poe", pytest.approx(1.2), pytest.approx(-0.4), pytest.approx(3.0)),
        ("mask_poe 30%", pytest.approx(-5.0), pytest.approx(-7.0), pytest.approx(-2.0)),
    ]


def test_the_budget_line_sums_training_and_every_sets_evaluation_time():
    records = [
        {"train_runtime": 1800.0, "eval_mnli_runtime": 60.0, "eval_hans_runtime": 120.0, "torch_num_threads": 1,
         "precision": "bf16"},
        {"train_runtime": 5400.0, "eval_mnli_runtime": 180.0, "torch_num_threads": 1, "precision": "bf16"},
    ]  # fmt: skip
    # 7,200 s = 2.00 h of training; 360 s = 0.10 h of evaluation
    assert budget_line(records) == (
        "Budget: 2 runs, 2.00 h of training and 0.10 h of evaluation (summed runtimes; torch threads 1, bf16).\n"
    )
    records[1]["train_runtime_from_step"] = 151  # resumed from an older checkpoint: 5,400 s after step 150 only
    assert budget_line(records).endswith(
        "(summed runtimes; torch threads 1, bf16). 1 of the runs resumed from a checkpoint that did not record the "
        "time before it: only their time after the resume is counted.\n"
    )


def test_the_budget_line_names_the_cpus_and_the_runs_that_did_not_record_theirs():
    records = [
        {"train_runtime": 3600.0, "torch_num_threads": 1, "precision": "fp32", "cpu": "Intel Xeon (AVX512)"},
        {"train_runtime": 3600.0, "torch_num_threads": 1, "precision": "fp32", "cpu": "Intel Xeon (AVX512)"},
        {"train_runtime": 3600.0, "torch_num_threads": 1, "precision": "fp32", "cpu": "AMD EPYC (AVX2)"},
        {"train_runtime": 3600.0, "torch_num_threads": 1, "precision": "fp32"},
    ]  # fmt: skip
    assert budget_line(records) == (
        "Budget: 4 runs, 4.00 h of training and 0.00 h of evaluation (summed runtimes; torch threads 1, fp32, "
        "CPU AMD EPYC (AVX2): 1 runs; Intel Xeon (AVX512): 2 runs; not recorded: 1 runs).\n"
    )
    assert "CPU" not in budget_line(records[3:])  # runs that recorded no CPU (on a GPU, or older) name none


def test_runs_without_or_with_foreign_prediction_files_are_named_not_paired(tmp_path) -> None:
    make_sweep(tmp_path)
    # a run whose file does not give its reported accuracy (a stale file of another run)
    write_run(tmp_path, "imp", 0.5, 1, {"mnli": (LABELS, first_right(10))}, {"eval_mnli_accuracy": 0.9})
    # a run made before prediction files existed
    os.makedirs(run_dir(str(tmp_path), "old", 0.5, 1))
    for name, value in ((RUN_META, {"method": "old", "sparsity": 0.5, "seed": 1}), ("all_results.json", {})):
        with open(os.path.join(run_dir(str(tmp_path), "old", 0.5, 1), name), "w") as f:
            json.dump(value, f)
    records = collect(str(tmp_path))
    rows, notes = add_paired_intervals(aggregate(records, METRICS), records, METRICS, "full_ce")
    assert not any(k.endswith("_paired_diff") for r in rows if r["method"] in ("imp", "old") for k in r)
    assert "imp at 50%, eval_mnli_accuracy: " in notes[0] and "does not give the run's eval_mnli_accuracy" in notes[0]
    assert notes[1] == "old at 50%: its runs hold no per-example predictions (eval_predictions/)"
    assert (
        add_paired_intervals(rows, records, METRICS, "nobody")[1][0]
        == "full_ce at 0%: no finished run of nobody to pair with"
    )


def test_a_pruned_baseline_pairs_at_its_sparsity_and_full_size_methods_with_its_only_one(tmp_path) -> None:
    write_run(tmp_path, "imp_vanilla", 0.4, 1, {"mnli": (LABELS, first_right(20))})
    write_run(tmp_path, "imp_rmc", 0.4, 1, {"mnli": (LABELS, first_right(22))})
    write_run(tmp_path, "heads20", 0.0, 1, {"mnli": (LABELS, first_right(16))})
    records = collect(str(tmp_path))
    assert [r["method"] for r in baseline_runs(records, "imp_vanilla", 0.0)] == ["imp_vanilla"]
    rows, notes = add_paired_intervals(aggregate(records, METRICS[:1]), records, METRICS[:1], "imp_vanilla")
    assert notes == []
    diffs = {r["method"]: r.get("eval_mnli_accuracy_paired_diff") for r in rows}
    assert diffs == {"heads20": pytest.approx(-4 / 40), "imp_rmc": pytest.approx(2 / 40), "imp_vanilla": None}
    # with runs at two sparsities, a method at a third has no baseline to pair with
    write_run(tmp_path, "imp_vanilla", 0.6, 1, {"mnli": (LABELS, first_right(20))})
    assert baseline_runs(collect(str(tmp_path)), "imp_vanilla", 0.0) == []


def test_f1_metrics_get_the_difference_of_weighted_f1(tmp_path) -> None:
    labels = ["paraphrase", "different", "different", "paraphrase", "different", "different"]
    method = ["paraphrase", "different", "paraphrase", "paraphrase", "different", "different"]
    base = ["different", "different", "different", "paraphrase", "paraphrase", "different"]
    f1 = {name: f1_score(labels, p, average="weighted") for name, p in (("m", method), ("b", base))}
    write_run(tmp_path, "full", 0.0, 1, {"paws_qqp": (labels, base)}, {"eval_paws_qqp_f1": f1["b"]})
    write_run(tmp_path, "mask", 0.5, 1, {"paws_qqp": (labels, method)}, {"eval_paws_qqp_f1": f1["m"]})
    records = collect(str(tmp_path))
    rows, notes = add_paired_intervals(aggregate(records, ["eval_paws_qqp_f1"]), records, ["eval_paws_qqp_f1"], "full")
    assert notes == [] and rows[1]["eval_paws_qqp_f1_paired_diff"] == pytest.approx(f1["m"] - f1["b"])


@pytest.mark.parametrize(
    ("metric", "parsed"),
    [
        ("eval_paws_qqp_f1", ("paws_qqp", "f1")),
        ("eval_hans_accuracy", ("hans", "accuracy")),
        ("eval_hans_non-entailment_accuracy", None),
        ("f_bias", None),
    ],
)
def test_which_metrics_get_intervals(metric, parsed) -> None:
    assert interval_metric(metric, ["paws", "paws_qqp", "hans", "mnli"]) == parsed
