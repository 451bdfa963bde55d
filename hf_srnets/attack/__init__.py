"""Adversarial word-substitution attacks on a saved classifier and their metrics (Clean%, Aua%, Suc%, #Query).

`base` holds the interface (texts, the `Classifier` protocol, `AttackResult`, the recipe registry), `recipes` the
built-in recipes (TextFooler, TextBugger, BERT-Attack), `models` the victim model and its cached, batched
classifier, `runner` the loop over a sample with a resumable JSONL (`results`), and `metrics` TextAttack's
definitions of the reported numbers (Morris et al. 2020). `run_attack.py` is the script.
"""

from . import recipes  # noqa: F401  (registers the built-in recipes)
from .base import (
    ATTACK_RECIPES,
    OUTCOMES,
    AttackRecipe,
    AttackResult,
    Classifier,
    Text,
    build_attack,
    register_attack_recipe,
)
from .metrics import attack_summary, format_summary, prefixed_metrics
from .models import HFClassifier, Victim, build_classifier, load_victim
from .results import ResultRecord, read_results, results_path
from .runner import Example, attack_examples, dataset_examples, select_indices, summarize_records

__all__ = [
    "ATTACK_RECIPES",
    "OUTCOMES",
    "AttackRecipe",
    "AttackResult",
    "Classifier",
    "Example",
    "HFClassifier",
    "ResultRecord",
    "Text",
    "Victim",
    "attack_examples",
    "attack_summary",
    "build_attack",
    "build_classifier",
    "dataset_examples",
    "format_summary",
    "load_victim",
    "prefixed_metrics",
    "read_results",
    "register_attack_recipe",
    "results_path",
    "select_indices",
    "summarize_records",
]
