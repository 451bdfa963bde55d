"""End to end: a structured mask search (--mask_granularity neuron / head) on `small_encoder` (MiniLM's tokenizer on a
2-layer BERT encoder with 4 heads and 256 FFN units a layer, saved as MiniLM is) and a few dozen real MNLI pairs with
--save_compact writes a physically smaller merged checkpoint with the masked model's logits."""

import json
import re

import pytest
import torch
from conftest import mnli_run_args
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from hf_srnets import load_pretrained_model
from hf_srnets.arguments import parse_args, validate_args
from hf_srnets.commands.glue_sparse import main
from hf_srnets.compact import ffn_widths, heads_per_layer
from hf_srnets.masking import SRNetModel


def _args(model, data_dir, out, *extra):
    return mnli_run_args(
        model, data_dir, out, "--do_train", "--num_train_epochs", "1", "--dataloader_pin_memory", "false",
        "--pruning", "mask", "--mask_init", "soft", "--threshold_update_interval", "1", "--save_compact", "true",
        *extra, train=32, eval=32, ood=30, batch=16,
    )  # fmt: skip


def _masked_logits(small_encoder, out, inputs):
    base = AutoModelForSequenceClassification.from_pretrained(small_encoder, num_labels=3)
    srnet = SRNetModel.from_pretrained(base, str(out)).eval()
    with torch.no_grad():
        return srnet(**inputs).logits


@pytest.mark.slow
def test_neuron_masks_save_a_compact_model_with_the_masked_logits(small_encoder, data_dir, tmp_path):
    out = tmp_path / "neuron"
    main(_args(small_encoder, data_dir, out, "--mask_granularity", "neuron", "--sparsity", "0.5"))
    merged = out / "merged"
    report = json.loads((merged / "compact_report.json").read_text())
    # small_encoder: 2 layers of 4 heads and 256 FFN units; ⌊0.5·4⌋ heads and ⌊0.5·256⌋ units go per layer
    assert report["heads_per_layer"] == [2] * 2 and report["ffn_units_per_layer"] == [128] * 2
    assert not report["stock_checkpoint"]
    model = load_pretrained_model(str(merged))
    assert heads_per_layer(model) == [2] * 2 and ffn_widths(model) == [128] * 2
    assert sum(p.numel() for p in model.parameters()) == report["parameters_after"] < report["parameters_before"]
    tokenizer = AutoTokenizer.from_pretrained(str(merged))
    inputs = tokenizer(["A man sleeps.", "Two dogs run in a park."], ["Someone sleeps.", "Cats sit."], padding=True,
                       return_tensors="pt")  # fmt: skip
    with torch.no_grad():
        compact = model(**inputs).logits
    torch.testing.assert_close(compact, _masked_logits(small_encoder, out, inputs), atol=1e-5, rtol=0)
    assert "whole FFN units and attention heads, ⌊s·n⌋ of each per layer" in (out / "README.md").read_text()
    card = (merged / "README.md").read_text()
    assert "**compact** merged checkpoint" in card and f'load_pretrained_model("{merged}")' in card
    # transformers alone, through the modeling file saved beside the weights
    assert f'from_pretrained("{merged}", trust_remote_code=True)' in card
    remote = AutoModelForSequenceClassification.from_pretrained(merged, trust_remote_code=True).eval()
    with torch.no_grad():
        torch.testing.assert_close(remote(**inputs).logits, compact, atol=1e-6, rtol=0)


@pytest.mark.slow
def test_element_masks_stay_a_stock_checkpoint(small_encoder, data_dir, tmp_path):
    out = tmp_path / "element"
    main(_args(small_encoder, data_dir, out, "--sparsity", "0.3"))
    report = json.loads((out / "merged" / "compact_report.json").read_text())
    assert report["stock_checkpoint"] and report["parameters_after"] == report["parameters_before"]
    AutoModelForSequenceClassification.from_pretrained(out / "merged")  # transformers alone loads it
    assert "from_pretrained" in (out / "merged" / "README.md").read_text()


def test_save_compact_without_masks_is_refused():
    with pytest.raises(ValueError, match=re.escape("--pruning none has no masks")):
        validate_args(parse_args(["--model_name_or_path", "m", "--output_dir", "o", "--save_compact", "true"]))
