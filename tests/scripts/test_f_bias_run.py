"""End to end: a run with --reference_results (an earlier tiny run) records F_bias, the example counts and the
easy/hard metrics of the real MNLI dev pairs in all_results.json, the printed table and the card."""

import json

import pytest
from conftest import mnli_run_args

from hf_srnets.commands.glue_sparse import main


@pytest.mark.slow  # one MiniLM evaluation of 32 dev and 64 HANS pairs
def test_a_run_against_a_reference_run_has_f_bias_and_easy_hard_results(minilm, data_dir, tmp_path, capsys):
    # The reference: the all_results.json of an earlier run, as a run writes it (a trained reference would cost
    # minutes here and only needs to have Δ = (F_dev - F_HANS) / F_dev > 0).
    reference = tmp_path / "reference"
    reference.mkdir()
    ref = {"eval_mnli_accuracy": 0.84, "eval_hans_accuracy": 0.6, "eval_mnli_examples": 32, "eval_hans_examples": 64}
    (reference / "all_results.json").write_text(json.dumps(ref))
    ref_gap = (0.84 - 0.6) / 0.84
    # The run: the untrained MiniLM (a new head), on the same 32 dev pairs and 64 HANS pairs.
    out = tmp_path / "run"
    main(mnli_run_args(minilm, data_dir, out, "--reference_results", str(reference), train=32, eval=32, ood=64))
    saved = json.loads((out / "all_results.json").read_text())
    gap = (saved["eval_mnli_accuracy"] - saved["eval_hans_accuracy"]) / saved["eval_mnli_accuracy"]
    assert saved["eval_mnli_examples"] == 32 and saved["eval_hans_examples"] == 64
    assert saved["f_bias_hans"] == pytest.approx(gap / ref_gap)
    assert saved["f_bias"] == saved["f_bias_mean"] == saved["f_bias_hans"]  # MNLI: the task value is HANS's
    # easy/hard from the dev set's own `hard` column (the first 32 rows of dev_matched.tsv: 12 easy, 20 hard)
    assert saved["eval_mnli_easy_examples"] == 12 and saved["eval_mnli_hard_examples"] == 20
    for part in ("easy", "hard"):
        assert 0 <= saved[f"eval_mnli_{part}_accuracy"] <= 1 and 1 / 3 <= saved[f"eval_mnli_{part}_confidence"] <= 1
    assert saved["eval_mnli_easy_hard_gap"] == pytest.approx(
        saved["eval_mnli_easy_accuracy"] - saved["eval_mnli_hard_accuracy"]
    )
    weighted = (12 * saved["eval_mnli_easy_accuracy"] + 20 * saved["eval_mnli_hard_accuracy"]) / 32
    assert weighted == pytest.approx(saved["eval_mnli_accuracy"])  # the parts are the evaluated predictions
    printed = capsys.readouterr().out
    assert "Relative bias F_bias against" in printed and "Easy and hard mnli examples" in printed
    card = (out / "README.md").read_text()
    assert "### Relative bias" in card and "### Easy and hard examples" in card
