"""examples/l0_gates_plot.py: the Fig. 1 curve read from an l0 search's log history (a finished search or its latest
checkpoint) and a ticket's pruned share per layer."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import pytest
from conftest import tiny_model

ROOT = Path(__file__).resolve().parents[1]


def load_script():
    spec = importlib.util.spec_from_file_location("l0_gates_plot", ROOT / "examples" / "l0_gates_plot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def log_entry(step: int, zero: float, one: float) -> dict:
    return {"step": step, "l0_gates_zero": zero, "l0_gates_one": one, "l0_expected_density": 0.9, "l0_lambda": 0.5}


def test_the_latest_checkpoint_gives_the_curve_of_a_running_search(tmp_path):
    search = tmp_path / "search"
    for step, history in [
        (250, [log_entry(50, 0.0, 0.1)]),
        (500, [log_entry(50, 0.0, 0.1), log_entry(100, 0.02, 0.3)]),
    ]:
        (search / f"checkpoint-{step}").mkdir(parents=True)
        extra = [{"step": step, "loss": 0.5}]  # a log entry without gate fractions is left out
        state = {"log_history": history + extra}
        (search / f"checkpoint-{step}" / "trainer_state.json").write_text(json.dumps(state))
    summary = load_script().main([str(search), "--output", str(tmp_path / "out")])
    assert summary["read_from"].endswith("checkpoint-500/trainer_state.json")  # 500 > 250, not by string order
    with open(tmp_path / "out" / "gates.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["step"], r["l0_gates_zero"], r["l0_gates_one"]) for r in rows] == [
        ("50", "0.0", "0.1"),
        ("100", "0.02", "0.3"),
    ]
    assert (tmp_path / "out" / "fig1_gates.png").stat().st_size > 0


def test_layer_sparsity_of_a_ticket_and_errors(tmp_path):
    from hf_srnets.masking import SRNetModel
    from hf_srnets.pruning import ThresholdConfig

    SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5)).save_pretrained(tmp_path / "ticket")
    layers = load_script().layer_sparsity(tmp_path / "ticket")
    # ⌊0.5·n⌋ zeros in every matrix of even size: exactly half of each layer and of the classifier (2 layers)
    assert layers == {"layer 0": 0.5, "layer 1": 0.5, "classifier": 0.5}
    script = load_script()
    with pytest.raises(ValueError, match=r"no trainer_state\.json"):
        script.main([str(tmp_path), "--output", str(tmp_path / "o")])
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "trainer_state.json").write_text(json.dumps({"log_history": [{"step": 1, "loss": 1.0}]}))
    with pytest.raises(ValueError, match="--pruning l0"):
        script.main([str(tmp_path / "plain"), "--output", str(tmp_path / "o")])


def test_compare_draws_each_search_and_reports_its_last_row(tmp_path):
    for name, last in (("a", log_entry(100, 0.2, 0.5)), ("b", log_entry(100, 0.3, 0.6))):
        (tmp_path / name).mkdir()
        state = {"log_history": [log_entry(50, 0.0, 0.1), last]}
        (tmp_path / name / "trainer_state.json").write_text(json.dumps(state))
    script = load_script()
    out = tmp_path / "out"
    summary = script.main(
        [str(tmp_path / "a"), "--output", str(out), "--label", "A", "--compare", f"B={tmp_path / 'b'}"]
    )
    assert {label: row["l0_gates_zero"] + row["l0_gates_one"] for label, row in summary["compared"].items()} == {
        "A": pytest.approx(0.7),
        "B": pytest.approx(0.9),
    }
    assert (out / "fig1_compare.png").stat().st_size > 0
    with pytest.raises(SystemExit):
        script.main([str(tmp_path / "a"), "--output", str(out), "--compare", str(tmp_path / "b")])  # no LABEL=


def test_a_results_folder_gives_back_its_curve_and_bad_columns_are_named(tmp_path):
    """The committed gates.csv of a results folder is read back with its types, so the files it writes are the same
    bytes: `gates.csv` again from `gates.csv`, as from the trainer state it was first made from."""
    search = tmp_path / "search"
    search.mkdir()
    history = [log_entry(50, 0.0, 0.13762187311633514), log_entry(100, 1.0454339963833635e-05, 0.1980926009644364)]
    (search / "trainer_state.json").write_text(json.dumps({"log_history": history}))
    script = load_script()
    first = script.main([str(search), "--output", str(tmp_path / "first")])
    again = script.main([str(tmp_path / "first"), "--output", str(tmp_path / "again")])
    assert again["read_from"].endswith("first/gates.csv") and again["last"] == first["last"]
    assert (tmp_path / "again" / "gates.csv").read_bytes() == (tmp_path / "first" / "gates.csv").read_bytes()
    assert (tmp_path / "first" / "gates.csv").read_text().splitlines()[1] == "50,0.0,0.13762187311633514,0.9,0.5"
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "gates.csv").write_text("step,zero\n50,0.1\n")
    with pytest.raises(ValueError, match="columns"):
        script.main([str(tmp_path / "bad"), "--output", str(tmp_path / "o")])


def test_the_committed_fig1_curves_regenerate_from_the_results_folders(tmp_path):
    """results/robust_tickets_fig1's gates.csv (both searches) written again from the committed files alone, and the
    comparison's last rows: 70.2% and 72.0% of the gates at 0 or 1 (the README's tables)."""
    results = ROOT / "results" / "robust_tickets_fig1"
    compare = f"authors={results / 'authors_lambda'}"
    summary = load_script().main([str(results), "--output", str(tmp_path), "--label", "ours", "--compare", compare])
    assert (tmp_path / "gates.csv").read_bytes() == (results / "gates.csv").read_bytes()
    polarised = {label: row["l0_gates_zero"] + row["l0_gates_one"] for label, row in summary["compared"].items()}
    assert {label: round(100 * share, 1) for label, share in polarised.items()} == {"ours": 70.2, "authors": 72.0}
    assert (tmp_path / "fig1_compare.png").stat().st_size > 0
