"""End to end: a run with --reference_results (an earlier tiny run) records F_bias, the example counts and the
easy/hard metrics of the real MNLI dev pairs in all_results.json, the printed table and the card."""

import json

import pytest
from conftest import mnli_run_args

from hf_srnets.cli import main


@pytest.mark.slow  # two MiniLM runs (the reference trains 15 steps): ~1-3 min on a shared CPU
def test_a_run_against_a_reference_run_has_f_bias_and_easy_hard_results(minilm, data_dir, tmp_path, capsys):
    # The reference: MiniLM trained on the first 32 dev-matched pairs and evaluated on them (memorised, so its
    # Δ = (F_dev - F_HANS) / F_dev is positive and F_bias is defined).
    reference = tmp_path / "reference"
    dev = str(data_dir / "mnli" / "dev_matched.tsv")
    ref_args = ["--do_train", "--train_file", dev, "--num_train_epochs", "15", "--learning_rate", "3e-4", "--seed", "1"]
    ref = main(mnli_run_args(minilm, data_dir, reference, *ref_args, train=32, eval=32, ood=64, batch=32))
    ref_gap = (ref["eval_mnli_accuracy"] - ref["eval_hans_accuracy"]) / ref["eval_mnli_accuracy"]
    assert ref_gap > 0, ref
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
