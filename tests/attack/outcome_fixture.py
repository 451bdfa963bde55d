"""The fixed attack run behind `test_identical_outcomes.py`: TextFooler and TextBugger on the first real SST-2 and
MNLI dev rows, against tiny random victims that read real words, with the recipes' real default resources (GloVe
6B 50d, the all-MiniLM-L6-v2 sentence encoder) and the coarse POS tagger.

The victims are 1-layer BERTs of hidden size 32 over all-MiniLM-L6-v2's uncased WordPiece vocabulary (30,522
tokens), seeded, with weights drawn 25 times wider than BERT's (std 0.5): every word moves the prediction, so
the searches end in every outcome (skipped, successful, failed) after many words and candidates; they build in a
second.

The stored results are per CPU kind (`tests/fixtures/attack_outcomes/<capability>.json`, the capability being
`torch.backends.cpu.get_cpu_capability()`): near-ties between candidates are decided by float rounding, which differs
between kinds (`test_identical_outcomes.py` says what differs). Regenerate the current kind's file (only when an
intended change of the attack's behaviour is made, and say so; then on each kind):

    python tests/attack/outcome_fixture.py --write
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "attack_outcomes"


def cpu_kind() -> str:
    """This CPU's capability as torch's kernels see it (`AVX2`, `AVX512`, ...): the name of its fixture."""
    return torch.backends.cpu.get_cpu_capability()


def fixture_path(kind: str | None = None) -> Path:
    """The stored results of CPU kind `kind` (default: this CPU's)."""
    return FIXTURES / f"{kind or cpu_kind()}.json"


DATA_DIR = REPO.parent / "shared" / "data"
ROWS = {"sst2": 12, "mnli": 12}  # the first rows of each task's dev set (MNLI: dev_matched)
RECIPES = ("textfooler", "textbugger")
FIELDS = ("outcome", "num_queries", "perturbed", "words_changed", "perturbed_prediction")


def tiny_victim(encoder_dir: str, num_labels: int, seed: int) -> tuple[Any, Any]:
    """A seeded 1-layer BERT over the encoder's vocabulary, and that tokenizer."""
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(encoder_dir)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        num_labels=num_labels,
        initializer_range=0.5,
    )
    torch.manual_seed(seed)
    return BertForSequenceClassification(config).eval(), tokenizer


def task_examples(task_name: str, rows: int, data_dir: Path = DATA_DIR) -> tuple[list, Any]:
    """The first `rows` dev examples of the task, read as `run_attack.py` reads them, and the task."""
    from hf_srnets.arguments.attack_arguments import AttackDataArguments
    from hf_srnets.attack import dataset_examples, select_indices
    from hf_srnets.data.tasks import resolve_task
    from hf_srnets.jobs.attack import load_attack_data

    task = resolve_task(task_name)
    data = AttackDataArguments(task=task_name, data_dir=str(data_dir), split="validation")
    dataset, _ = load_attack_data(data, task, None)
    return dataset_examples(dataset, select_indices(len(dataset), rows)), task


def run_fixed_attacks(
    data_dir: Path = DATA_DIR, num_workers: int = 1, tasks: tuple[str, ...] = tuple(ROWS), **classifier_options: Any
) -> dict[str, list[dict[str, Any]]]:
    """Per `task/recipe`, the per-example results (`FIELDS`, the row index) of the fixed run, attacked by
    `hf_srnets.attack.attack_examples` with `num_workers` processes."""
    from hf_srnets.attack import HFClassifier, attack_examples, build_attack
    from hf_srnets.attack.sentence_encoder import default_encoder_dir

    encoder_dir = default_encoder_dir()
    out: dict[str, list[dict[str, Any]]] = {}
    for seed, (task_name, rows) in enumerate(ROWS.items()):
        if task_name not in tasks:
            continue
        examples, task = task_examples(task_name, rows, data_dir)
        model, tokenizer = tiny_victim(encoder_dir, len(task.label_names), seed)
        classifier = HFClassifier(model, tokenizer, **classifier_options)
        columns = tuple(name for name, _ in task.text_fields)
        for recipe_name in RECIPES:
            options = {"pos_tagger": "coarse"} if recipe_name == "textfooler" else {}
            recipe = build_attack(recipe_name, text_columns=columns, **options)
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "results.jsonl")
                records = attack_examples(
                    recipe, classifier, examples, path, {"fixture": recipe_name}, disable_tqdm=True,
                    num_workers=num_workers,
                )  # fmt: skip
            results = [{"index": r.index, **{k: r.result.to_dict()[k] for k in FIELDS}} for r in records]
            out[f"{task_name}/{recipe_name}"] = results
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--write", action="store_true", help=f"Write the results to {fixture_path()}.")
    args = p.parse_args(argv)
    results = run_fixed_attacks()
    text = json.dumps(results, ensure_ascii=False, indent=1) + "\n"
    if args.write:
        fixture_path().write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main()
