"""Damaged, truncated or mismatched mask files are refused with an error naming the file and the tensor."""

import json
import logging
import math
import os
import struct

import pytest
import torch
from conftest import tiny_model
from safetensors.torch import load_file, save_file

from hf_srnets.errors import InputError
from hf_srnets.masking import SRNetModel
from hf_srnets.masking.hub_upload import make_config_portable
from hf_srnets.pruning import CONFIG_NAME, MASKS_NAME, ThresholdConfig
from hf_srnets.pruning.mask_codec import decode_mask
from hf_srnets.pruning.mask_files import pack_mask, read_mask_dir, tensor_checksum, unpack_mask
from hf_srnets.pruning.threshold import update_thresholds

QUERY = "bert.encoder.layer.0.attention.self.query"


def _saved(tmp_path, trainable_classifier=False):
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5, trainable_classifier=trainable_classifier))
    gen = torch.Generator().manual_seed(4)
    with torch.no_grad():
        for layer in srnet.masked_layers().values():
            layer.mask_scores.copy_(torch.rand(layer.mask_scores.shape, generator=gen))
        if trainable_classifier:
            srnet.base_model.classifier.base_layer.weight.add_(0.5)
    update_thresholds(srnet, 0.5)
    srnet.save_pretrained(tmp_path)
    return srnet


def _flip_bytes(path, key, count=64):
    """Flip `count` bytes inside the data of tensor `key`, leaving the safetensors header valid."""
    raw = bytearray(path.read_bytes())
    (header_len,) = struct.unpack("<Q", raw[:8])
    start, end = json.loads(raw[8 : 8 + header_len])[key]["data_offsets"]
    base = 8 + header_len + start
    for i in range(min(count, end - start)):
        raw[base + i] ^= 0xFF
    path.write_bytes(bytes(raw))


def _rewrite(path, changes):
    """Rewrite the masks file with some tensors replaced (None: removed), keeping the others."""
    tensors = load_file(path)
    for key, value in changes.items():
        if value is None:
            tensors.pop(key)
        else:
            tensors[key] = value
    save_file(tensors, path)


def _drop_checksums(directory):
    """Make the config look as written before checksums existed."""
    path = directory / CONFIG_NAME
    config = json.loads(path.read_text())
    config.pop("tensor_checksums", None)
    path.write_text(json.dumps(config))


def test_checksums_are_recorded_and_the_config_round_trips(tmp_path):
    _saved(tmp_path, trainable_classifier=True)
    data = json.loads((tmp_path / CONFIG_NAME).read_text())
    tensors = load_file(tmp_path / MASKS_NAME)
    assert set(data["tensor_checksums"]) == set(tensors) | {CONFIG_NAME}  # every tensor, and the config's fields
    assert "trainable.classifier.base_layer.weight" in data["tensor_checksums"]
    assert ThresholdConfig.from_dict(data).tensor_checksums == data["tensor_checksums"]


def test_flipped_mask_bytes_are_refused(tmp_path):
    _saved(tmp_path)
    _flip_bytes(tmp_path / MASKS_NAME, QUERY)
    with pytest.raises(ValueError, match=rf"'{QUERY}' in .*{MASKS_NAME} does not match the checksum"):
        SRNetModel.from_pretrained(tiny_model("bert"), tmp_path)


def test_flipped_classifier_bytes_are_refused(tmp_path):
    _saved(tmp_path, trainable_classifier=True)
    _flip_bytes(tmp_path / MASKS_NAME, "trainable.classifier.base_layer.weight", count=16)
    with pytest.raises(ValueError, match=r"'trainable\.classifier\.base_layer\.weight' .* does not match the checksum"):
        SRNetModel.from_pretrained(tiny_model("bert"), tmp_path)


def _to_bit_packed(directory):
    """Make the directory look as written before masks were entropy-coded: bit-packed masks, no `mask_encoding`."""
    config = json.loads((directory / CONFIG_NAME).read_text())
    tensors = load_file(directory / MASKS_NAME)
    for name, shape in config["module_shapes"].items():
        tensors[name] = pack_mask(decode_mask(tensors[name], tuple(shape)))
    save_file(tensors, directory / MASKS_NAME)
    config.pop("mask_encoding")
    config["tensor_checksums"] = {key: tensor_checksum(tensor) for key, tensor in tensors.items()}
    (directory / CONFIG_NAME).write_text(json.dumps(config))


def test_a_bit_packed_mask_cut_to_half_its_length_is_refused(tmp_path):
    srnet = _saved(tmp_path)
    _to_bit_packed(tmp_path)
    packed = pack_mask(srnet.binary_masks()[QUERY])
    _rewrite(tmp_path / MASKS_NAME, {QUERY: packed[: packed.numel() // 2].clone()})
    _drop_checksums(tmp_path)  # the length check alone must catch it
    with pytest.raises(ValueError, match=rf"'{QUERY}' in .*{MASKS_NAME} has 64 bytes, .* shape \(32, 32\) needs 128"):
        SRNetModel.from_pretrained(tiny_model("bert"), tmp_path)


@pytest.mark.parametrize("checksums", [True, False])
def test_an_encoded_mask_cut_to_half_its_length_is_refused(tmp_path, checksums):
    _saved(tmp_path)
    encoded = load_file(tmp_path / MASKS_NAME)[QUERY]
    _rewrite(tmp_path / MASKS_NAME, {QUERY: encoded[: encoded.numel() // 2].clone()})
    if not checksums:  # then decoding alone must catch it
        _drop_checksums(tmp_path)
    error = "does not match the checksum" if checksums else "cannot be decoded .*truncated or damaged"
    with pytest.raises(ValueError, match=rf"'{QUERY}' in .*{MASKS_NAME} {error}"):
        SRNetModel.from_pretrained(tiny_model("bert"), tmp_path)


def test_unpack_mask_refuses_a_short_or_non_uint8_tensor():
    mask = torch.rand(10, 12) > 0.5
    packed = pack_mask(mask)
    assert torch.equal(unpack_mask(packed, (10, 12)), mask)
    with pytest.raises(ValueError, match=r"shape \(10, 12\) \(120 weights\) has 15 bytes, got 7"):
        unpack_mask(packed[:7], (10, 12))
    with pytest.raises(ValueError, match="must be uint8"):
        unpack_mask(packed.float(), (10, 12))


@pytest.mark.parametrize("old_format", [False, True])
def test_missing_mask_or_wrong_dtype_names_file_and_key(tmp_path, old_format):
    srnet = _saved(tmp_path / "missing")
    _rewrite(tmp_path / "missing" / MASKS_NAME, {QUERY: None})
    wrong = tmp_path / "dtype"
    srnet.save_pretrained(wrong)
    _rewrite(wrong / MASKS_NAME, {QUERY: srnet.binary_masks()[QUERY].float()})
    if old_format:
        _drop_checksums(tmp_path / "missing")
        _drop_checksums(wrong)
    with pytest.raises(ValueError, match=rf"{MASKS_NAME} has no mask for '{QUERY}'"):
        SRNetModel.from_pretrained(tiny_model("bert"), tmp_path / "missing")
    with pytest.raises(ValueError, match=rf"mask '{QUERY}' in .* is a torch.float32 tensor of shape \(32, 32\)"):
        SRNetModel.from_pretrained(tiny_model("bert"), wrong)


def test_missing_or_truncated_file_is_a_clear_error(tmp_path):
    _saved(tmp_path)
    path = tmp_path / MASKS_NAME
    path.write_bytes(path.read_bytes()[: os.path.getsize(path) // 2])
    with pytest.raises(ValueError, match=rf"{MASKS_NAME} is damaged and cannot be read"):
        SRNetModel.from_pretrained(tiny_model("bert"), tmp_path)
    path.unlink()
    with pytest.raises(FileNotFoundError, match=rf"has {CONFIG_NAME} but no {MASKS_NAME}") as missing:
        SRNetModel.from_pretrained(tiny_model("bert"), tmp_path)
    assert isinstance(missing.value, InputError)  # scripts print it as one line


def test_missing_trained_classifier_is_a_clear_error(tmp_path):
    _saved(tmp_path, trainable_classifier=True)
    _rewrite(tmp_path / MASKS_NAME, {"trainable.classifier.base_layer.bias": None})
    _drop_checksums(tmp_path)
    with pytest.raises(ValueError, match=r"'trainable\.classifier\.base_layer\.bias' in .* is missing"):
        SRNetModel.from_pretrained(tiny_model("bert"), tmp_path)


@pytest.mark.parametrize("bit_packed", [False, True])
def test_masks_from_older_versions_load_unverified(tmp_path, caplog, bit_packed):
    srnet = _saved(tmp_path)
    if bit_packed:
        _to_bit_packed(tmp_path)
    _drop_checksums(tmp_path)
    with caplog.at_level(logging.WARNING, logger="hf_srnets.pruning.mask_files"):
        loaded = SRNetModel.from_pretrained(tiny_model("bert"), tmp_path)
    assert "written without checksums" in caplog.text and "unverified" in caplog.text
    for name, mask in srnet.binary_masks().items():
        assert torch.equal(loaded.binary_masks()[name], mask), name
    assert loaded.sparsity_report()["sparsity"] == pytest.approx(0.5, abs=0.01)
    num = sum(math.floor(0.5 * m.numel()) for m in srnet.binary_masks().values())
    assert loaded.sparsity_report()["num_pruned"] == num


@pytest.mark.parametrize(
    ("field", "value"),
    [("sparsity", 0.7), ("sparsity_scope", "global"), ("mask_classifier", False), ("target_modules", ["query"])],
)
def test_an_edited_config_is_refused_not_believed(tmp_path, field, value):
    _saved(tmp_path)
    path = tmp_path / CONFIG_NAME
    config = json.loads(path.read_text())
    config[field] = value
    path.write_text(json.dumps(config))
    with pytest.raises(InputError, match=rf"{CONFIG_NAME} was changed after the masks were saved: its fields"):
        SRNetModel.from_pretrained(tiny_model("bert"), tmp_path)
    with pytest.raises(InputError, match="changed after the masks were saved"):
        read_mask_dir(tmp_path)


def test_a_config_made_portable_for_an_upload_still_loads(tmp_path):
    srnet = _saved(tmp_path)
    path = tmp_path / CONFIG_NAME
    config = json.loads(path.read_text())
    config["base_model_name_or_path"] = "/home/someone/models/bert-mnli"
    path.write_text(json.dumps(config))
    make_config_portable(str(tmp_path))
    assert json.loads(path.read_text())["base_model_name_or_path"] == "bert-mnli"
    loaded = SRNetModel.from_pretrained(tiny_model("bert"), tmp_path)
    for name, mask in srnet.binary_masks().items():
        assert torch.equal(loaded.binary_masks()[name], mask), name


def test_masks_loaded_for_retraining_report_their_own_sparsity_as_the_target(tmp_path):
    """A mask dir whose config records the search's goal (50%) but whose masks are 30% sparse (e.g. saved mid-way
    through a cubic schedule): a --mask_from run logs the masks' 30% as its target, not the config's 50%."""
    from training.helpers import cpu_args, synthetic_nli, tiny_tokenizer

    from hf_srnets.training.collator import SRNetDataCollator
    from hf_srnets.training.trainer import SRNetTrainer

    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5))
    gen = torch.Generator().manual_seed(0)
    masks = {}
    for name, mask in srnet.binary_masks().items():
        keep = torch.ones(mask.numel(), dtype=torch.bool)
        keep[torch.randperm(mask.numel(), generator=gen)[: math.floor(0.3 * mask.numel())]] = False
        masks[name] = keep.reshape(mask.shape)
    srnet.set_masks(masks)
    srnet.save_pretrained(tmp_path / "masks")
    expected = sum(math.floor(0.3 * m.numel()) for m in masks.values()) / sum(m.numel() for m in masks.values())

    loaded = SRNetModel.from_pretrained(tiny_model("bert"), tmp_path / "masks", is_trainable=True)
    assert loaded.srnet_config.sparsity == 0.5  # the goal the config records, unchanged
    loaded.train_weights_with_fixed_masks()
    tokenizer = tiny_tokenizer(tmp_path)
    data = synthetic_nli(tokenizer, n=32, with_bias=False)
    args = cpu_args(tmp_path / "out", max_steps=2, logging_steps=1, loss="ce")
    trainer = SRNetTrainer(model=loaded, args=args, train_dataset=data, data_collator=SRNetDataCollator(tokenizer))
    metrics = trainer.train().metrics
    targets = [e["target_sparsity"] for e in trainer.state.log_history if "target_sparsity" in e]
    assert targets and all(t == pytest.approx(expected, abs=1e-9) for t in targets)
    assert metrics["target_sparsity"] == pytest.approx(expected, abs=1e-9)
