"""The attack metrics of TextAttack (Morris et al. 2020, `morris2020textattack`), as reported by the robust tickets
paper (Zheng et al. 2022, Table 1): Clean%, Aua%, Suc% and #Query.

Over N attacked examples, of which S were skipped (the original prediction was already wrong), F failed (no
perturbation changed the prediction) and U succeeded:

    Clean% = (N − S) / N                  accuracy on the clean sample
    Aua%   = F / N                        accuracy under attack
    Suc%   = U / (U + F)                  attack success rate over the attacked examples (0 when none was attacked,
                                          as TextAttack's `AttackSuccessRate`)
    #Query = mean num_queries over the attacked (not skipped) examples (None when none was attacked)

and, as TextAttack's `WordsPerturbed`, the mean percentage of words changed over the successful attacks. Rates are
fractions in [0, 1] (like the other metrics of `all_results.json`); `format_summary` prints them as percentages.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .base import AttackResult

SUMMARY_KEYS: tuple[str, ...] = (
    "num_examples",
    "num_skipped",
    "num_failed",
    "num_successful",
    "clean_accuracy",
    "accuracy_under_attack",
    "attack_success_rate",
    "avg_queries",
    "avg_words_perturbed",
    "avg_num_words",
)


def attack_summary(results: Iterable[AttackResult], *, elapsed_seconds: float | None = None) -> dict[str, Any]:
    """Clean / Aua / Suc / #Query (fractions, see the module docstring) and counts of a list of results.

    `elapsed_seconds` (the time the attacks took) adds `examples_per_minute`. Raises on an empty list.
    """
    results = list(results)
    n = len(results)
    if n == 0:
        raise ValueError("attack_summary: no attack results; attack at least one example (--num_examples >= 1)")
    skipped = sum(r.outcome == "skipped" for r in results)
    failed = sum(r.outcome == "failed" for r in results)
    successful = sum(r.outcome == "successful" for r in results)
    attacked = [r for r in results if r.outcome != "skipped"]
    succeeded = [r for r in results if r.outcome == "successful"]
    summary: dict[str, Any] = {
        "num_examples": n,
        "num_skipped": skipped,
        "num_failed": failed,
        "num_successful": successful,
        "clean_accuracy": (n - skipped) / n,
        "accuracy_under_attack": failed / n,
        "attack_success_rate": successful / (successful + failed) if successful + failed else 0.0,
        "avg_queries": sum(r.num_queries for r in attacked) / len(attacked) if attacked else None,
        "avg_words_perturbed": (sum(r.perturbed_ratio for r in succeeded) / len(succeeded) if succeeded else None),
        "avg_num_words": sum(r.num_words for r in results) / n,
    }
    if elapsed_seconds is not None:
        summary["examples_per_minute"] = 60.0 * n / elapsed_seconds if elapsed_seconds > 0 else None
    return summary


def prefixed_metrics(recipe: str, summary: dict[str, Any]) -> dict[str, Any]:
    """`attack_<recipe>_<key>` for every key of a summary (the `all_results.json` form); '-' in the recipe
    becomes '_' (`bert-attack` -> `attack_bert_attack_...`)."""
    name = recipe.replace("-", "_")
    return {f"attack_{name}_{k}": v for k, v in summary.items()}


def format_summary(summary: dict[str, Any]) -> str:
    """One line as the paper's tables: Clean% / Aua% / Suc% / #Query."""

    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{100 * value:.1f}"

    queries = summary.get("avg_queries")
    return (
        f"Clean% {pct(summary['clean_accuracy'])}  Aua% {pct(summary['accuracy_under_attack'])}  "
        f"Suc% {pct(summary['attack_success_rate'])}  #Query {'n/a' if queries is None else f'{queries:.1f}'}  "
        f"(N={summary['num_examples']}, skipped {summary['num_skipped']}, failed {summary['num_failed']}, "
        f"successful {summary['num_successful']})"
    )


def running_postfix(counts: dict[str, int]) -> dict[str, str]:
    """The progress bar's running Aua% / Suc% from outcome counts (`{"skipped": S, "failed": F, ...}`)."""
    n = sum(counts.values())
    failed, successful = counts.get("failed", 0), counts.get("successful", 0)
    attacked = failed + successful
    return {
        "Aua%": f"{100 * failed / n:.1f}" if n else "-",
        "Suc%": f"{100 * successful / attacked:.1f}" if attacked else "-",
    }
