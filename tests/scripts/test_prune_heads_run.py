"""End to end: run_glue_sparse.py with --prune_heads (Du et al. 2023 §3.1) on the pip MiniLM and a few dozen real
MNLI examples; the head-pruned output dir reloads, feeds a further run (--student_layers) and the attack loader."""

import json
import re

import pytest
import torch
from conftest import mnli_run_args
from transformers import AutoModelForSequenceClassification

from hf_srnets import load_pretrained_model
from hf_srnets.arguments import parse_args, validate_args
from hf_srnets.attack.models import load_victim
from hf_srnets.commands.glue_sparse import main
from hf_srnets.compact import heads_per_layer
from hf_srnets.data import get_task


def _args(model, data_dir, out, *extra):
    return mnli_run_args(
        model, data_dir, out, "--do_train", "--num_train_epochs", "1", "--dataloader_pin_memory", "false",
        *extra, train=32, eval=32, ood=30, batch=16,
    )  # fmt: skip


@pytest.mark.slow
def test_prune_heads_run_saves_a_smaller_model_that_reloads(minilm, data_dir, tmp_path):
    out = tmp_path / "heads"
    results = main(_args(minilm, data_dir, out, "--prune_heads", "0.25", "--head_importance_samples", "24"))
    saved = json.loads((out / "all_results.json").read_text())
    # MiniLM: 6 layers of 12 heads; ⌊0.25·72⌋ = 18 removed
    kept = saved["heads_kept_per_layer"]
    assert kept == results["heads_kept_per_layer"] and len(kept) == 6 and sum(kept) == 54 and min(kept) >= 1
    assert sum(len(h) for h in saved["heads_pruned"].values()) == 18
    assert all(12 - len(saved["heads_pruned"].get(str(layer), [])) == k for layer, k in enumerate(kept))
    config = json.loads((out / "config.json").read_text())
    assert config["srnet_pruned_heads"] == saved["heads_pruned"]
    model = load_pretrained_model(str(out))
    assert heads_per_layer(model) == kept
    full = AutoModelForSequenceClassification.from_pretrained(minilm, num_labels=3)
    params = sum(p.numel() for p in model.parameters())
    assert sum(p.numel() for p in full.parameters()) - params == 18 * (4 * 32 * 384 + 3 * 32)  # heads of 32
    with pytest.raises((RuntimeError, ValueError), match="size"):
        AutoModelForSequenceClassification.from_pretrained(out)
    assert f'load_pretrained_model("{out}")' in (out / "README.md").read_text()  # the card loads it so

    victim = load_victim(str(out), get_task("mnli"))  # run_attack.py's loader
    assert heads_per_layer(victim.model) == kept
    enc = victim.tokenizer("A man sleeps.", "Someone sleeps.", return_tensors="pt")
    with torch.no_grad():
        assert torch.equal(victim.model(**enc).logits, model(**enc).logits)

    student = main(_args(out, data_dir, tmp_path / "student", "--student_layers", "3"))  # from the pruned model
    assert student["student_layers_kept"] == [0, 2, 4]
    reloaded = load_pretrained_model(str(tmp_path / "student"))
    assert heads_per_layer(reloaded) == [kept[0], kept[2], kept[4]]


@pytest.mark.parametrize(
    ("flags", "error"),
    [
        (["--prune_heads", "1.0"], "--prune_heads must be in [0, 1)"),
        (["--prune_heads", "-0.2"], "--prune_heads must be in [0, 1)"),
        (["--prune_heads", "0.2", "--pruning", "mask"], "--prune_heads changes the model's shape"),
        (["--student_layers", "3", "--pruning", "l0"], "--student_layers changes the model's shape"),
        (["--prune_heads", "0.2", "--mask_from", "x"], "use it with --pruning none (and no --mask_from)"),
        (["--prune_heads", "0.2", "--head_importance_samples", "0"], "--head_importance_samples must be >= 1"),
        (["--student_layers", "0"], "--student_layers must be >= 1"),
    ],
)
def test_bad_compact_options_are_refused(flags, error):
    with pytest.raises(ValueError, match=re.escape(error)):
        validate_args(parse_args(["--model_name_or_path", "m", "--output_dir", "o", *flags]))


def test_student_as_deep_as_the_model_is_refused(minilm):
    with pytest.raises(ValueError, match=re.escape("below the model's 6 layers, got 6")):
        validate_args(parse_args(["--model_name_or_path", minilm, "--output_dir", "o", "--student_layers", "6"]))
