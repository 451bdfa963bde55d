"""Clean% / Aua% / Suc% / #Query (TextAttack's definitions) on hand-made results, edge cases included."""

from __future__ import annotations

import pytest

from hf_srnets.attack.base import AttackResult
from hf_srnets.attack.metrics import attack_summary, format_summary, prefixed_metrics, running_postfix


def result(outcome: str, queries: int = 0, changed: int = 0, words: int = 10) -> AttackResult:
    skipped = outcome == "skipped"
    return AttackResult(
        original=("a b c",),
        perturbed=None if skipped else ("a x c",),
        label=1,
        original_prediction=0 if skipped else 1,
        perturbed_prediction=None if skipped else (0 if outcome == "successful" else 1),
        outcome=outcome,
        num_queries=queries,
        words_changed=changed,
        num_words=words,
    )


def test_each_formula_on_a_hand_made_list():
    # N = 10: S = 2 skipped, U = 5 successful, F = 3 failed
    results = (
        [result("skipped", queries=1)] * 2
        + [result("successful", queries=q, changed=c) for q, c in [(10, 1), (20, 2), (30, 1), (40, 4), (50, 2)]]
        + [result("failed", queries=q) for q in (60, 70, 80)]
    )
    s = attack_summary(results, elapsed_seconds=30.0)
    assert (s["num_examples"], s["num_skipped"], s["num_successful"], s["num_failed"]) == (10, 2, 5, 3)
    assert s["clean_accuracy"] == pytest.approx(8 / 10)  # (N - S) / N
    assert s["accuracy_under_attack"] == pytest.approx(3 / 10)  # F / N
    assert s["attack_success_rate"] == pytest.approx(5 / 8)  # U / (U + F)
    assert s["avg_queries"] == pytest.approx(sum(range(10, 81, 10)) / 8)  # skipped examples' queries not counted
    assert s["avg_words_perturbed"] == pytest.approx((0.1 + 0.2 + 0.1 + 0.4 + 0.2) / 5)  # successful only
    assert s["examples_per_minute"] == pytest.approx(20.0)
    # Aua = Clean - Clean * Suc: the three rates are consistent
    assert s["accuracy_under_attack"] == pytest.approx(s["clean_accuracy"] * (1 - s["attack_success_rate"]))


def test_all_skipped_is_defined():
    s = attack_summary([result("skipped")] * 3)
    assert s["clean_accuracy"] == 0.0 and s["accuracy_under_attack"] == 0.0
    assert s["attack_success_rate"] == 0.0  # TextAttack's AttackSuccessRate with nothing attacked
    assert s["avg_queries"] is None and s["avg_words_perturbed"] is None
    assert "n/a" in format_summary(s)


def test_all_failed_and_all_successful():
    failed = attack_summary([result("failed", queries=4)] * 4)
    assert (failed["clean_accuracy"], failed["accuracy_under_attack"], failed["attack_success_rate"]) == (1, 1, 0)
    assert failed["avg_words_perturbed"] is None
    success = attack_summary([result("successful", queries=4, changed=5)] * 4)
    assert (success["clean_accuracy"], success["accuracy_under_attack"], success["attack_success_rate"]) == (1, 0, 1)
    assert success["avg_words_perturbed"] == pytest.approx(0.5)


def test_no_results_is_an_error():
    with pytest.raises(ValueError, match="no attack results"):
        attack_summary([])


def test_prefixed_metrics_and_progress():
    s = attack_summary([result("failed"), result("successful")])
    keys = prefixed_metrics("bert-attack", s)
    assert keys["attack_bert_attack_accuracy_under_attack"] == 0.5
    assert running_postfix({"skipped": 1, "failed": 1, "successful": 2}) == {"Aua%": "25.0", "Suc%": "66.7"}
    assert running_postfix({"skipped": 2}) == {"Aua%": "0.0", "Suc%": "-"}
