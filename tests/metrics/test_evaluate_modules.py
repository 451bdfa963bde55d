"""The HANS and F_bias `evaluate` modules load offline from the package and compute what the package computes."""

import evaluate
import numpy as np
import pandas as pd
import pytest

from hf_srnets.data import get_task
from hf_srnets.evaluation import HansEvaluator
from hf_srnets.metrics import HANS_METRIC_PATH, RELATIVE_BIAS_METRIC_PATH, collapse_nli_predictions, relative_bias


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """No Hub: loading by path must not need it."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(evaluate.config, "HF_EVALUATE_OFFLINE", True)


def test_hans_module_equals_the_evaluator_on_real_hans(data_dir):
    hans = pd.read_csv(data_dir / "hans" / "heuristics_evaluation_set.tsv", sep="\t")
    labels = (hans["gold_label"] != "entailment").astype(int).to_numpy()
    heuristics = hans["heuristic"].tolist()
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(len(labels), 3)) + np.array([0.5, 0.0, 0.0])  # a random 3-way NLI classifier
    task = get_task("mnli")
    expected = HansEvaluator(task)(logits, labels, {"heuristic": heuristics})
    assert len(expected) == 3 + 6  # overall, 2 gold labels, 6 heuristic x label cells

    module = evaluate.load(HANS_METRIC_PATH)
    predictions = logits.argmax(-1)
    three_way = module.compute(
        predictions=predictions, references=labels, heuristics=heuristics, label_names=list(task.label_names)
    )
    assert three_way == expected
    collapsed = collapse_nli_predictions(predictions, task.label_names)
    assert module.compute(predictions=collapsed, references=labels, heuristics=heuristics) == expected
    without_cells = module.compute(predictions=collapsed, references=labels)
    assert without_cells == {k: expected[k] for k in ("accuracy", "entailment_accuracy", "non-entailment_accuracy")}


def test_hans_module_refuses_three_way_predictions_without_labels():
    module = evaluate.load(HANS_METRIC_PATH)
    with pytest.raises(ValueError, match="label_names"):
        module.compute(predictions=[0, 2], references=[0, 1])


def test_relative_bias_module_on_table_1():
    module = evaluate.load(RELATIVE_BIAS_METRIC_PATH)
    # Du et al. (EACL 2023) Table 1, MNLI/HANS: BERT-base 84.2/59.8; 20% and 60% sparse IMP
    out = module.compute(dev=[84.4, 83.4], ood=[55.5, 52.8], base_dev=[84.2, 84.2], base_ood=[59.8, 59.8])
    assert [round(v, 3) for v in out["f_bias"]] == [1.182, 1.266]
    expected = [relative_bias(84.4, 55.5, 84.2, 59.8), relative_bias(83.4, 52.8, 84.2, 59.8)]
    assert out["f_bias"] == pytest.approx(expected)
    assert out["average_f_bias"] == pytest.approx(sum(out["f_bias"]) / 2)
