"""What the per-family tests share: a tiny random checkpoint of a ModernBERT or Llama-family classifier with a
tokenizer saved beside it, one `--pruning mask --loss poe` run at neuron granularity on a few real MNLI pairs, and
the checks: merged == masked, compact == masked (1e-5), save/reload, the card naming what was pruned."""

import atexit
import functools
import json
import shutil
import tempfile
import time
from pathlib import Path

import torch
from conftest import correct_bias_file, mnli_run_args
from training.helpers import tiny_tokenizer
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from hf_srnets import load_pretrained_model
from hf_srnets.commands.glue_sparse import main
from hf_srnets.masking import SRNetModel

# hidden 32, 2 layers, 4 query heads of 8 (decoders: 2 key/value heads, so 2 query heads per group), MLP of 48
DECODER = {"vocab_size": 100, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 2, "head_dim": 8, "intermediate_size": 48,
           "max_position_embeddings": 128}  # fmt: skip


def save_checkpoint(config, path: Path, pad: bool = True) -> Path:
    """A random classifier of `config` (3 labels) and the tiny BERT tokenizer in `path`; `pad=False` saves the
    tokenizer without a pad token, as many decoder tokenizers come (its end-of-sequence token is [SEP])."""
    torch.manual_seed(0)
    config.num_labels = 3
    AutoModelForSequenceClassification.from_config(config).save_pretrained(path)
    tokenizer = tiny_tokenizer(path)
    if not pad:
        tokenizer.eos_token = "[SEP]"
        tokenizer.pad_token = None
    tokenizer.save_pretrained(path)
    return path


@functools.cache
def bias_predictions(data_dir: Path) -> str:
    """`conftest.correct_bias_file`, written once per process: PoE needs a bias model, not this one (fitting the
    overlap model on 9,832 pairs took most of a family test's time; tests/scripts and tests/bias fit it)."""
    folder = tempfile.mkdtemp(prefix="family_bias_")
    atexit.register(shutil.rmtree, folder, True)
    return correct_bias_file(data_dir, Path(folder) / "bias_train.jsonl")


def run_search(checkpoint: Path, data_dir, out: Path) -> float:
    """A short mask search with PoE (--mask_granularity neuron, 50%) saving a compact merged checkpoint; seconds."""
    start = time.perf_counter()
    main(mnli_run_args(
        checkpoint, data_dir, out, "--do_train", "--max_steps", "3", "--dataloader_pin_memory", "false",
        "--pruning", "mask", "--loss", "poe", "--bias_predictions", bias_predictions(Path(data_dir)),
        "--mask_granularity", "neuron", "--sparsity", "0.5",
        "--mask_init", "soft", "--threshold_update_interval", "1", "--save_compact", "true", "--learning_rate", "1e-3",
        train=32, eval=16, ood=10, batch=16,
    ))  # fmt: skip
    return time.perf_counter() - start


def _inputs(tokenizer) -> dict:
    texts = ["A man sleeps on a bench.", "Two dogs run in a park."], ["Someone sleeps.", "Cats sit."]
    return tokenizer(*texts, padding=True, return_tensors="pt")


DECODER_MATRICES = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj",
                    "mlp.up_proj", "mlp.down_proj")  # fmt: skip


def check_run(
    checkpoint: Path, out: Path, heads_per_unit: int, units: int = 2, width: int = 48, matrices=DECODER_MATRICES
) -> dict:
    """merged == masked and compact == masked (1e-5) on padded pairs; ⌊0.5·n⌋ attention units and MLP units gone per
    layer; the card of the run names the structured units and lists every matrix of each layer at 50% (what was
    pruned), and the compact card the loader. The report."""
    tokenizer = AutoTokenizer.from_pretrained(out / "merged")  # the run's, with the pad token it padded with
    inputs = _inputs(tokenizer)
    base = AutoModelForSequenceClassification.from_pretrained(checkpoint, num_labels=3)
    base.config.pad_token_id = tokenizer.pad_token_id  # a decoder pools the last token that is not padding
    srnet = SRNetModel.from_pretrained(base, str(out)).eval()
    with torch.no_grad():
        masked = srnet(**inputs).logits
        merged = srnet.merge_and_unload().eval()(**inputs).logits
        compact = load_pretrained_model(str(out / "merged"))(**inputs).logits
    torch.testing.assert_close(merged, masked, atol=1e-5, rtol=0)
    torch.testing.assert_close(compact, masked, atol=1e-5, rtol=0)
    report = json.loads((out / "merged" / "compact_report.json").read_text())
    assert report["heads_per_layer"] == [units // 2 * heads_per_unit] * 2  # ⌊0.5·units⌋ removed
    assert report["ffn_units_per_layer"] == [width // 2] * 2
    assert report["parameters_after"] < report["parameters_before"]
    card = (out / "README.md").read_text()
    assert "whole FFN units and attention heads, ⌊s·n⌋ of each per layer (--mask_granularity neuron)" in card
    for layer in range(2):
        for matrix in matrices:
            assert f"| `model.layers.{layer}.{matrix}` | 50.0% |" in card
    assert "load_pretrained_model" in (out / "merged" / "README.md").read_text()
    return report
