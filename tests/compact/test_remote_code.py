"""Compact checkpoints that load without hf_srnets (issue 49): `save_pretrained_model` writes a modeling file beside
the weights, and `AutoModelForSequenceClassification.from_pretrained(path, trust_remote_code=True)`, in a process
where `hf_srnets` cannot be imported, gives the masked model's logits (1e-5) for BERT, DistilBERT, ModernBERT and a
Llama decoder, with heads (a whole layer's, too) and FFN units removed differently per layer."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest
import torch
from conftest import tiny_model
from transformers import AutoModelForSequenceClassification, LlamaConfig, ModernBertConfig

from compact.helpers import lively, logits, padded_inputs
from hf_srnets import compact_model, load_pretrained_model, save_pretrained_model
from hf_srnets.compact import attention_sites, ffn_sites
from hf_srnets.compact.families import unit_sites
from hf_srnets.compact.remote_code import LAYOUT_ATTR, REMOTE_CODE_FILE, compact_layout

# loads every model dir named on the command line with transformers alone and saves its logits on the batch
OUTSIDE = """
import sys
sys.modules["hf_srnets"] = None  # `import hf_srnets` now raises ImportError, as where it is not installed
import torch
from transformers import AutoModelForSequenceClassification
try:
    import hf_srnets
except ImportError:
    pass
else:
    raise SystemExit("hf_srnets is importable")
batch_file, out_file, *paths = sys.argv[1:]
batch, found = torch.load(batch_file), {}
for path in paths:
    model = AutoModelForSequenceClassification.from_pretrained(path, trust_remote_code=True).eval()
    with torch.no_grad():
        found[path] = {"logits": model(**batch).logits, "class": type(model).__name__}
torch.save(found, out_file)
"""

DECODER = {"vocab_size": 100, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 2, "head_dim": 8, "intermediate_size": 48, "max_position_embeddings": 128,
           "pad_token_id": 0, "num_labels": 3}  # fmt: skip
MODERNBERT = {"vocab_size": 100, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
              "intermediate_size": 48, "max_position_embeddings": 128, "pad_token_id": 0, "bos_token_id": 2,
              "eos_token_id": 3, "cls_token_id": 2, "sep_token_id": 3, "num_labels": 3}  # fmt: skip


def _zero_bert(model):
    """Layer 0: head 1 and FFN units 0-9 zeroed; layer 1: both heads (its attention goes) and units 5-24."""
    with torch.no_grad():
        heads, ffn = attention_sites(model), ffn_sites(model)
        heads[0].output.weight[:, 16:32] = 0.0
        heads[1].output.weight[:] = 0.0
        ffn[0].w_out.weight[:, :10] = 0.0
        ffn[1].w_out.weight[:, 5:25] = 0.0


def _zero_family(model):
    """Layer 0: attention unit 1 and MLP units 0-9 zeroed; layer 1: MLP units 3-22 (through the output matrices)."""
    with torch.no_grad():
        sites = unit_sites(model)
        attention, mlp = sites[0]
        out = attention.parts[-1]
        out.linear.weight[:, out.size : 2 * out.size] = 0.0
        mlp.parts[-1].linear.weight[:, :10] = 0.0
        sites[1][1].parts[-1].linear.weight[:, 3:23] = 0.0


def _family_model(config):
    torch.manual_seed(0)
    return AutoModelForSequenceClassification.from_config(config).eval()


MODELS = {
    "bert": (lambda: tiny_model("bert"), _zero_bert),
    "distilbert": (lambda: tiny_model("distilbert"), _zero_bert),
    "modernbert": (lambda: _family_model(ModernBertConfig(**MODERNBERT)), _zero_family),
    "llama": (lambda: _family_model(LlamaConfig(**DECODER)), _zero_family),
}


@pytest.fixture(scope="module")
def outside(tmp_path_factory):
    """Each kind's masked model and saved compact dir, and what transformers alone loads from each dir."""
    root = tmp_path_factory.mktemp("remote_code")
    batch = padded_inputs(0, (3, 9), {1: 5, 2: 7})
    torch.save(batch, root / "batch.pt")
    saved = {}
    for kind, (build, zero) in MODELS.items():
        dense = lively(build())
        masked = copy.deepcopy(dense)
        zero(masked)
        compact = copy.deepcopy(masked)
        compact_model(compact)
        save_pretrained_model(compact, str(root / kind))
        saved[kind] = {"dense": dense, "masked": masked, "compact": compact, "dir": root / kind}
    env = dict(os.environ, HF_MODULES_CACHE=str(root / "modules"), HF_HUB_OFFLINE="1", PYTHONPATH="")
    command = [sys.executable, "-c", OUTSIDE, str(root / "batch.pt"), str(root / "out.pt")]
    done = subprocess.run([*command, *(str(s["dir"]) for s in saved.values())], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    found = torch.load(root / "out.pt")
    return {kind: {**s, **found[str(s["dir"])], "batch": batch} for kind, s in saved.items()}


@pytest.mark.parametrize("kind", list(MODELS))
def test_transformers_alone_loads_the_compact_model_with_the_masked_models_logits(outside, kind):
    case = outside[kind]
    expected = logits(case["masked"], case["batch"])
    assert (expected - logits(case["dense"], case["batch"])).abs().max() > 1e-2  # the removed units mattered
    torch.testing.assert_close(case["logits"], expected, atol=1e-5, rtol=0)
    assert case["class"] == "SRNetCompact" + type(case["compact"]).__name__
    assert (case["dir"] / REMOTE_CODE_FILE).is_file()


@pytest.mark.parametrize("kind", list(MODELS))
def test_hf_srnets_still_loads_it_and_a_plain_save_forgets_the_remote_code(outside, kind, tmp_path):
    case = outside[kind]
    loaded = load_pretrained_model(str(case["dir"]))
    torch.testing.assert_close(logits(loaded, case["batch"]), logits(case["masked"], case["batch"]), atol=1e-5, rtol=0)
    loaded.save_pretrained(tmp_path / "plain")  # no modeling file beside it: config.json must not point at one
    config = json.loads((tmp_path / "plain" / "config.json").read_text())
    assert "auto_map" not in config and LAYOUT_ATTR not in config
    save_pretrained_model(loaded, str(tmp_path / "again"))
    again = json.loads((tmp_path / "again" / "config.json").read_text())
    saved = json.loads((case["dir"] / "config.json").read_text())
    assert again[LAYOUT_ATTR] == saved[LAYOUT_ATTR] and again["auto_map"] == saved["auto_map"]


def test_the_bert_layout_lists_exactly_the_resized_parts(outside):
    """By hand, for `_zero_bert` on TINY (hidden 32, 2 heads of 16, FFN 64): layer 0 keeps head 0 (Q, K, V 32 -> 16
    rows, the output projection 16 columns) and 54 FFN units; layer 1 keeps no head and 44 units; the config's
    intermediate_size becomes the largest width, 54, so layer 0's FFN is stock-shaped; head counts are attributes;
    layer 1's attention runs eagerly."""
    layout = compact_layout(outside["bert"]["compact"])
    layer = "bert.encoder.layer.{}."
    expected = {layer.format(0) + f"attention.self.{m}": [32, 16, True] for m in ("query", "key", "value")}
    expected |= {layer.format(1) + f"attention.self.{m}": [32, 0, True] for m in ("query", "key", "value")}
    expected |= {layer.format(0) + "attention.output.dense": [16, 32, True]}
    expected |= {layer.format(1) + "attention.output.dense": [0, 32, True]}
    expected |= {layer.format(1) + "intermediate.dense": [32, 44, True]}
    expected |= {layer.format(1) + "output.dense": [44, 32, True]}
    assert layout["linear"] == expected
    assert layout["attributes"] == {
        layer.format(0) + "attention.self": {"num_attention_heads": 1, "all_head_size": 16},
        layer.format(1) + "attention.self": {"num_attention_heads": 0, "all_head_size": 0},
    }
    assert layout["eager_attention"] == [layer.format(1) + "attention.self"]


@pytest.mark.parametrize("entry", [["wide", 64, True], [32, -1, True], [32, 44], [32, 44, "yes"], "32x44"])
def test_a_damaged_layout_entry_is_named_by_the_modeling_file(outside, entry):
    """Issue 70: a config.json edited to a width "wide" made the modeling file fail with a bare ValueError of
    nn.Linear's; it names the entry, what it must be and the fix (the file runs without hf_srnets)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("srnet_remote_code", outside["bert"]["dir"] / REMOTE_CODE_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = "bert.encoder.layer.1.intermediate.dense"
    with pytest.raises(ValueError, match=rf"srnet_compact_layout\['linear'\]\['{path}'\] is .*, not \[in_features"):
        module.apply_compact_layout(copy.deepcopy(outside["bert"]["compact"]), {"linear": {path: entry}})


def test_a_model_whose_config_states_its_shapes_gets_no_modeling_file(tmp_path):
    model = tiny_model("bert")
    with torch.no_grad():
        for site in ffn_sites(model):
            site.w_out.weight[:, :8] = 0.0  # the same 8 units in every layer: one width, a stock checkpoint
    compact_model(model)
    save_pretrained_model(model, str(tmp_path))
    config = json.loads((tmp_path / "config.json").read_text())
    assert not (tmp_path / REMOTE_CODE_FILE).exists() and "auto_map" not in config
    assert config["intermediate_size"] == 56
    assert AutoModelForSequenceClassification.from_pretrained(tmp_path).config.intermediate_size == 56


def test_a_module_the_stock_model_lacks_is_refused_by_name():
    model = tiny_model("bert")
    with torch.no_grad():
        attention_sites(model)[0].output.weight[:, :16] = 0.0
    compact_model(model)
    model.bert.encoder.layer[0].extra = torch.nn.Linear(2, 2)
    with pytest.raises(ValueError, match=r"bert\.encoder\.layer\.0\.extra is not in the stock model"):
        compact_layout(model)


def test_a_trainer_saving_a_compact_model_writes_its_modeling_file(tmp_path):
    """A recovery stage (`--pruning none` from a compact checkpoint) saves through `SRNetTrainer._save`."""
    from training.helpers import cpu_args, synthetic_nli, tiny_tokenizer

    from hf_srnets.training.collator import SRNetDataCollator
    from hf_srnets.training.trainer import SRNetTrainer

    model = lively(tiny_model("bert"))
    _zero_bert(model)
    compact_model(model)
    tokenizer = tiny_tokenizer(tmp_path)
    trainer = SRNetTrainer(
        model=model,
        args=cpu_args(tmp_path / "out", max_steps=1),
        train_dataset=synthetic_nli(tokenizer, n=8),
        data_collator=SRNetDataCollator(tokenizer),
        processing_class=tokenizer,
    )
    trainer.train()
    trainer.save_model()
    assert (tmp_path / "out" / REMOTE_CODE_FILE).is_file()
    loaded = AutoModelForSequenceClassification.from_pretrained(tmp_path / "out", trust_remote_code=True)
    batch = padded_inputs(1, (2, 6))
    torch.testing.assert_close(logits(loaded.eval(), batch), logits(trainer.model.eval(), batch), atol=1e-6, rtol=0)
