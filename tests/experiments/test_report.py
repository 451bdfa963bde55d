"""Committed per-example outputs and the report regenerated from them: the committed fixture
`tests/fixtures/report_tiny/` is what the collector makes of a hand-made sweep folder, the report command on it gives
the committed `report.md`, and its cells are checked against hand computations.

The hand-made sweep: MNLI 40 pairs (3 labels), HANS 20 pairs; methods `vanilla` (baseline and reference, 0%), `imp`
and `heads` (40%), seeds 1–3; a run is right on its first k examples of a set and wrong on the rest. To rebuild the
fixture after a deliberate format change: `python -c "import tests.experiments.test_report as t; t.write_fixture()"`.
"""

from __future__ import annotations

import filecmp
import gzip
import json
import math
import os
import shutil
from pathlib import Path

import pytest

from hf_srnets.commands import report as report_command
from hf_srnets.errors import InputError
from hf_srnets.experiments.per_example import collect_per_example, load_records
from hf_srnets.experiments.report import regenerate, report_text
from hf_srnets.experiments.sweep_runs import RUN_META, run_dir

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "report_tiny"
NLI = ("entailment", "neutral", "contradiction")
MNLI = [NLI[i % 3] for i in range(40)]
HANS = ["entailment" if i % 2 else "non-entailment" for i in range(20)]
METRICS = ["eval_mnli_accuracy", "eval_hans_accuracy"]
# (method, sparsity) -> per seed 1, 2, 3: (MNLI right, HANS right)
RIGHT = {
    ("vanilla", 0.0): [(20, 9), (22, 10), (24, 11)],
    ("imp", 0.4): [(24, 12), (25, 12), (30, 13)],
    ("heads", 0.4): [(22, 9), (21, 11), (25, 10)],
}

# what each run took, as all_results.json gives it (seconds; the Trainer's keys)
COST = {
    method: {"train_runtime": train, "eval_mnli_runtime": 24.0, "eval_hans_runtime": 12.0, "torch_num_threads": 1}
    for method, train in (("vanilla", 720.0), ("imp", 360.0), ("heads", 360.0))
}


def first_right(labels: list[str], k: int, wrong: dict[str, str]) -> list[str]:
    return [y if i < k else wrong[y] for i, y in enumerate(labels)]


def rows(labels: list[str], predictions: list[str], prefix: str) -> list[dict]:
    """eval_predictions rows as a run writes them, probabilities over the model's 3 labels."""
    out = []
    for i, (y, p) in enumerate(zip(labels, predictions)):
        model = p if p in NLI else "neutral"  # HANS non-entailment: the model said neutral
        probabilities = {name: 0.8 if name == model else 0.1 for name in NLI}
        out.append({"index": i, "id": f"{prefix}{i}", "label": y, "prediction": p, "probabilities": probabilities})
    return out


def make_sweep(root: Path) -> None:
    for (method, sparsity), per_seed in RIGHT.items():
        for seed, (k_mnli, k_hans) in enumerate(per_seed, 1):
            out = Path(run_dir(str(root), method, sparsity, seed))
            (out / "eval_predictions").mkdir(parents=True)
            flip = {"entailment": "non-entailment", "non-entailment": "entailment"}
            sets = {
                "mnli": rows(MNLI, first_right(MNLI, k_mnli, dict(zip(NLI, NLI[1:] + NLI[:1]))), "m"),
                "hans": rows(HANS, first_right(HANS, k_hans, flip), "h"),
            }
            for name, lines in sets.items():
                (out / "eval_predictions" / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
            (out / RUN_META).write_text(json.dumps({"method": method, "sparsity": sparsity, "seed": seed}))
            results = {"eval_mnli_accuracy": k_mnli / 40, "eval_hans_accuracy": k_hans / 20, **COST[method]}
            (out / "all_results.json").write_text(json.dumps(results))


def write_fixture() -> None:
    """Rebuild `tests/fixtures/report_tiny/` (module docstring)."""
    import tempfile

    shutil.rmtree(FIXTURE, ignore_errors=True)
    with tempfile.TemporaryDirectory() as sweep:
        make_sweep(Path(sweep))
        collect_per_example(sweep, str(FIXTURE), METRICS, "vanilla", "vanilla")
    regenerate(str(FIXTURE), plots=False)


def test_the_collector_writes_the_committed_fixture_byte_for_byte(tmp_path) -> None:
    make_sweep(tmp_path / "sweep")
    written = collect_per_example(str(tmp_path / "sweep"), str(tmp_path / "exp"), METRICS, "vanilla", "vanilla")
    assert len(written) == 9 * 2  # 9 runs, 2 sets
    made = sorted(p.relative_to(tmp_path / "exp") for p in (tmp_path / "exp").rglob("*") if p.is_file())
    committed = sorted(p.relative_to(FIXTURE) for p in FIXTURE.rglob("*") if p.is_file() and p.parent != FIXTURE)
    assert made == committed
    assert all(filecmp.cmp(tmp_path / "exp" / p, FIXTURE / p, shallow=False) for p in made)
    with gzip.open(FIXTURE / "per_example" / "imp" / "s0.4" / "seed1" / "mnli.jsonl.gz", "rt") as f:
        first = json.loads(f.readline())
    assert first == {
        "id": "m0",
        "label": "entailment",
        "prediction": "entailment",
        "probabilities": {"entailment": 0.8, "neutral": 0.1, "contradiction": 0.1},
    }


def test_the_report_command_regenerates_the_committed_table(tmp_path, capsys) -> None:
    experiment = tmp_path / "report_tiny"
    shutil.copytree(FIXTURE, experiment)
    assert report_command.main([str(experiment), "--check"]) == 0
    (experiment / "report.md").unlink()
    assert report_command.main([str(experiment), "--no_plots"]) == 0
    assert (experiment / "report.md").read_text() == (FIXTURE / "report.md").read_text()
    assert (experiment / "report.csv").is_file()


def test_the_report_text_does_not_depend_on_where_the_folder_lies(tmp_path) -> None:
    text, _, _ = report_text(str(FIXTURE))
    assert text == (FIXTURE / "report.md").read_text()


def cell(text: str, method: str, column: int) -> str:
    line = next(s for s in text.splitlines() if s.startswith(f"| {method} | 40% | 3 |") and "[" in s)
    return [c.strip() for c in line.strip("|").split("|")][column]


def test_the_committed_cells_match_hand_computations() -> None:
    text = (FIXTURE / "report.md").read_text()
    # means over seeds: vanilla MNLI (20 + 22 + 24) / 3 / 40 = 55.00%, sample std 2 / 40 = 5.00
    assert "| vanilla | 0% | 3 | 55.00 ± 5.00 | 50.00 ± 5.00 |" in text
    # imp − vanilla on MNLI per seed 4, 3, 6 of 40: mean 13/3/40 = +10.83 points; t = 4.333 / (1.528 / √3) = 4.914
    # on 2 df: p = 1 − t / √(2 + t²) = 0.039; heads 2, −1, 1: t = 0.667 / (1.528 / √3) = 0.756, p = 0.53;
    # Holm over the 2 rows: 2 · 0.039 = 0.078, and max(0.078, 1 · 0.53) = 0.53
    assert cell(text, "imp", 3).startswith("+10.83 [")
    t = (13 / 3) / (math.sqrt(7 / 3) / math.sqrt(3))
    p = 1 - t / math.sqrt(2 + t * t)
    # the seed cell leads with the per-seed signs in seed order (4, 3, 6: +++; heads 2, −1, 1: +−+)
    assert cell(text, "imp", 4) == f"+++ {p:.2g} ({2 * p:.2g})" == "+++ 0.039 (0.078)"
    assert cell(text, "heads", 3).startswith("+1.67 [")
    assert cell(text, "heads", 4) == "+−+ 0.53 (0.53)"
    # the verdict: imp's interval excludes 0 and its seeds agree: decided (*), though Holm's 0.078 is above 0.05
    assert cell(text, "imp", 3).endswith("]*")
    # HANS: imp 3, 2, 2 of 20: +11.67 points; heads 0, 1, −1: +0.00, t = 0, p = 1
    assert cell(text, "imp", 5).startswith("+11.67 [") and cell(text, "heads", 5).startswith("+0.00 [")
    assert cell(text, "heads", 6) == "0+− 1 (1)"
    # F_bias per seed, Δ = (F_dev − F_OOD) / F_dev: seed 1 vanilla (0.5 − 0.45) / 0.5 = 0.1, imp (0.6 − 0.6) / 0.6
    # = 0 -> 0; seed 2 (0.625 − 0.6) / 0.625 = 0.04 over (0.55 − 0.5) / 0.55 = 0.0909 -> 0.44; seed 3 (0.75 − 0.65)
    # / 0.75 = 0.1333 over (0.6 − 0.55) / 0.6 = 0.0833 -> 1.6: mean 0.680, sample std √(0.6832) = 0.827
    assert "| imp | 40% | 3 | 0.680 ± 0.827 |" in text
    assert "10,000 paired bootstrap resamples" in text and "Holm-adjusted" in text and "unadjusted" in text


def test_a_file_that_does_not_give_its_runs_reported_value_is_refused(tmp_path) -> None:
    experiment = tmp_path / "exp"
    shutil.copytree(FIXTURE, experiment)
    record = experiment / "per_example" / "heads" / "s0.4" / "seed2" / "run.json"
    run = json.loads(record.read_text())
    run["results"]["eval_mnli_accuracy"] = 0.9
    record.write_text(json.dumps(run))
    with pytest.raises(InputError, match=r"its run reported 0\.900000"):
        report_text(str(experiment))


def test_a_run_folder_copied_into_another_is_refused_not_counted_as_a_seed(tmp_path) -> None:
    experiment = tmp_path / "exp"
    shutil.copytree(FIXTURE, experiment)
    run = experiment / "per_example" / "imp" / "s0.4" / "seed2"
    shutil.copytree(run, run / "seed2")  # what `cp -r seed2 <dest>` does when <dest>/seed2 already exists
    with pytest.raises(InputError, match=r"two runs of imp at sparsity 0\.4, seed 2: .*seed2 and .*seed2/seed2"):
        report_text(str(experiment))


def test_the_check_fails_on_a_planted_difference(tmp_path, capsys) -> None:
    experiment = tmp_path / "report_tiny"
    shutil.copytree(FIXTURE, experiment)
    committed = (experiment / "report.md").read_text()
    (experiment / "report.md").write_text(committed.replace("55.00 ± 5.00", "55.10 ± 5.00"))
    assert report_command.main([str(experiment), "--check"]) == 1
    assert "55.10 ± 5.00" in capsys.readouterr().out


def test_without_per_example_outputs_one_error_names_the_collect_step(tmp_path) -> None:
    with pytest.raises(InputError, match="--collect_from"):
        report_command.main([str(tmp_path)])
    assert len(load_records(str(FIXTURE))) == 9
    os.makedirs(tmp_path / "sweep")
    with pytest.raises(InputError, match="no finished run"):
        collect_per_example(str(tmp_path / "sweep"), str(tmp_path), METRICS, "vanilla")


def test_hans_cells_are_recomputed_from_the_files_too(tmp_path) -> None:
    experiment = tmp_path / "exp"
    shutil.copytree(FIXTURE, experiment)
    manifest = experiment / "per_example" / "manifest.json"
    manifest.write_text(
        json.dumps({**json.loads(manifest.read_text()), "metrics": [*METRICS, "eval_hans_entailment_accuracy"]})
    )
    text, _, _ = report_text(str(experiment))
    # HANS gold is entailment at the odd indices; vanilla is right on its first 9, 10, 11 examples: 4, 5, 5 of the
    # 10 entailment pairs, mean 46.67%, sample std 5.77
    assert "| vanilla | 0% | 3 | 55.00 ± 5.00 | 50.00 ± 5.00 | 46.67 ± 5.77 |" in text


@pytest.mark.parametrize(
    ("changes", "key", "missing"),
    [
        ({"baseline": "vanila"}, "baseline", "vanila"),
        ({"reference": "teacher"}, "reference", "teacher"),
        ({"columns": ["MNLI=mnli"], "column_baselines": ["imp", "hedas"]}, "column_baselines", "hedas"),
    ],
    ids=["baseline", "reference", "column_baselines"],
)
def test_a_manifest_naming_a_method_without_runs_is_refused(tmp_path, changes, key, missing) -> None:
    experiment = tmp_path / "exp"
    shutil.copytree(FIXTURE, experiment)
    manifest = experiment / "per_example" / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), **changes}))
    with pytest.raises(InputError, match=rf"manifest\.json: {key} '{missing}' has no run under .*heads, imp, vanilla"):
        report_command.main([str(experiment)])
    assert (experiment / "report.md").read_text() == (FIXTURE / "report.md").read_text()


COMMITTED = sorted(p.parent.parent.name for p in (FIXTURE.parents[2] / "results").glob("*/per_example/manifest.json"))


@pytest.mark.slow
@pytest.mark.parametrize("experiment", COMMITTED)
def test_every_committed_experiment_regenerates_its_report_md(experiment, capsys) -> None:
    folder = FIXTURE.parents[2] / "results" / experiment
    assert report_command.main([str(folder), "--check"]) == 0, capsys.readouterr().out


def test_the_report_states_the_compute_from_the_committed_costs(tmp_path) -> None:
    """COST by hand: vanilla 3 x 720 s = 0.60 h of training, imp and heads 3 x 360 s = 0.30 h each; every run 24 +
    12 s of evaluation (3 runs: 0.03 h; 9 runs: 0.09 h); a vanilla run (720 + 36) / 60 = 12.6 min, imp 6.6."""
    text = (FIXTURE / "report.md").read_text()
    budget = "Budget: 9 runs, 1.20 h of training and 0.09 h of evaluation (summed runtimes; torch threads 1)."
    assert "## Compute\n\n" + budget in text
    assert "| vanilla | 3 | 0.60 | 0.03 | 12.6 |" in text and "| imp | 3 | 0.30 | 0.03 | 6.6 |" in text
    run = json.loads((FIXTURE / "per_example" / "imp" / "s0.4" / "seed2" / "run.json").read_text())
    assert run["cost"] == COST["imp"]
    experiment = tmp_path / "report_tiny"
    shutil.copytree(FIXTURE, experiment)
    for path in experiment.rglob("run.json"):  # collected before the cost was kept: no section
        run = json.loads(path.read_text())
        if run["method"] != "vanilla":
            del run["cost"]
        path.write_text(json.dumps(run))
    text, _, _ = report_text(str(experiment))
    assert "Budget: 3 runs, 0.60 h of training" in text and " 6 runs kept no cost " in text
    for path in experiment.rglob("run.json"):
        run = json.loads(path.read_text())
        run.pop("cost", None)
        path.write_text(json.dumps(run))
    assert "## Compute" not in report_text(str(experiment))[0]
