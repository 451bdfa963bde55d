"""`export_compressed_tensors`: the compressed-tensors sparse formats, against the library itself and the source.

The expected tensors come from outside this code: `fixtures/compressed_tensors_v0_14/` holds weights compressed by
compressed-tensors 0.14.0.1's own `BitmaskCompressor` and `Sparse24BitMaskCompressor` (the last release that has
them, made by `fixtures/make_compressed_tensors_v0_14.py`), and the weights read back are compared with the source
checkpoint's file, read with safetensors. A planted break of the 2:4 pattern turns `auto` to bitmask and makes `2:4`
refused; dense and compact models are refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from compressed_tensors.config import SparsityCompressionConfig
from compressed_tensors.utils import pack_bitmasks, unpack_bitmasks
from conftest import tiny_model
from safetensors.torch import load_file

from hf_srnets import load_pretrained_model
from hf_srnets.compact import prune_heads
from hf_srnets.errors import InputError
from hf_srnets.export import (
    EXPORT_REPORT_NAME,
    export_compressed_tensors,
    load_compressed_tensors,
    read_compressed_tensors,
)
from hf_srnets.export.compressed_tensors import FORMAT_PARAMETERS, compressed_state, decompress_weight

from .helpers import lively, merged_srnet, save_classifier

LIBRARY = Path(__file__).parent / "fixtures" / "compressed_tensors_v0_14"
TARGETS = {"bitmask": {"encoder.a", "encoder.b", "encoder.c"}, "2:4": {"encoder.a", "encoder.c"}}
LIBRARY_FILES = {"bitmask": "sparse_bitmask.safetensors", "2:4": "sparse_24_bitmask.safetensors"}


@pytest.mark.parametrize("fmt", ["bitmask", "2:4"])
def test_the_compressed_tensors_are_those_the_library_wrote(fmt):
    source = load_file(LIBRARY / "source.safetensors")
    library = load_file(LIBRARY / LIBRARY_FILES[fmt])
    ours = compressed_state(source, TARGETS[fmt], fmt, pack_bitmasks)
    assert sorted(ours) == sorted(library)
    for key, tensor in library.items():
        assert ours[key].dtype == tensor.dtype and torch.equal(ours[key], tensor), key


@pytest.mark.parametrize("fmt", ["bitmask", "2:4"])
def test_the_library_s_tensors_decompress_to_the_source(fmt):
    source = load_file(LIBRARY / "source.safetensors")
    library = load_file(LIBRARY / LIBRARY_FILES[fmt])
    for layer in TARGETS[fmt]:
        parts = {name: library[f"{layer}.{name}"] for name in FORMAT_PARAMETERS[fmt]}
        dense = decompress_weight(parts, unpack_bitmasks)
        assert dense.dtype == source[f"{layer}.weight"].dtype and torch.equal(dense, source[f"{layer}.weight"])


def check_round_trip(model_dir: Path, out: Path) -> dict:
    """The checkpoint read back equals the source file tensor for tensor; the model loaded from it gives the source
    model's logits exactly; returns the quantization_config written."""
    source = load_file(model_dir / "model.safetensors")
    restored = read_compressed_tensors(str(out))
    assert sorted(restored) == sorted(source)
    for key, tensor in source.items():
        assert restored[key].dtype == tensor.dtype and torch.equal(restored[key], tensor), key
    ids = torch.randint(5, 90, (2, 7), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert torch.equal(
            load_compressed_tensors(str(out))(ids).logits, load_pretrained_model(str(model_dir))(ids).logits
        )
    config = json.loads((out / "config.json").read_text())["quantization_config"]
    sparsity = config["sparsity_config"]
    assert SparsityCompressionConfig.load_from_registry(sparsity["format"], **sparsity).format == sparsity["format"]
    return config


def test_an_element_sparse_srnet_is_stored_as_bitmask_and_read_back_identical(tmp_path):
    model_dir = save_classifier(merged_srnet(lively(tiny_model("bert")), "element", 0.7), tmp_path / "merged")
    report = export_compressed_tensors(str(model_dir), str(tmp_path / "ct"))
    config = check_round_trip(model_dir, tmp_path / "ct")
    assert config["quant_method"] == "compressed-tensors" and set(config) == {
        "quant_method", "version", "sparsity_config", "transform_config"
    }  # fmt: skip
    sparsity = config["sparsity_config"]
    assert sparsity["format"] == "sparse-bitmask" and sparsity["sparsity_structure"] == "unstructured"
    assert sparsity["targets"] == ["Linear"] and sparsity["ignore"] == ["bert.pooler.dense"]  # dense: not compressed
    stored = load_file(tmp_path / "ct" / "model.safetensors")
    assert "bert.encoder.layer.0.attention.self.query.bitmask" in stored and "bert.pooler.dense.weight" in stored
    assert "bert.embeddings.word_embeddings.weight" in stored  # embeddings stay as they are
    assert report["sparsity_format"] == "sparse-bitmask" and report["file_bytes"] < report["dense_bytes"]
    assert report["compressed_layers_bytes"] < 0.5 * report["compressed_layers_dense_bytes"]  # 70% zeros
    assert json.loads((tmp_path / "ct" / EXPORT_REPORT_NAME).read_text()) == report
    assert (tmp_path / "ct" / "tokenizer_config.json").is_file()


def test_a_2_4_srnet_is_stored_2_4_with_half_the_values(tmp_path):
    model_dir = save_classifier(merged_srnet(lively(tiny_model("bert")), "nm", 0.5), tmp_path / "merged")
    report = export_compressed_tensors(str(model_dir), str(tmp_path / "ct"))
    sparsity = check_round_trip(model_dir, tmp_path / "ct")["sparsity_config"]
    assert sparsity["format"] == "sparse-24-bitmask" and sparsity["sparsity_structure"] == "2:4"
    stored = load_file(tmp_path / "ct" / "model.safetensors")
    assert stored["bert.encoder.layer.0.intermediate.dense.compressed"].shape == (64, 16)  # [out, in / 2]
    assert stored["bert.encoder.layer.0.intermediate.dense.shape"].tolist() == [[64], [32]]
    assert report["sparsity_format"] == "sparse-24-bitmask"


def test_one_weight_breaking_2_4_turns_auto_to_bitmask_and_refuses_2_4(tmp_path):
    model = merged_srnet(lively(tiny_model("bert")), "nm", 0.5)
    weight = model.bert.encoder.layer[1].output.dense.weight
    with torch.no_grad():
        column = int((weight[3, :4] == 0).nonzero()[0])
        weight[3, column] = 0.25  # 3 nonzero weights in one group of 4
    model_dir = save_classifier(model, tmp_path / "merged")
    with pytest.raises(InputError, match=r"1 of the 13 sparse weights break the 2:4 pattern \(bert\.encoder\.layer\.1"
                       r"\.output\.dense: 1 of its 512 groups .*use --sparsity_format bitmask"):  # fmt: skip
        export_compressed_tensors(str(model_dir), str(tmp_path / "refused"), sparsity_format="2:4")
    assert not (tmp_path / "refused").exists()
    report = export_compressed_tensors(str(model_dir), str(tmp_path / "ct"))
    assert report["sparsity_format"] == "sparse-bitmask" and report["sparsity_structure"] == "unstructured"
    check_round_trip(model_dir, tmp_path / "ct")


def test_a_dense_model_and_a_compact_model_are_refused(tmp_path):
    dense = save_classifier(tiny_model("bert"), tmp_path / "dense")
    with pytest.raises(InputError, match=r"has no sparse nn\.Linear weight .* --format onnx"):
        export_compressed_tensors(str(dense), str(tmp_path / "out"))
    compact = merged_srnet(tiny_model("bert"), "element", 0.5)
    prune_heads(compact, {0: [1]})
    compact_dir = save_classifier(compact, tmp_path / "compact")
    with pytest.raises(InputError, match=r"is a compact model .*srnet_pruned_heads.* without --save_compact"):
        export_compressed_tensors(str(compact_dir), str(tmp_path / "out"))
