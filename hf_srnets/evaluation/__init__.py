"""Evaluations as objects listed by the task: one `Evaluator` class per evaluation, chosen by name.

* `TaskMetricEvaluator` (`same`): the task's metric and accuracy (ID dev set, `--ood_file` sets in its labels).
* `HansEvaluator` (`hans`): HANS cells (McCoy et al. 2019).
* `PawsEvaluator` (`paws`): weighted F1 on PAWS-QQP / PAWS-Wiki (Win-win appendix B.1).
* `FeverSymmetricEvaluator` (`fever_symmetric`): accuracy on FEVER-Symmetric (Schuster et al. 2019).
* `EasyHardEvaluator` (`easy_hard`): accuracy, confidence and counts on the easy and hard parts of the ID dev set
  (Du et al. 2023, Table 6), with `hard_flags` (which examples are hard) in `easy_hard.py`.

`f_bias.py`: F_bias = Δ_model / Δ_reference against a reference run's results (Du et al. 2023, §3.4).

`run_evaluation` scores a trained model on a run's sets; `metrics_function(task)` is the Trainer's
`compute_metrics`. A new evaluation: a module here with a `@register_evaluator` class, imported below, and its
name in a task's `EvalSet(kind=...)` or `TaskSpec(evaluator=...)`.
"""

from .base import EVALUATORS, Evaluator, build_evaluator, evaluator_for, register_evaluator
from .easy_hard import HARD_COLUMN, EasyHardEvaluator, easy_hard_table, hard_flags, read_hard_flags
from .f_bias import check_reference, f_bias_results, f_bias_table, read_reference_results
from .fever_symmetric import FeverSymmetricEvaluator
from .hans import HansEvaluator
from .paws import PawsEvaluator
from .results_table import results_table
from .run_evaluation import MetricRow, metrics_function, primary_metric, run_evaluation, score_predictions
from .task_metric import LabelMetricEvaluator, TaskMetricEvaluator

__all__ = [
    "EVALUATORS",
    "HARD_COLUMN",
    "EasyHardEvaluator",
    "Evaluator",
    "FeverSymmetricEvaluator",
    "HansEvaluator",
    "LabelMetricEvaluator",
    "MetricRow",
    "PawsEvaluator",
    "TaskMetricEvaluator",
    "build_evaluator",
    "check_reference",
    "easy_hard_table",
    "evaluator_for",
    "f_bias_results",
    "f_bias_table",
    "hard_flags",
    "metrics_function",
    "primary_metric",
    "read_hard_flags",
    "read_reference_results",
    "register_evaluator",
    "results_table",
    "run_evaluation",
    "score_predictions",
]
