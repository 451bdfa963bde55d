"""The example tables' paired differences with bootstrap intervals, on hand-made run folders:
`examples/robust_tickets_table.py` (attack outcomes per sentence against Fine-tune) and `examples/rmc_table.py`
(MNLI-m, HANS and F_bias against IMP Vanilla from eval_predictions/)."""

from __future__ import annotations

import csv
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from hf_srnets.attack.base import AttackResult
from hf_srnets.attack.results import ResultRecord

ROOT = Path(__file__).resolve().parents[1]


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_attack(run_dir: Path, recipe: str, outcomes: str) -> None:
    """attack_<recipe>.jsonl with one sentence per letter: s(kipped), f(ailed), u (successful)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    names = {"s": "skipped", "f": "failed", "u": "successful"}
    lines = [json.dumps({"type": "header", "format": 1, "settings": {}})]
    for i, letter in enumerate(outcomes):
        result = AttackResult(("a sentence",), None, 1, 0 if letter == "s" else 1, None, names[letter], 5, 0, 2)
        lines.append(ResultRecord(i, f"sst2-{i}", recipe, result).to_json())
    (run_dir / f"attack_{recipe}.jsonl").write_text("\n".join(lines) + "\n")


def test_robust_tickets_table_gives_clean_aua_and_suc_differences_from_fine_tune(tmp_path, monkeypatch) -> None:
    table = load_example("robust_tickets_table")
    runs = tmp_path / "runs"
    # Fine-tune: Clean 8/10, Aua 1/10, Suc 7/8. RobustT: Clean 7/10, Aua 4/10, Suc 3/7.
    write_attack(runs / "finetune", "textfooler", "ssfuuuuuuu")
    write_attack(runs / "robustt", "textfooler", "sssfffuuuf")
    write_attack(runs / "finetune", "textbugger", "ffff")  # RobustT has no TextBugger results
    (runs / "finetune" / "all_results.json").write_text("{}")
    monkeypatch.setattr(sys, "argv", ["robust_tickets_table.py", str(runs), "--output", str(tmp_path / "out")])
    table.main()
    with open(tmp_path / "out" / "table1_sst2_paired.csv") as f:
        rows = {r["metric"]: r for r in csv.DictReader(f) if r["recipe"] == "textfooler"}
    assert float(rows["clean"]["difference"]) == pytest.approx(0.7 - 0.8)
    assert float(rows["aua"]["difference"]) == pytest.approx(0.4 - 0.1)
    assert float(rows["suc"]["difference"]) == pytest.approx(3 / 7 - 7 / 8)
    assert rows["aua"]["sentences"] == "10" and rows["aua"]["seeds"] == "1"
    for row in rows.values():
        assert float(row["low"]) <= float(row["difference"]) <= float(row["high"])
    text = (tmp_path / "out" / "table1_sst2.md").read_text()
    line = next(s for s in text.splitlines() if s.startswith("| RobustT | 1 | 10 | -10.0 ["))
    assert "| +30.0 [" in line and line.endswith("| – | – | – | – |")
    assert "- no interval: no textbugger results of both robustt and finetune for a common seed" in text


def test_robust_tickets_table_regenerates_itself_from_its_saved_per_example_files(tmp_path, monkeypatch) -> None:
    """`--save_per_example` keeps all_results.json and gzipped attack files; the tables made from them alone are the
    same bytes as those made from the run dirs."""
    table = load_example("robust_tickets_table")
    runs = tmp_path / "runs"
    write_attack(runs / "finetune", "textfooler", "ssfuuuuuuu")
    write_attack(runs / "robustt", "textfooler", "sssfffuuuf")
    write_attack(runs / "robustt", "textbugger", "fsuu")
    write_attack(runs / "finetune", "textbugger", "ffsu")
    for run in ("finetune", "robustt"):
        (runs / run / "all_results.json").write_text('{"eval_accuracy": 0.9, "attack_textfooler_num_examples": 10}')
    saved = tmp_path / "per_example"
    for source, out, extra in ((runs, "first", ["--save_per_example", str(saved)]), (saved, "again", [])):
        argv = ["robust_tickets_table.py", str(source), "--output", str(tmp_path / out), "--resamples", "200", *extra]
        monkeypatch.setattr(sys, "argv", argv)
        table.main()
    assert sorted(p.name for p in (saved / "robustt").iterdir()) == [
        "all_results.json", "attack_textbugger.jsonl.gz", "attack_textfooler.jsonl.gz"
    ]  # fmt: skip
    for name in ("table1_sst2.csv", "table1_sst2_paired.csv", "table1_sst2.md"):
        assert (tmp_path / "again" / name).read_bytes() == (tmp_path / "first" / name).read_bytes(), name
    assert "interval of 200 paired bootstrap resamples" in (tmp_path / "again" / "table1_sst2.md").read_text()


def test_robust_tickets_table_pairs_seed_dirs_by_name(tmp_path) -> None:
    table = load_example("robust_tickets_table")
    write_attack(tmp_path / "finetune" / "seed1", "textfooler", "uuuu")
    write_attack(tmp_path / "finetune" / "seed2", "textfooler", "ffff")
    write_attack(tmp_path / "lth" / "seed2", "textfooler", "ffuu")
    intervals, n = table.paired_attack(tmp_path, "lth", "textfooler")
    assert n == 4 and intervals["aua"].n_seeds == 1
    assert intervals["aua"].difference == pytest.approx(0.5 - 1.0)  # against seed 2 only


LABELS = ["entailment", "neutral", "contradiction", "entailment"] * 10  # 40 MNLI-m pairs
HANS = ["entailment"] * 10 + ["non-entailment"] * 10


def right_on(labels: list[str], k: int, wrong: str) -> list[str]:
    return [y if i < k else (wrong if y != wrong else "entailment") for i, y in enumerate(labels)]


def write_rmc_run(
    run_dir: Path, dev_right: int, hans_right: int, f_bias: float | None, files: bool = True, steps: int = 152
) -> None:
    run_dir.mkdir(parents=True)
    results = {"eval_mnli_accuracy": dev_right / 40, "eval_hans_accuracy": hans_right / 20, "train_steps": steps}
    if f_bias is not None:
        results["f_bias"] = f_bias
    (run_dir / "all_results.json").write_text(json.dumps(results))
    if not files:
        return
    (run_dir / "eval_predictions").mkdir()
    for name, labels, k, wrong in (
        ("mnli", LABELS, dev_right, "neutral"),
        ("hans", HANS, hans_right, "non-entailment"),
    ):
        rows = [{"index": i, "id": f"{name}{i}", "label": y, "prediction": p}
                for i, (y, p) in enumerate(zip(labels, right_on(labels, k, wrong)))]  # fmt: skip
        (run_dir / "eval_predictions" / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_rmc_table_gives_accuracy_and_f_bias_differences_from_vanilla(tmp_path, monkeypatch) -> None:
    table = load_example("rmc_table")
    root = tmp_path / "rmc"
    # teacher: dev 0.75, HANS 0.5, Δ_t = 1/3. Vanilla: 0.6 / 0.45, Δ = 0.25, F_bias 0.75. RMC: 0.6 / 0.55,
    # Δ = 1/12, F_bias 0.25: ΔF_bias = -0.5, ΔHANS = +10 points, ΔMNLI-m = 0.
    write_rmc_run(root / "teacher", 30, 10, None)
    write_rmc_run(root / "imp_vanilla" / "s0.4" / "seed42", 24, 9, 0.75)
    write_rmc_run(root / "imp_rmc" / "s0.4" / "seed42", 24, 11, 0.25, steps=308)  # a longer budget than Vanilla
    write_rmc_run(root / "mask_poe" / "s0.4" / "seed42", 24, 11, 0.25, files=False)  # an older run
    write_rmc_run(root / "heads20_ce" / "s0" / "seed7", 24, 11, 0.25)  # no Vanilla run of seed 7
    monkeypatch.setattr(sys, "argv", ["rmc_table.py", str(root), "--output", str(tmp_path / "out")])
    table.main()
    with open(tmp_path / "out" / "paired.csv") as f:
        rows = {r["metric"]: r for r in csv.DictReader(f)}
    assert {r["method"] for r in rows.values()} == {"IMP 40% – RMC"}
    assert float(rows["f_bias"]["difference"]) == pytest.approx(0.25 - 0.75)
    assert float(rows["hans"]["difference"]) == pytest.approx(0.10)
    assert (float(rows["mnli"]["low"]), float(rows["mnli"]["high"])) == (0.0, 0.0)  # the same MNLI-m predictions
    assert float(rows["f_bias"]["low"]) <= -0.5 <= float(rows["f_bias"]["high"])
    text = (tmp_path / "out" / "table.md").read_text()
    # the budgets in the tables themselves: RMC trained 308 steps, Vanilla 152
    assert "| IMP 40% – RMC | 1 | 308 / 152 | +0.0 [+0.0, +0.0] | +10.0 [" in text and "| -0.500 [" in text
    assert "10,000 paired bootstrap resamples" in text
    assert "- no interval: SRNet 40% – mask, PoE: no per-example predictions in" in text
    assert "- no interval: heads −20% – ce: no seed in common with IMP 40% – Vanilla" in text
    assert "| IMP 40% – Vanilla | 1 | 152 | 60.0 | 45.0 |" in text  # the runs' table, with each method's steps
    assert "| IMP 40% – RMC | 1 | 308 | 60.0 | 55.0 |" in text


@pytest.mark.parametrize(
    "folder",
    [
        "robust_tickets_sst2",
        "robust_tickets_fig1/retrained",
        "robust_tickets_fig1/authors_lambda/retrained",
        "robust_tickets_fig1/full_data",
    ],
)
def test_the_committed_table1_is_regenerated_from_its_per_example_files(folder, tmp_path, monkeypatch) -> None:
    """Each committed Table 1's three files, made again from its per_example/ alone (issue 36)."""
    committed = Path(__file__).resolve().parents[1] / "results" / folder
    table = load_example("robust_tickets_table")
    monkeypatch.setattr(
        sys, "argv", ["robust_tickets_table.py", str(committed / "per_example"), "--output", str(tmp_path)]
    )
    table.main()
    for name in ("table1_sst2.csv", "table1_sst2_paired.csv", "table1_sst2.md"):
        assert (tmp_path / name).read_bytes() == (committed / name).read_bytes(), name


# --- examples/robust_tickets_mnli_table.py: the PoE search against the CE search ---------------------------------


def write_search(run_dir: Path, mnli_wrong: int, hans_wrong: tuple[int, int], attack: str) -> None:
    """A search's folder as robust_tickets_mnli.sh leaves it: eval_predictions/ on 10 MNLI-m pairs (the first
    `mnli_wrong` wrong) and 10 HANS pairs (5 entailment, 5 non-entailment; the first of each wrong as given), the
    attack file, and all_results.json with the accuracies those predictions give."""
    mnli = ["entailment", "neutral", "contradiction", "neutral", "entailment"] * 2
    hans = ["entailment"] * 5 + ["non-entailment"] * 5
    flip = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    folder = run_dir / "eval_predictions"
    folder.mkdir(parents=True)
    rows = [{"index": i, "id": f"m{i}", "label": y, "prediction": flip[y] if i < mnli_wrong else y,
             "probabilities": {"entailment": 0.5, "neutral": 0.25, "contradiction": 0.25}}
            for i, y in enumerate(mnli)]  # fmt: skip
    (folder / "mnli.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    wrong = set(range(hans_wrong[0])) | set(range(5, 5 + hans_wrong[1]))
    other = {"entailment": "non-entailment", "non-entailment": "entailment"}
    rows = [{"index": i, "id": f"h{i}", "label": y, "prediction": other[y] if i in wrong else y}
            for i, y in enumerate(hans)]  # fmt: skip
    (folder / "hans.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    write_attack(run_dir, "textfooler", attack)
    clean = sum(c != "s" for c in attack) / len(attack)
    results = {
        "eval_mnli_accuracy": 1 - mnli_wrong / 10,
        "eval_hans_accuracy": 1 - len(wrong) / 10,
        "eval_hans_entailment_accuracy": 1 - hans_wrong[0] / 5,
        "eval_hans_non-entailment_accuracy": 1 - hans_wrong[1] / 5,
        "attack_textfooler_clean_accuracy": clean,
        "attack_textfooler_accuracy_under_attack": attack.count("f") / len(attack),
        "attack_textfooler_attack_success_rate": attack.count("u") / (len(attack) - attack.count("s")),
        "attack_textfooler_avg_queries": 12.5,
        "attack_textfooler_num_examples": len(attack),
        "train_l0_expected_sparsity": 0.042,
        "train_l0_gates_zero": 0.0,
        "train_l0_gates_one": 0.035,
        "train_steps": 47,
        "train_runtime": 700.0,
    }
    (run_dir / "all_results.json").write_text(json.dumps(results))


def run_mnli_table(monkeypatch, source: Path, out: Path, *extra: str) -> None:
    table = load_example("robust_tickets_mnli_table")
    argv = ["robust_tickets_mnli_table.py", str(source), "--output", str(out), *extra]
    argv += [] if "--resamples" in extra else ["--resamples", "200"]
    monkeypatch.setattr(sys, "argv", argv)
    table.main()


def test_robust_tickets_mnli_table_gives_poe_minus_ce_on_every_measure(tmp_path, monkeypatch) -> None:
    runs = tmp_path / "runs"
    write_search(runs / "l0_freelb_poe", mnli_wrong=2, hans_wrong=(1, 3), attack="sffuu")
    write_search(runs / "l0_freelb_ce", mnli_wrong=4, hans_wrong=(0, 4), attack="ssfuu")
    run_mnli_table(monkeypatch, runs, tmp_path / "out")
    paired = {r["measure"]: r for r in csv.DictReader(open(tmp_path / "out" / "l0_freelb_poe_vs_ce_paired.csv"))}
    # hand counts: MNLI-m 8/10 - 6/10; HANS 6/10 - 6/10; HANS ent 4/5 - 5/5; non-ent 2/5 - 1/5
    # attack: clean 4/5 - 3/5, Aua 2/5 - 1/5, Suc 2/4 - 2/3
    expected = {"MNLI-m": 0.2, "HANS": 0.0, "HANS ent": -0.2, "HANS non-ent": 0.2,
                "TF Clean%": 0.2, "TF Aua%": 0.2, "TF Suc%": 2 / 4 - 2 / 3}  # fmt: skip
    assert {m: float(r["difference"]) for m, r in paired.items()} == pytest.approx(expected)
    assert [int(paired[m]["examples"]) for m in expected] == [10, 10, 5, 5, 5, 5, 5]
    rows = list(csv.DictReader(open(tmp_path / "out" / "l0_freelb_poe_vs_ce.csv")))
    assert [r["loss"] for r in rows] == ["poe", "ce"]
    assert [float(r[c]) for r in rows for c in ("mnli_m", "hans_non_ent")] == pytest.approx([0.8, 0.4, 0.6, 0.2])
    text = (tmp_path / "out" / "l0_freelb_poe_vs_ce.md").read_text()
    assert "| poe | 80.0 | 60.0 | 80.0 | 40.0 | 80.0 | 40.0 | 50.0 | 12.5 | 3.5% | 0.0% | 4.2% |" in text
    assert "| MNLI-m | 10 | +20.0 [" in text and "unadjusted for the 7 comparisons" in text


def test_robust_tickets_mnli_table_regenerates_itself_from_its_saved_per_example_files(tmp_path, monkeypatch) -> None:
    runs, saved = tmp_path / "runs", tmp_path / "per_example"
    write_search(runs / "l0_freelb_poe", mnli_wrong=3, hans_wrong=(2, 1), attack="ffuus")
    write_search(runs / "l0_freelb_ce", mnli_wrong=1, hans_wrong=(1, 1), attack="fuuss")
    run_mnli_table(monkeypatch, runs, tmp_path / "first", "--save_per_example", str(saved))
    run_mnli_table(monkeypatch, saved, tmp_path / "again")
    assert sorted(p.name for p in (saved / "l0_freelb_ce").iterdir()) == [
        "all_results.json", "attack_textfooler.jsonl.gz", "hans.jsonl.gz", "mnli.jsonl.gz"
    ]  # fmt: skip
    for name in ("l0_freelb_poe_vs_ce.csv", "l0_freelb_poe_vs_ce_paired.csv", "l0_freelb_poe_vs_ce.md"):
        assert (tmp_path / "again" / name).read_bytes() == (tmp_path / "first" / name).read_bytes(), name


def test_robust_tickets_mnli_table_refuses_predictions_of_another_run(tmp_path, monkeypatch) -> None:
    runs = tmp_path / "runs"
    write_search(runs / "l0_freelb_poe", mnli_wrong=2, hans_wrong=(1, 3), attack="sffuu")
    write_search(runs / "l0_freelb_ce", mnli_wrong=4, hans_wrong=(0, 4), attack="ssfuu")
    results = json.loads((runs / "l0_freelb_ce" / "all_results.json").read_text())
    (runs / "l0_freelb_ce" / "all_results.json").write_text(json.dumps({**results, "eval_mnli_accuracy": 0.61}))
    table = load_example("robust_tickets_mnli_table")
    monkeypatch.setattr(sys, "argv", ["t.py", str(runs), "--output", str(tmp_path / "out"), "--resamples", "50"])
    with pytest.raises(table.InputError, match=r"ce search's mnli predictions give 0\.6000 on MNLI-m, its all_results"):
        table.main()


def test_the_committed_robust_tickets_mnli_table_is_regenerated_from_its_per_example_files(
    tmp_path, monkeypatch
) -> None:
    committed = ROOT / "results" / "robust_tickets_mnli"
    run_mnli_table(monkeypatch, committed / "per_example", tmp_path, "--resamples", "10000")
    for name in ("l0_freelb_poe_vs_ce.csv", "l0_freelb_poe_vs_ce_paired.csv", "l0_freelb_poe_vs_ce.md"):
        assert (tmp_path / name).read_bytes() == (committed / name).read_bytes(), name
