"""`hf_srnets.experiments.paired_table`: paired columns (accuracy, accuracy on one gold label, F_bias) against a
baseline, with values worked out by hand on sets of a few examples."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import numpy as np
import pytest

from hf_srnets.commands import report as report_command
from hf_srnets.errors import InputError
from hf_srnets.experiments.paired_table import (
    Column,
    accuracy_comparison,
    column_spec,
    comparison_markdown,
    comparison_rows,
    f_bias_comparison,
    f_bias_values,
    parse_column,
)
from hf_srnets.experiments.report import report_text
from hf_srnets.experiments.sweep_runs import RUN_META, run_dir
from hf_srnets.metrics.bootstrap import bootstrap_interval

DEV = ["entailment", "neutral", "contradiction", "entailment"]
OOD = ["entailment", "non-entailment", "entailment", "non-entailment"]
WRONG = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
FLIP = {"entailment": "non-entailment", "non-entailment": "entailment"}


def write_set(path: Path, labels: list[str], right: list[int], wrong: dict[str, str]) -> None:
    """eval_predictions rows: example i predicted right where right[i] == 1."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [
        {"index": i, "id": f"x{i}", "label": y, "prediction": y if ok else wrong[y]}
        for i, (y, ok) in enumerate(zip(labels, right))
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def run(root: Path, method: str, sparsity: float, seed: int, dev: list[int], ood: list[int]) -> dict:
    """A finished sweep run (as `sweep_summary.collect` reads it) with these right/wrong patterns."""
    out = Path(run_dir(str(root), method, sparsity, seed))
    write_set(out / "eval_predictions" / "mnli.jsonl", DEV, dev, WRONG)
    write_set(out / "eval_predictions" / "hans.jsonl", OOD, ood, FLIP)
    (out / RUN_META).write_text(json.dumps({"method": method, "sparsity": sparsity, "seed": seed}))
    results = {"eval_mnli_accuracy": sum(dev) / 4, "eval_hans_accuracy": sum(ood) / 4}
    (out / "all_results.json").write_text(json.dumps(results))
    return {**results, "method": method, "sparsity": sparsity, "seed": seed, "run_dir": str(out)}


MNLI, HANS = Column("MNLI-m", "mnli"), Column("HANS", "hans")
NON_ENT, F_BIAS = Column("HANS non-ent", "hans", "non-entailment"), Column("F_bias", "mnli", ood_set="hans")


def test_accuracy_and_label_subset_differences_by_hand(tmp_path):
    method = run(tmp_path, "m", 0.5, 1, [1, 1, 1, 0], [1, 1, 0, 0])
    base = run(tmp_path, "b", 0.5, 1, [1, 0, 1, 0], [1, 0, 0, 0])
    assert accuracy_comparison([method], [base], MNLI, 200).interval.difference == pytest.approx(0.75 - 0.5)
    # HANS non-entailment examples are 1 and 3: the method gets 1 of 2, the baseline 0 of 2
    found = accuracy_comparison([method], [base], NON_ENT, 200)
    assert found.interval.difference == pytest.approx(0.5) and found.interval.n_examples == 2
    assert found.seed_differences == (0.5,) and found.seed_p is None  # one seed: no t-test


def test_identical_runs_give_a_zero_interval(tmp_path):
    a = run(tmp_path, "m", 0.5, 1, [1, 0, 1, 0], [0, 1, 1, 0])
    b = run(tmp_path, "b", 0.5, 1, [1, 0, 1, 0], [0, 1, 1, 0])
    interval = accuracy_comparison([a], [b], HANS, 300).interval
    assert (interval.difference, interval.low, interval.high) == (0.0, 0.0, 0.0) and not interval.excludes_zero


def test_f_bias_difference_and_its_undefined_cases_by_hand(tmp_path):
    # teacher: dev 4/4, OOD 2/4, Δ_t = 0.5; method: dev 3/4, OOD 2/4, Δ = 1/3, F = 2/3; base: dev 4/4, OOD 1/4, F = 1.5
    teacher = run(tmp_path, "teacher", 0.0, 0, [1, 1, 1, 1], [1, 1, 0, 0])
    method = run(tmp_path, "m", 0.5, 1, [1, 1, 1, 0], [1, 0, 1, 0])
    base = run(tmp_path, "b", 0.5, 1, [1, 1, 1, 1], [0, 0, 1, 0])
    found = f_bias_comparison([method], [base], teacher, F_BIAS, 500)
    assert found.interval.difference == pytest.approx(2 / 3 - 1.5)
    assert found.seed_differences == pytest.approx((2 / 3 - 1.5,))
    assert found.interval.n_examples == 8 and found.interval.low <= found.interval.difference <= found.interval.high
    values = f_bias_values(np.array([[0.75, 0.0]]), np.array([[0.5, 0.0]]), np.array([0.5]), np.array([0.5]))
    assert np.isnan(values).all()  # teacher without a gap; a run at 0 ID accuracy


def test_a_reference_without_an_ood_drop_leaves_the_f_bias_difference_empty_not_a_traceback(tmp_path, caplog):
    """Teacher dev 2/4, OOD 2/4: Δ_t = 0, F_bias undefined for every run (the QUICK pipelines' 2-step teachers); the
    table keeps its accuracy cells and leaves Δ F_bias out, saying why, instead of raising."""
    teacher = run(tmp_path, "teacher", 0.0, 0, [1, 1, 0, 0], [1, 1, 0, 0])
    records = [
        run(tmp_path, "m", 0.5, 1, [1, 1, 1, 0], [1, 0, 1, 0]),
        run(tmp_path, "b", 0.5, 1, [1, 1, 1, 1], [0, 0, 1, 0]),
    ]
    with caplog.at_level("WARNING"):
        rows = comparison_rows(records, [MNLI, F_BIAS], "b", teacher, 200)
    (method,) = [row for row in rows if row["method"] == "m"]
    assert "Δ MNLI-m" in method and "Δ F_bias" not in method
    assert "Δ F_bias of m at 0.5 is undefined" in caplog.text


def test_float32_draw_counts_give_the_intervals_of_float64_to_the_bit(tmp_path):
    """The comparisons take the draw counts as float32 (sums of 0/1 hits are integers, exact below 2^24): their
    intervals must equal those of the float64 statistic written from the formula, Σ_i w_i·hit_i / Σ_i w_i."""
    rng = np.random.default_rng(7)
    n_dev, n_ood = 1500, 2500
    root = tmp_path / "sweep"

    def big_run(method: str, seed: int, p: float) -> tuple[dict, np.ndarray, np.ndarray]:
        out = Path(run_dir(str(root), method, 0.5, seed))
        dev, ood = ((rng.random(n) < p).astype(int) for n in (n_dev, n_ood))
        write_set(out / "eval_predictions" / "mnli.jsonl", (DEV * n_dev)[:n_dev], dev.tolist(), WRONG)
        write_set(out / "eval_predictions" / "hans.jsonl", (OOD * n_ood)[:n_ood], ood.tolist(), FLIP)
        return {"method": method, "sparsity": 0.5, "seed": seed, "run_dir": str(out)}, dev, ood

    methods = [big_run("m", s, 0.7) for s in (1, 2, 3)]
    bases = [big_run("b", s, 0.6) for s in (1, 2, 3)]
    teacher = big_run("t", 0, 0.8)
    hits_dev = np.array([r[1] for r in [*methods, *bases, teacher]], dtype=float)
    hits_ood = np.array([r[2] for r in [*methods, *bases, teacher]], dtype=float)

    def accuracy64(weights):
        w = weights[0]
        acc = (w @ hits_dev[:6].T) / w.sum(axis=1, keepdims=True)
        return (acc[:, :3] - acc[:, 3:]).mean(axis=1)

    def f_bias64(weights):
        dev, ood = ((w @ h.T) / w.sum(axis=1, keepdims=True) for w, h in zip(weights, (hits_dev, hits_ood)))
        values = f_bias_values(dev[:, :-1], ood[:, :-1], dev[:, -1], ood[:, -1])
        return (values[:, :3] - values[:, 3:]).mean(axis=1)

    runs = ([r[0] for r in methods], [r[0] for r in bases])
    got = accuracy_comparison(*runs, MNLI, 2000).interval
    want = bootstrap_interval(accuracy64, [n_dev], n_seeds=3, n_resamples=2000, seed=0)
    assert (got.difference, got.low, got.high) == (want.difference, want.low, want.high)
    got = f_bias_comparison(*runs, teacher[0], F_BIAS, 2000).interval
    want = bootstrap_interval(f_bias64, [n_dev, n_ood], n_seeds=3, n_resamples=2000, seed=0)
    assert (got.difference, got.low, got.high) == (want.difference, want.low, want.high)


def test_rows_pair_by_seed_and_holm_adjusts_each_column(tmp_path):
    records = [
        run(tmp_path, "dense", 0.0, 1, [1, 1, 1, 1], [1, 1, 0, 0]),
        run(tmp_path, "dense", 0.0, 2, [1, 1, 1, 1], [1, 1, 0, 0]),
        run(tmp_path, "a", 0.5, 1, [1, 1, 1, 0], [1, 1, 0, 0]),
        run(tmp_path, "a", 0.5, 2, [1, 1, 0, 0], [1, 0, 0, 0]),
        run(tmp_path, "c", 0.5, 1, [1, 1, 1, 0], [1, 1, 1, 0]),
        run(tmp_path, "c", 0.5, 2, [1, 1, 1, 1], [1, 1, 1, 1]),
        run(tmp_path, "c", 0.5, 3, [1, 1, 1, 1], [1, 1, 1, 1]),  # no dense run of seed 3: left out of the pairing
    ]
    rows = comparison_rows(records, [MNLI, F_BIAS], "dense", records[0], n_resamples=200)
    by_method = {row["method"]: row for row in rows}
    assert "Δ MNLI-m" not in by_method["dense"] and "F_bias" not in by_method["dense"]
    a, c = by_method["a"], by_method["c"]
    assert a["MNLI-m"] == pytest.approx((0.625, math.sqrt(0.03125)))  # 0.75 and 0.5
    assert a["Δ MNLI-m"].seed_differences == pytest.approx((-0.25, -0.5))
    assert c["seeds"] == [1, 2, 3] and c["Δ MNLI-m"].interval.n_seeds == 2
    assert c["Δ MNLI-m"].seed_differences == pytest.approx((-0.25, 0.0))
    # the paired t-test with 1 degree of freedom: p = 1 − (2/π)·atan(|t|), t = mean / (sd / √2)
    for row, diffs in ((a, (-0.25, -0.5)), (c, (-0.25, 0.0))):
        t = abs(np.mean(diffs)) / (np.std(diffs, ddof=1) / math.sqrt(2))
        assert row["Δ MNLI-m"].seed_p == pytest.approx(1 - 2 / math.pi * math.atan(t))
    p_a, p_c = a["Δ MNLI-m"].seed_p, c["Δ MNLI-m"].seed_p
    low, high = sorted((p_a, p_c))
    expected = {low: min(1.0, 2 * low), high: max(min(1.0, 2 * low), high)}
    assert a["Δ MNLI-m Holm"] == pytest.approx(expected[p_a]) and c["Δ MNLI-m Holm"] == pytest.approx(expected[p_c])
    # F_bias of a, seed 1: dev 3/4, OOD 2/4 against the teacher's Δ 0.5 -> (1/3)/0.5; dense seed 1 is the teacher: 1
    assert a["Δ F_bias"].seed_differences[0] == pytest.approx((1 / 3) / 0.5 - 1.0)
    text = comparison_markdown(rows, [MNLI, F_BIAS], "dense")
    assert "| a | 50% | 2 | 62.5 ± 17.7 |" in text and "| Δ MNLI-m vs dense | seed signs, p (Holm) |" in text


@pytest.mark.parametrize("spec", ["HANS", "=hans", "F=mnli>", "T= "])
def test_a_column_spec_without_its_parts_is_refused_naming_the_forms(spec):
    with pytest.raises(InputError, match=r"TITLE=SET, TITLE=SET:LABEL or TITLE=ID_SET>OOD_SET"):
        parse_column(spec)


def test_column_specs_round_trip():
    for column in (MNLI, NON_ENT, F_BIAS):
        assert parse_column(column_spec(column)) == column


def test_the_report_command_adds_the_column_section_with_an_extra_teacher_run(tmp_path, capsys):
    sweep = tmp_path / "sweep"
    for seed, (dev, ood) in enumerate((([1, 1, 1, 0], [1, 0, 1, 0]), ([1, 1, 0, 1], [1, 1, 0, 0])), 1):
        run(sweep, "mask", 0.5, seed, dev, ood)
        run(sweep, "oneshot", 0.5, seed, [1, 0, 0, 0], [1, 0, 1, 0])
    teacher = tmp_path / "teacher"
    write_set(teacher / "eval_predictions" / "mnli.jsonl", DEV, [1, 1, 1, 1], WRONG)
    write_set(teacher / "eval_predictions" / "hans.jsonl", OOD, [1, 1, 0, 0], FLIP)
    (teacher / "all_results.json").write_text(json.dumps({"eval_mnli_accuracy": 1.0, "eval_hans_accuracy": 0.5}))
    results = tmp_path / "results"
    results.mkdir()
    argv = [str(results), "--collect_from", str(sweep), "--metrics", "eval_mnli_accuracy,eval_hans_accuracy"]
    argv += ["--baseline", "mask", "--reference", "teacher", "--extra_run", f"teacher={teacher}", "--no_plots"]
    argv += ["--columns", "MNLI-m=mnli,HANS non-ent=hans:non-entailment,F_bias=mnli>hans"]
    argv += ["--column_baselines", "mask,teacher"]
    assert report_command.main(argv) == 0
    text, _, manifest = report_text(str(results))
    assert manifest["columns"] == ["MNLI-m=mnli", "HANS non-ent=hans:non-entailment", "F_bias=mnli>hans"]
    assert (Path(run_dir(str(results / "per_example"), "teacher", 0.0, 0)) / "mnli.jsonl.gz").is_file()
    assert "## Paired by column against mask" in text and "F_bias against teacher (seed 0)" in text
    against_teacher = text.split("## Paired by column against teacher")[1]
    # the teacher ran once (seed 0): both seeds of each method are paired with it; MNLI-m 1/4 − 4/4 and 3/4 − 4/4
    assert "| oneshot | 50% | 2 | -75.0 [" in against_teacher and "| mask | 50% | 2 | -25.0 [" in against_teacher
    # oneshot − mask: MNLI-m 1/4 − 3/4 = −50 points in both seeds; F_bias: oneshot (1 − 2)/1 / 0.5 = −2 in both seeds,
    # mask seed 1 (3/4 − 2/4)/(3/4) / 0.5 = 2/3, seed 2 (3/4 − 2/4)/(3/4) / 0.5 = 2/3: Δ = −2 − 2/3 = −2.667
    against_mask = text.split("## Paired by column against mask")[1].split("## Paired by column against teacher")[0]
    line = [x for x in against_mask.splitlines() if x.startswith("| oneshot | 50% | 2 |") and "[" in x][-1]
    assert "| -50.0 [" in line and "| -2.667 [" in line
    assert report_command.main([str(results), "--check"]) == 0
    assert "identical" in capsys.readouterr().out


def test_f_bias_divides_by_the_teacher_of_each_runs_seed(tmp_path, capsys):
    """Each seed fine-tunes its own dense model and prunes it: a run's F_bias is against that seed's dense model
    (as the sweep summary's `add_f_bias`), a seed without one against the lowest seed's."""
    sweep = tmp_path / "sweep"
    # dense seed 1: dev 4/4, HANS 2/4, Δ_t = 0.5; dense seed 2: dev 4/4, HANS 3/4, Δ_t = 0.25
    run(sweep, "dense", 0.0, 1, [1, 1, 1, 1], [1, 1, 0, 0])
    run(sweep, "dense", 0.0, 2, [1, 1, 1, 1], [1, 1, 1, 0])
    for seed in (1, 2, 3):  # mask: dev 3/4, HANS 2/4, Δ = 1/3; oneshot: dev 4/4, HANS 1/4, Δ = 3/4
        run(sweep, "mask", 0.5, seed, [1, 1, 1, 0], [1, 0, 1, 0])
        run(sweep, "oneshot", 0.5, seed, [1, 1, 1, 1], [0, 0, 1, 0])
    results = tmp_path / "results"
    results.mkdir()
    argv = [str(results), "--collect_from", str(sweep), "--metrics", "eval_mnli_accuracy,eval_hans_accuracy"]
    argv += ["--baseline", "mask", "--reference", "dense", "--no_plots", "--columns", "F_bias=mnli>hans"]
    assert report_command.main(argv) == 0
    text = report_text(str(results))[0]
    assert "F_bias against the dense run of the same seed (else of seed 1)" in text
    section = text.split("## Paired by column against mask")[1]
    # mask F_bias: seed 1 (1/3)/0.5 = 2/3, seed 2 (1/3)/0.25 = 4/3, seed 3 (no dense run) against seed 1's: 2/3;
    # mean 8/9 = 0.889, sample std 0.385; oneshot: 1.5, 3, 1.5 -> mean 2, std 0.866
    assert "| mask | 50% | 3 | 0.889 ± 0.385 |" in section and "| oneshot | 50% | 3 | 2.000 ± 0.866 |" in section
    # oneshot − mask by seed: 1.5 − 2/3, 3 − 4/3, 1.5 − 2/3 = 5/6, 5/3, 5/6: mean 10/9 = 1.111
    line = [x for x in section.splitlines() if x.startswith("| oneshot | 50% | 3 |") and "[" in x][-1]
    assert "| +1.111 [" in line


def test_an_extra_run_of_another_sweep_keeps_its_sparsity_and_seed(tmp_path):
    """`--extra_run hybrid=<other sweep>/hybrid/s0.5/seed42`: collected at 50%, seed 42 (its sweep_run.json), and
    paired with this sweep's seed 42 at 50%; a run outside any sweep (the teacher) stays at 0%, seed 0."""
    sweep = tmp_path / "sweep"
    run(sweep, "hidden", 0.5, 42, [1, 1, 1, 0], [1, 0, 1, 0])
    other = tmp_path / "other" / "hybrid" / "s0.5" / "seed42"
    write_set(other / "eval_predictions" / "mnli.jsonl", DEV, [1, 1, 0, 0], WRONG)
    write_set(other / "eval_predictions" / "hans.jsonl", OOD, [1, 0, 1, 0], FLIP)
    (other / "all_results.json").write_text(json.dumps({"eval_mnli_accuracy": 0.5, "eval_hans_accuracy": 0.5}))
    (other / "sweep_run.json").write_text(json.dumps({"method": "hybrid", "sparsity": 0.5, "seed": 42}))
    results = tmp_path / "results"
    results.mkdir()
    argv = [str(results), "--collect_from", str(sweep), "--metrics", "eval_mnli_accuracy,eval_hans_accuracy"]
    argv += ["--baseline", "hybrid", "--extra_run", f"hybrid={other}", "--no_plots", "--columns", "MNLI-m=mnli"]
    assert report_command.main(argv) == 0
    assert (Path(run_dir(str(results / "per_example"), "hybrid", 0.5, 42)) / "mnli.jsonl.gz").is_file()
    text = report_text(str(results))[0].split("## Paired by column against hybrid")[1]
    # hidden − hybrid on MNLI-m, the same 4 examples of seed 42: 3/4 − 2/4 = +25 points
    assert "| hidden | 50% | 1 | +25.0 [" in text and "| hybrid | 50% | 1 | 50.0 |" in text


def test_columns_without_a_baseline_are_refused_by_name(tmp_path):
    run(tmp_path / "sweep", "mask", 0.5, 1, [1, 1, 1, 0], [1, 0, 1, 0])
    (tmp_path / "results").mkdir()
    argv = [str(tmp_path / "results"), "--collect_from", str(tmp_path / "sweep"), "--metrics", "eval_mnli_accuracy"]
    with pytest.raises(InputError, match="give --baseline METHOD"):
        report_command.main([*argv, "--columns", "MNLI-m=mnli"])
    with pytest.raises(InputError, match="expected NAME=DIR"):
        report_command.main([*argv, "--baseline", "mask", "--extra_run", "teacher"])


def test_the_sweep_summary_and_the_report_pair_runs_and_pick_the_reference_by_one_rule(tmp_path):
    """Issue 72: the two cases where the sweep summary's pairing and F_bias (`sweep_summary`) and the report's
    (`paired_table`) once disagreed now give one value in both: a lone baseline run of another seed is paired with
    each run (the summary said "no seed in common"), and a run whose seed has no reference run is divided by the
    lowest seed's reference (the summary took the mean of the reference runs)."""
    from hf_srnets.experiments.sweep_summary import add_f_bias, add_paired_intervals, aggregate

    records = [
        run(tmp_path, "dense", 0.0, 7, [1, 1, 1, 1], [1, 1, 0, 0]),  # one run, of a seed no other method has
        run(tmp_path, "dense", 0.0, 8, [1, 1, 1, 1], [1, 0, 0, 0]),
        run(tmp_path, "lone", 0.0, 9, [1, 1, 1, 0], [1, 1, 0, 0]),
        run(tmp_path, "a", 0.5, 1, [1, 1, 1, 0], [1, 1, 0, 0]),
        run(tmp_path, "a", 0.5, 2, [1, 1, 0, 0], [1, 0, 0, 0]),
    ]
    # a lone baseline: both tables pair lone's one run with each of a's two
    report_rows = {r["method"]: r for r in comparison_rows(records, [MNLI], "lone", n_resamples=200)}
    summary_rows, notes = add_paired_intervals(aggregate(records, ["eval_mnli_accuracy"]), records,
                                               ["eval_mnli_accuracy"], "lone", n_resamples=200)  # fmt: skip
    summary_a = next(r for r in summary_rows if r["method"] == "a")
    assert report_rows["a"]["Δ MNLI-m"].interval.difference == pytest.approx((0.75 - 0.75 + 0.5 - 0.75) / 2)
    assert summary_a["eval_mnli_accuracy_paired_diff"] == pytest.approx(
        report_rows["a"]["Δ MNLI-m"].interval.difference
    )
    assert not [n for n in notes if n.startswith("a at")]
    # no reference run of a's seeds: both take dense seed 7's (the lowest), by hand (dev 3/4, OOD 2/4; Δ 1/3 over 0.5)
    for record in records:  # the example counts a sweep's results hold, by which the summary finds its sets
        record.update(eval_mnli_examples=4, eval_hans_examples=4)
    add_f_bias(records, "dense", "eval_mnli_accuracy")
    a1 = next(r for r in records if r["method"] == "a" and r["seed"] == 1)
    teachers = [r for r in records if r["method"] == "dense"]
    report_a = {r["method"]: r for r in comparison_rows(records, [F_BIAS], "dense", teachers, n_resamples=200)}["a"]
    assert a1["f_bias"] == pytest.approx((1 / 3) / 0.5)
    a2 = next(r for r in records if r["method"] == "a" and r["seed"] == 2)  # dev 2/4, OOD 1/4: Δ 0.5 over 0.5
    assert a2["f_bias"] == pytest.approx(1.0)
    assert report_a["F_bias"][0] == pytest.approx((a1["f_bias"] + a2["f_bias"]) / 2)  # one value in both tables


def test_an_interval_that_excludes_zero_with_a_seed_against_it_is_not_decided_in_both_tables(tmp_path):
    """Issue 72's rule in the report's per-column table and the sweep summary's: method − base per seed is +1, +1 and
    −0.25 (seed 3 loses example 0), so every resample's pooled difference is positive and the interval excludes 0,
    but one seed of three goes the other way and the t-test (t = 1.40 on 2 df, p = 0.30) does not reject: both print
    `°` (not decided) and the signs `++−`; with seed 3 removed the two agreeing seeds are decided (`*`)."""
    from hf_srnets.experiments.sweep_summary import add_paired_intervals, aggregate, paired_cells

    records = [
        run(tmp_path, "base", 0.5, 1, [0, 0, 0, 0], [1, 1, 1, 1]),
        run(tmp_path, "base", 0.5, 2, [0, 0, 0, 0], [1, 1, 1, 1]),
        run(tmp_path, "base", 0.5, 3, [1, 1, 1, 1], [1, 1, 1, 1]),
        run(tmp_path, "m", 0.5, 1, [1, 1, 1, 1], [1, 1, 1, 1]),
        run(tmp_path, "m", 0.5, 2, [1, 1, 1, 1], [1, 1, 1, 1]),
        run(tmp_path, "m", 0.5, 3, [0, 1, 1, 1], [1, 1, 1, 1]),
    ]
    d = [1.0, 1.0, -0.25]
    t = statistics.fmean(d) / (statistics.stdev(d) / math.sqrt(3))
    p = 1 - t / math.sqrt(2 + t * t)  # Student's t on 2 df, two-sided
    row = next(r for r in comparison_rows(records, [MNLI], "base", n_resamples=500) if r["method"] == "m")
    assert row["Δ MNLI-m"].interval.low > 0 and row["Δ MNLI-m"].seed_p == pytest.approx(p)
    lines = comparison_markdown([row], [MNLI], "base").splitlines()
    line = [s for s in lines if s.startswith("| m | 50% | 3 |")][-1]  # the paired table's row, below the means
    assert line == f"| m | 50% | 3 | {row['Δ MNLI-m'].interval.format(100.0, 1, marker='°')} | ++− {p:.2g} ({p:.2g}) |"
    summary, _ = add_paired_intervals(aggregate(records, ["eval_mnli_accuracy"]), records,
                                      ["eval_mnli_accuracy"], "base", n_resamples=500)  # fmt: skip
    m = next(r for r in summary if r["method"] == "m")
    assert m["eval_mnli_accuracy_seed_signs"] == "++−" and m["eval_mnli_accuracy_decided"] is False
    assert paired_cells(m, "eval_mnli_accuracy")[0].endswith("]°")
    agreeing = [r for r in records if r["seed"] != 3]
    summary, _ = add_paired_intervals(aggregate(agreeing, ["eval_mnli_accuracy"]), agreeing,
                                      ["eval_mnli_accuracy"], "base", n_resamples=500)  # fmt: skip
    m = next(r for r in summary if r["method"] == "m")
    assert m["eval_mnli_accuracy_decided"] is True and paired_cells(m, "eval_mnli_accuracy")[0].endswith("]*")
