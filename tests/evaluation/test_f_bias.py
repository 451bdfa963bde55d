"""F_bias against a reference run (Du et al. 2023, §3.4): the paper's Table 1 numbers, pooling, errors, the card."""

import json
import logging

import pytest

from hf_srnets.evaluation import check_reference, f_bias_results, f_bias_table, read_reference_results
from hf_srnets.publish.card import render_model_card
from hf_srnets.publish.card_facts import CardFacts


def _results(dev, sets, id_name="mnli"):
    """Results with accuracies in percent as the paper prints them; `sets`: name -> (accuracy, count or None)."""
    out = {f"eval_{id_name}_accuracy": dev / 100}
    for name, (acc, n) in sets.items():
        out[f"eval_{name}_accuracy"] = acc / 100
        if n is not None:
            out[f"eval_{name}_examples"] = n
    return out


def test_table_1_mnli_20_percent_sparse():
    # Table 1: BERT-base 84.2 / 59.8, 20% sparse 84.4 / 55.5 -> F_bias 1.182
    model = _results(84.4, {"hans": (55.5, 30000)})
    base = _results(84.2, {"hans": (59.8, 30000)})
    out = f_bias_results(model, base, "mnli", ["hans"], "base.json")
    assert out["f_bias_hans"] == pytest.approx(1.182, abs=5e-4)
    assert out["accuracy_gap_hans"] == pytest.approx((84.4 - 55.5) / 84.4)
    assert out["reference_accuracy_gap_hans"] == pytest.approx((84.2 - 59.8) / 84.2)
    assert out["f_bias"] == out["f_bias_mean"] == out["f_bias_hans"]  # one OOD set: the task value is HANS's
    assert "f_bias_pooling" not in out


def test_table_1_fever_pools_sym1_and_sym2():
    # Table 1, FEVER, 20%: 86.5 / 57.0 / 64.6 against BERT-base 86.2 / 58.9 / 64.5 -> 1.045 (712 examples each)
    sets = {"fever_symmetric_v1": (57.0, 712), "fever_symmetric_v2": (64.6, 712)}
    model = _results(86.5, sets, "fever")
    base = _results(86.2, {"fever_symmetric_v1": (58.9, 712), "fever_symmetric_v2": (64.5, 712)}, "fever")
    out = f_bias_results(model, base, "fever", list(sets), "base.json")
    # pooled F_OOD with equal counts = the mean: model 60.8, base 61.7
    assert out["f_bias"] == pytest.approx(((86.5 - 60.8) / 86.5) / ((86.2 - 61.7) / 86.2))
    assert out["f_bias"] == pytest.approx(1.045, abs=5e-4)
    sym1 = ((86.5 - 57.0) / 86.5) / ((86.2 - 58.9) / 86.2)
    sym2 = ((86.5 - 64.6) / 86.5) / ((86.2 - 64.5) / 86.2)
    assert out["f_bias_fever_symmetric_v1"] == pytest.approx(sym1)  # 1.0768
    assert out["f_bias_fever_symmetric_v2"] == pytest.approx(sym2)  # 1.0057
    assert out["f_bias_mean"] == pytest.approx((sym1 + sym2) / 2)
    assert out["f_bias_pooling"] == "examples"


def test_qqp_pools_by_example_count_and_falls_back_to_the_mean():
    # Table 1, QQP, 20%: 90.7 / PAWS-wiki 47.2 (8,000) / PAWS-qqp 33.5 (677) against 90.9 / 48.9 / 34.7
    model = _results(90.7, {"paws_wiki": (47.2, 8000), "paws_qqp": (33.5, 677)}, "qqp")
    base = _results(90.9, {"paws_wiki": (48.9, 8000), "paws_qqp": (34.7, 677)}, "qqp")
    out = f_bias_results(model, base, "qqp", ["paws_qqp", "paws_wiki"], "base.json")
    ood = (47.2 * 8000 + 33.5 * 677) / 8677  # 46.131
    ref_ood = (48.9 * 8000 + 34.7 * 677) / 8677  # 47.792
    assert out["f_bias"] == pytest.approx(((90.7 - ood) / 90.7) / ((90.9 - ref_ood) / 90.9))
    assert out["f_bias"] == pytest.approx(1.037, abs=1.5e-3)  # the paper's 1.037 from its rounded accuracies
    del base["eval_paws_qqp_examples"]  # an older reference without counts: the mean of the accuracies, said so
    out = f_bias_results(model, base, "qqp", ["paws_qqp", "paws_wiki"], "base.json")
    assert out["f_bias_pooling"] == "mean"
    assert out["f_bias"] == pytest.approx(((90.7 - 40.35) / 90.7) / ((90.9 - 41.8) / 90.9))  # 1.0277


def test_an_extra_ood_file_stays_out_of_the_task_value():
    model = _results(84.4, {"hans": (55.5, 100), "anli": (30.0, 100)})
    base = _results(84.2, {"hans": (59.8, 100), "anli": (33.0, 100)})
    out = f_bias_results(model, base, "mnli", ["hans", "anli"], "base.json")
    assert out["f_bias"] == pytest.approx(out["f_bias_hans"])
    assert out["f_bias_mean"] == pytest.approx((out["f_bias_hans"] + out["f_bias_anli"]) / 2)


def test_reference_lacking_a_key_is_an_error_naming_key_and_file(tmp_path):
    model = _results(84.4, {"hans": (55.5, 10)})
    with pytest.raises(ValueError, match=r"ref/all_results.json has no 'eval_hans_accuracy'"):
        f_bias_results(model, {"eval_mnli_accuracy": 0.84}, "mnli", ["hans"], "ref/all_results.json")
    with pytest.raises(ValueError, match=r"'eval_mnli_accuracy'"):
        check_reference({"eval_hans_accuracy": 0.6}, "mnli", ["hans"], "ref.json")
    with pytest.raises(FileNotFoundError, match=r"no all_results\.json"):
        read_reference_results(tmp_path)
    (tmp_path / "all_results.json").write_text(json.dumps({"eval_mnli_accuracy": 0.8}))
    results, source = read_reference_results(tmp_path)  # the run dir holding one
    assert results == {"eval_mnli_accuracy": 0.8} and source == str(tmp_path / "all_results.json")


def test_a_reference_without_an_ood_drop_gives_a_warning_and_no_value(caplog):
    model = _results(84.4, {"hans": (55.5, 10)})
    base = _results(60.0, {"hans": (61.0, 10)})  # Δ_reference = -1/60 < 0
    with caplog.at_level(logging.WARNING):
        out = f_bias_results(model, base, "mnli", ["hans"], "ref.json")
    assert "f_bias_hans" not in out and "f_bias" not in out and "f_bias_mean" not in out
    assert out["reference_accuracy_gap_hans"] == pytest.approx(-1 / 60)
    assert "undefined" in caplog.text and "ref.json" in caplog.text
    assert "| hans | 0.342 | -0.017 | undefined |" in f_bias_table(out)


def test_the_warning_of_one_reference_is_given_once_however_many_runs_are_compared_with_it(caplog):
    base = _results(60.0, {"hans": (61.0, 10)})  # Δ_reference = -1/60 < 0
    source = "the reference of test_the_warning_of_one_reference_is_given_once"  # a message no other test gives
    with caplog.at_level(logging.WARNING):
        for dev in (84.4, 70.0, 65.0):
            f_bias_results(_results(dev, {"hans": (55.5, 10)}), base, "mnli", ["hans"], source)
    messages = [record.getMessage() for record in caplog.records if source in record.getMessage()]
    assert messages and len(messages) == len(set(messages)), "each warning once, not once a run"
    assert any(message.startswith("F_bias of hans is undefined") for message in messages)


def test_card_has_a_relative_bias_section_with_the_citation():
    model = _results(84.4, {"hans": (55.5, 30000)})
    base = _results(84.2, {"hans": (59.8, 30000)})
    results = {**model, **f_bias_results(model, base, "mnli", ["hans"], "base.json")}
    card = render_model_card(
        CardFacts(task="mnli", loss="ce", title="t", results=results, reference_results="runs/bert_base")
    )
    assert "### Relative bias" in card and "`runs/bert_base`" in card
    assert "| hans | 0.342 | 0.290 | 1.182 |" in card
    assert "| task | 0.342 | 0.290 | 1.182 |" in card
    assert "du2023robustness" in card  # the BibTeX of Du et al. 2023
    assert "### Relative bias" not in render_model_card(CardFacts(task="mnli", loss="ce", title="t", results=model))
