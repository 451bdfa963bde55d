"""Evaluators listed by the task: the registry, each evaluation's metrics (the same keys and values as the
`score_predictions` they replaced), `run_evaluation` over a trainer, and a new evaluator added from a test."""

from types import SimpleNamespace
from typing import ClassVar

import numpy as np
import pytest
from datasets import Dataset
from transformers import EvalPrediction

from hf_srnets.data import EvalSet, SplitSource, get_task, ood_file_set, resolve_task
from hf_srnets.data.tasks import TASKS
from hf_srnets.evaluation import (
    EVALUATORS,
    Evaluator,
    FeverSymmetricEvaluator,
    HansEvaluator,
    PawsEvaluator,
    TaskMetricEvaluator,
    build_evaluator,
    evaluator_for,
    metrics_function,
    primary_metric,
    register_evaluator,
    run_evaluation,
    score_predictions,
)
from hf_srnets.metrics import METRICS, collapse_nli_predictions, hans_metrics
from hf_srnets.publish.card_data import card_dataset

HEURISTICS = ("lexical_overlap", "subsequence", "constituent")


def previous_score_predictions(task, logits, labels, eval_set=None, heuristics=None):
    """`hf_srnets.evaluation.score_predictions` before evaluators: what every evaluator must still give."""
    predictions = np.asarray(logits).argmax(-1)
    if eval_set is not None and eval_set.kind == "hans":
        return hans_metrics(collapse_nli_predictions(predictions, task.label_names), labels, heuristics)
    out = {task.metric: METRICS[task.metric](predictions, labels)}
    if task.metric != "accuracy":
        out["accuracy"] = METRICS["accuracy"](predictions, labels)
    return out


def all_sets():
    """Every task variant and evaluation set a run can score: default sets, --task_labels, --ood_file sets."""
    tasks = [*TASKS.values(), resolve_task("fever", "SUPPORTS,REFUTES"), resolve_task("qqp", "duplicate,not_duplicate")]
    for task in tasks:
        yield task, None
        for eval_set in task.ood:
            yield task, eval_set
        if "entailment" in task.label_names:
            yield task, ood_file_set("hans_lex=h.tsv", task)
        yield task, ood_file_set("other=o.tsv", task)


def random_outputs(task, eval_set, n=257, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, task.num_labels))
    labels = rng.integers(0, len(eval_set.label_names if eval_set else task.label_names), n)
    return logits, labels, [HEURISTICS[i % 3] for i in range(n)]


@pytest.mark.parametrize(("task", "eval_set"), list(all_sets()))
def test_every_set_is_scored_as_before(task, eval_set):
    logits, labels, heuristics = random_outputs(task, eval_set)
    expected = previous_score_predictions(task, logits, labels, eval_set, heuristics)
    got = score_predictions(task, logits, labels, eval_set, heuristics)
    assert list(got) == list(expected)  # same keys in the same order (all_results.json)
    np.testing.assert_array_equal(list(got.values()), list(expected.values()))  # bit for bit, NaN == NaN
    evaluator = evaluator_for(task, eval_set)
    assert evaluator(logits, labels, Dataset.from_dict({"heuristic": heuristics, "label": labels})) == got
    is_hans = eval_set is not None and eval_set.kind == "hans"
    assert primary_metric(task, eval_set) == evaluator.primary_metric == ("accuracy" if is_hans else task.metric)


def hand_hans_scores(logits, labels, heuristics, model_labels):
    """HANS accuracies counted example by example without the package (McCoy et al. 2019): a prediction is
    entailment (0) when the model's arg-max label is named entailment, else non-entailment (1); each example counts
    towards the overall accuracy, its gold label's and its heuristic × gold label cell's."""
    gold_names = ("entailment", "non-entailment")
    entailment = [name.lower() for name in model_labels].index("entailment")
    counts: dict[str, list[int]] = {}
    for row, gold, heuristic in zip(logits, labels, heuristics):
        row = list(row)
        predicted = 0 if row.index(max(row)) == entailment else 1
        for key in ("accuracy", f"{gold_names[gold]}_accuracy", f"{heuristic}_{gold_names[gold]}_accuracy"):
            hits, seen = counts.get(key, [0, 0])
            counts[key] = [hits + (predicted == gold), seen + 1]
    return {key: hits / seen for key, (hits, seen) in counts.items()}


HANS_SETS = [(task, eval_set) for task, eval_set in all_sets() if eval_set is not None and eval_set.kind == "hans"]


@pytest.mark.parametrize(("task", "eval_set"), HANS_SETS)
def test_hans_cells_match_a_count_by_hand(task, eval_set):
    logits, labels, heuristics = random_outputs(task, eval_set)
    expected = hand_hans_scores(logits, labels, heuristics, task.label_names)
    got = score_predictions(task, logits, labels, eval_set, heuristics)
    assert len(expected) == 9 and set(got) == set(expected)
    assert got == pytest.approx(expected, rel=0, abs=1e-12)


def test_hans_cells_of_a_hand_made_case():
    """Two examples per heuristic × gold cell, MNLI labels (entailment, neutral, contradiction): neutral and
    contradiction both count as non-entailment."""
    e, n, c = 0, 1, 2
    heuristics = [h for h in HEURISTICS for _ in range(4)]
    gold = [0, 0, 1, 1] * 3
    predicted = [e, e, n, e] + [n, c, n, c] + [e, c, c, n]
    got = HansEvaluator(get_task("mnli"))(np.eye(3)[predicted], np.array(gold), {"heuristic": heuristics})
    assert got == {
        "accuracy": 8 / 12,
        "entailment_accuracy": 3 / 6,
        "non-entailment_accuracy": 5 / 6,
        "lexical_overlap_entailment_accuracy": 1.0,
        "lexical_overlap_non-entailment_accuracy": 0.5,
        "subsequence_entailment_accuracy": 0.0,
        "subsequence_non-entailment_accuracy": 1.0,
        "constituent_entailment_accuracy": 0.5,
        "constituent_non-entailment_accuracy": 1.0,
    }


def test_the_tasks_list_their_evaluators():
    builtin = ("same", "hans", "paws", "fever_symmetric")
    assert [EVALUATORS[k] for k in builtin] == [
        TaskMetricEvaluator,
        HansEvaluator,
        PawsEvaluator,
        FeverSymmetricEvaluator,
    ]
    kinds = {t.name: (t.evaluator, [(s.name, s.evaluator) for s in t.ood]) for t in TASKS.values()}
    assert kinds == {
        "mnli": ("same", [("hans", "hans")]),
        "qqp": ("same", [("paws_qqp", "paws"), ("paws_wiki", "paws")]),
        "fever": ("same", [("fever_symmetric_v1", "fever_symmetric"), ("fever_symmetric_v2", "fever_symmetric")]),
        "qnli": ("same", []),
        "sst2": ("same", []),
        "ag_news": ("same", []),
        "imdb": ("same", []),
    }
    assert type(evaluator_for(get_task("qqp"), get_task("qqp").ood[1])) is PawsEvaluator
    assert ood_file_set("hans_lex=x.tsv", get_task("mnli")).kind == "hans"  # --ood_file NAME starting with hans
    with pytest.raises(ValueError, match=r"known evaluators: .*'hans'"):
        build_evaluator("bleu", get_task("mnli"))


def test_hans_cells_need_the_heuristic_column_and_an_nli_model():
    task = get_task("mnli")
    logits = np.eye(3)[[0, 1, 2, 0]]
    labels = np.array([0, 1, 1, 1])
    without = HansEvaluator(task)(logits, labels, Dataset.from_dict({"label": labels}))
    assert without == {"accuracy": 0.75, "entailment_accuracy": 1.0, "non-entailment_accuracy": 2 / 3}
    cells = HansEvaluator(task)(logits, labels, {"heuristic": ["subsequence"] * 4})
    assert cells["subsequence_entailment_accuracy"] == 1.0 and cells["subsequence_non-entailment_accuracy"] == 2 / 3
    with pytest.raises(ValueError, match="entailment"):
        HansEvaluator(get_task("qqp"))(np.eye(2)[[0, 1]], np.array([0, 1]))


def test_metrics_function_is_the_id_evaluator():
    task = get_task("qqp")
    logits, labels, _ = random_outputs(task, None)
    compute_metrics = metrics_function(task)
    assert compute_metrics(EvalPrediction(predictions=logits, label_ids=labels)) == score_predictions(
        task, logits, labels
    )
    assert set(compute_metrics(EvalPrediction(predictions=logits, label_ids=labels))) == {"f1", "accuracy"}


class FakeTrainer:
    """`evaluate` scores with `compute_metrics` and adds the loss, as the Trainer does; `predict` gives logits."""

    def __init__(self, task, logits_of):
        self.compute_metrics, self.logits_of, self.calls = metrics_function(task), logits_of, []

    def evaluate(self, dataset, metric_key_prefix):
        self.calls.append(("evaluate", metric_key_prefix))
        metrics = self.compute_metrics(EvalPrediction(self.logits_of(dataset), np.asarray(dataset["label"])))
        return {f"{metric_key_prefix}_loss": 0.5, **{f"{metric_key_prefix}_{k}": v for k, v in metrics.items()}}

    def predict(self, dataset, metric_key_prefix):
        """Logits, and the metrics `Trainer.predict` gives: the loss and `compute_metrics` against the set's labels
        (wrong for a set whose labels are not the task's, HANS's two) and the speed of the pass."""
        self.calls.append(("predict", metric_key_prefix))
        speed = {"runtime": 2.5, "samples_per_second": len(dataset) / 2.5, "steps_per_second": 0.4}
        metrics = {"loss": 9.9, "accuracy": -1.0, **speed}
        return SimpleNamespace(
            predictions=self.logits_of(dataset), metrics={f"{metric_key_prefix}_{k}": v for k, v in metrics.items()}
        )


def logits_from_column(dataset):
    return np.asarray(dataset["logits"])


def dataset(task_labels, n, seed, heuristics=False):
    rng = np.random.default_rng(seed)
    columns = {"label": rng.integers(0, task_labels, n).tolist(), "logits": rng.normal(size=(n, 3)).tolist()}
    if heuristics:
        columns["heuristic"] = [HEURISTICS[i % 3] for i in range(n)]
    return Dataset.from_dict(columns)


def test_run_evaluation_gives_the_results_and_card_rows_of_a_run():
    task = get_task("mnli")
    hans, extra = task.ood[0], ood_file_set("mm=mm.tsv", task)
    id_set, hans_set, mm_set = dataset(3, 40, 0), dataset(2, 60, 1, heuristics=True), dataset(3, 30, 2)
    trainer = FakeTrainer(task, logits_from_column)
    results, rows = run_evaluation(trainer, task, "mnli", id_set, [(hans, hans_set), (extra, mm_set)], task.validation)
    assert trainer.calls == [("evaluate", "eval_mnli"), ("predict", "eval_hans"), ("predict", "eval_mm")]
    hans_scores = previous_score_predictions(
        task, hans_set["logits"], np.asarray(hans_set["label"]), hans, hans_set["heuristic"]
    )
    expected = {
        "eval_mnli_loss": 0.5,
        "eval_mnli_accuracy": previous_score_predictions(task, id_set["logits"], id_set["label"])["accuracy"],
        "eval_mnli_examples": 40,  # every set's count (F_bias pools OOD sets by it)
        **{f"eval_hans_{k}": v for k, v in hans_scores.items()},
        # predict's speed is kept (the sweep's budget sums every set's runtime), not its loss or accuracy
        "eval_hans_runtime": 2.5,
        "eval_hans_samples_per_second": 24.0,
        "eval_hans_steps_per_second": 0.4,
        "eval_hans_examples": 60,
        "eval_mm_accuracy": previous_score_predictions(task, mm_set["logits"], np.asarray(mm_set["label"]))["accuracy"],
        "eval_mm_runtime": 2.5,
        "eval_mm_samples_per_second": 12.0,
        "eval_mm_steps_per_second": 0.4,
        "eval_mm_examples": 30,
    }
    assert list(results) == list(expected) and results == expected
    assert len([k for k in results if k.startswith("eval_hans_")]) == 13
    assert rows == [
        ("mnli", "eval_mnli_accuracy", card_dataset("mnli", task.validation)),
        ("hans", "eval_hans_accuracy", card_dataset("hans", hans.source)),
        ("mm", "eval_mm_accuracy", {"name": "mm", "type": "mm"}),
    ]
    assert rows[0][2] == {"name": "mnli", "type": "nyu-mll/glue", "config": "mnli", "split": "validation_matched"}
    _, rows = run_evaluation(trainer, task, "mnli", id_set, [], SplitSource())  # --validation_file
    assert rows == [("mnli", "eval_mnli_accuracy", {"name": "mnli", "type": "mnli"})]


def test_a_new_evaluation_is_a_class_and_a_line_in_a_task():
    @register_evaluator
    class ErrorRate(Evaluator):
        """1 − accuracy: a toy evaluation defined in this test only."""

        name = "toy_error_rate"
        columns: ClassVar[tuple[str, ...]] = ()

        @property
        def primary_metric(self):
            return "error_rate"

        def score(self, predictions, labels, **columns):
            return {"error_rate": float((predictions != labels).mean())}

    try:
        task = get_task("qqp")
        toy = EvalSet("toy", SplitSource(local_paths=("t.tsv",)), task.label_names, kind="toy_error_rate")
        data = Dataset.from_dict({"label": [0, 1, 1, 0], "logits": np.eye(3)[[0, 0, 1, 1]].tolist()})
        results, rows = run_evaluation(
            FakeTrainer(task, logits_from_column), task, "qqp", data, [(toy, data)], task.validation
        )
        assert results["eval_toy_error_rate"] == 0.5 and rows[-1][:2] == ("toy", "eval_toy_error_rate")
        with pytest.raises(ValueError, match="already registered"):

            @register_evaluator
            class Other(ErrorRate):
                name = "toy_error_rate"
    finally:
        EVALUATORS.pop("toy_error_rate")
