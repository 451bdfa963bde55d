"""Evaluations as objects listed by the task: one `Evaluator` class per evaluation, chosen by name.

* `TaskMetricEvaluator` (`same`): the task's metric and accuracy (ID dev set, `--ood_file` sets in its labels).
* `HansEvaluator` (`hans`): HANS cells (McCoy et al. 2019).
* `PawsEvaluator` (`paws`): weighted F1 on PAWS-QQP / PAWS-Wiki (Win-win appendix B.1).
* `FeverSymmetricEvaluator` (`fever_symmetric`): accuracy on FEVER-Symmetric (Schuster et al. 2019).

`run_evaluation` scores a trained model on a run's sets; `metrics_function(task)` is the Trainer's
`compute_metrics`. A new evaluation: a module here with a `@register_evaluator` class, imported below, and its
name in a task's `EvalSet(kind=...)` or `TaskSpec(evaluator=...)`.
"""

from .base import EVALUATORS, Evaluator, build_evaluator, evaluator_for, register_evaluator
from .fever_symmetric import FeverSymmetricEvaluator
from .hans import HansEvaluator
from .outputs import results_table, softmax
from .paws import PawsEvaluator
from .run import MetricRow, metrics_function, primary_metric, run_evaluation, score_predictions
from .task_metric import LabelMetricEvaluator, TaskMetricEvaluator

__all__ = [
    "EVALUATORS",
    "Evaluator",
    "FeverSymmetricEvaluator",
    "HansEvaluator",
    "LabelMetricEvaluator",
    "MetricRow",
    "PawsEvaluator",
    "TaskMetricEvaluator",
    "build_evaluator",
    "evaluator_for",
    "metrics_function",
    "primary_metric",
    "register_evaluator",
    "results_table",
    "run_evaluation",
    "score_predictions",
    "softmax",
]
