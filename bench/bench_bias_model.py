#!/usr/bin/env python
"""Benchmark: bias-model feature extraction + logistic-regression fit on 10,000 MNLI pairs (target < 60 s).

The pairs are MNLI dev_mismatched (9,832) padded with the first 168 of dev_matched. Word vectors are
trained first (fastText, `hf_srnets.bias.FASTTEXT_SETTINGS`, cached in a temp dir) and not timed; the
timed part is `compute_bias_predictions` with the cached vectors: loading them, tokenising, the five
overlap features, the fit and p_b for the 10k pairs. The last printed line is the median of 3 runs.

    python bench/bench_bias_model.py        # data from $SRNETS_DATA_DIR or ../shared/data
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

import sklearn.linear_model  # noqa: E402,F401  (import time is not part of the workload)
from datasets import Dataset  # noqa: E402

from hf_srnets.bias import compute_bias_predictions, overlap_features, train_vectors  # noqa: E402
from hf_srnets.bias.model import BiasModel  # noqa: E402
from hf_srnets.bias.vectors import load_fasttext_bin  # noqa: E402
from hf_srnets.data import get_task, load_file  # noqa: E402

N_PAIRS = 10_000


def load_pairs(data_dir: Path) -> Dataset:
    task = get_task("mnli")
    rows: dict[str, list] = {"id": [], "sentence1": [], "sentence2": [], "label": []}
    for prefix, name in (("mm", "dev_mismatched.tsv"), ("m", "dev_matched.tsv")):
        ds = load_file(str(data_dir / "mnli" / name), task.label_names, aliases=task.label_aliases)
        part = ds.select(range(min(len(ds), N_PAIRS - len(rows["id"])))).to_dict()
        rows["id"] += [f"{prefix}-{i}" for i in part["id"]]  # the two files' idx values overlap
        for column in ("sentence1", "sentence2", "label"):
            rows[column] += part[column]
        if len(rows["id"]) == N_PAIRS:
            break
    return Dataset.from_dict(rows)


def main() -> None:
    data_dir = Path(os.environ.get("SRNETS_DATA_DIR", REPO_ROOT.parent / "shared" / "data"))
    if not (data_dir / "mnli" / "dev_mismatched.tsv").is_file():
        sys.exit(f"MNLI dev files not found under {data_dir}; set SRNETS_DATA_DIR")
    task = get_task("mnli")
    pairs = load_pairs(data_dir)
    columns = pairs.to_dict()
    texts1, texts2 = columns["sentence1"], columns["sentence2"]
    print(f"{len(pairs)} MNLI pairs, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()
        path, info = train_vectors(texts1 + texts2, cache, seed=42)
        print(
            f"fastText vectors (untimed): {time.perf_counter() - start:.2f} s, {info['corpus_sentences']} sentences, "
            f"{info['corpus_tokens']} tokens, settings {info['settings']}"
        )

        # Component breakdown, for information.
        start = time.perf_counter()
        from hf_srnets.bias.features import tokenize, vocabulary

        tok1, tok2 = [tokenize(t) for t in texts1], [tokenize(t) for t in texts2]
        vectors = load_fasttext_bin(path, vocabulary(tok1, tok2))
        t_vectors = time.perf_counter() - start
        start = time.perf_counter()
        features = overlap_features(tok1, tok2, vectors)
        t_features = time.perf_counter() - start
        start = time.perf_counter()
        BiasModel(task.num_labels).fit(features, columns["label"])
        t_fit = time.perf_counter() - start
        print(f"breakdown: tokenise+load vectors {t_vectors:.2f} s, features {t_features:.2f} s, fit {t_fit:.2f} s")

        times = []
        for _ in range(3):
            start = time.perf_counter()
            _, report = compute_bias_predictions(task, pairs, {}, cache_dir=cache, seed=42)
            times.append(time.perf_counter() - start)
            assert report["vectors"]["cached"], "vector training must not be timed"
        print(
            f"compute_bias_predictions runs: {', '.join(f'{t:.2f}' for t in times)} s; "
            f"train accuracy {report['splits']['train']['accuracy']:.3f}"
        )
    print(f"bias model features+fit on {len(pairs)} pairs: {statistics.median(times):.2f} s (target < 60 s)")


if __name__ == "__main__":
    main()
