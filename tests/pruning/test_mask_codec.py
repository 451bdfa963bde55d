"""The mask codec (`hf_srnets.pruning.mask_codec`): exact round trips, size against the binary entropy H(s), structured
masks in a few bytes per unit, deterministic bytes, and the new format through save_pretrained / from_pretrained."""

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import tiny_model
from safetensors.torch import load_file, save_file
from transformers import AutoModelForSequenceClassification, BertConfig

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import CONFIG_NAME, MASKS_NAME, ThresholdConfig
from hf_srnets.pruning.magnitude import magnitude_prune
from hf_srnets.pruning.mask_codec import decode_mask, encode_mask, encoding_scheme, mask_header
from hf_srnets.pruning.mask_files import MASK_ENCODING, pack_mask, read_mask_dir, tensor_checksum

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "masks_v0"


def binary_entropy(s: float) -> float:
    """H(s) = −s·log₂ s − (1−s)·log₂(1−s), bits per weight."""
    return -(s * math.log2(s) + (1 - s) * math.log2(1 - s))


def _iid(n: int, s: float, seed: int = 0) -> torch.Tensor:
    """Each weight kept independently with probability 1 − s."""
    return torch.from_numpy(np.random.default_rng(seed).random(n) >= s)


def _round_trip(mask: torch.Tensor) -> torch.Tensor:
    encoded = encode_mask(mask)
    assert encoded.dtype == torch.uint8 and encoded.dim() == 1
    decoded = decode_mask(encoded, tuple(mask.shape))
    assert decoded.dtype == torch.bool and decoded.shape == mask.shape
    return decoded


@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (9,), (3, 5), (37, 129), (64, 64), (200_003,)])
@pytest.mark.parametrize("s", [0.0, 0.001, 0.3, 0.5, 0.7, 0.9, 0.999, 1.0])
def test_round_trip_is_exact_for_random_masks(shape, s):
    mask = torch.rand(shape, generator=torch.Generator().manual_seed(len(shape) + int(1000 * s))) >= s
    assert torch.equal(_round_trip(mask), mask)


@pytest.mark.parametrize("n", [1, 255, 256, 70_000, 300_001])
def test_round_trip_all_kept_all_pruned_and_long_runs(n):
    for fill in (True, False):
        assert torch.equal(_round_trip(torch.full((n,), fill)), torch.full((n,), fill))
    rng = np.random.default_rng(n)
    for length in (255, 256, 65_535, 65_536, 70_000):  # a run around the escape (255) and past 2**16
        mask = torch.zeros(n + length, dtype=torch.bool)
        start = int(rng.integers(0, n))
        mask[start : start + length] = True
        mask[-1] = True  # a single kept weight at the very end
        assert torch.equal(_round_trip(mask), mask)
        assert torch.equal(_round_trip(~mask), ~mask)


@pytest.mark.parametrize("s", [0.7, 0.9, 0.95])
def test_iid_masks_take_at_most_1_1_times_the_binary_entropy(s):
    n = 2_000_000
    encoded = encode_mask(_iid(n, s))
    bits_per_weight = 8 * encoded.numel() / n
    assert bits_per_weight <= 1.1 * binary_entropy(s), (s, bits_per_weight, encoding_scheme(encoded))
    assert bits_per_weight < 1.0  # less than bit-packing


def test_near_half_sparsity_falls_back_to_bit_packing():
    n = 1_000_003
    encoded = encode_mask(_iid(n, 0.5, seed=3))
    header = mask_header(encoded)
    assert header["scheme"] == "bits" and header["n"] == n
    assert header["offset"] == 4  # the scheme byte and n = 1,000,003 as a 3-byte varint
    assert encoded.numel() == 4 + math.ceil(n / 8)  # 1 bit per weight + the header


def _structured_masks(s: float) -> dict[str, tuple[np.ndarray, int]]:
    """Masks whose units are whole FFN rows, whole columns, whole heads (32 rows of W_Q) or 32×32 tiles, about a
    fraction s of the units pruned at random: name -> (mask, number of units)."""
    rng = np.random.default_rng(7)
    rows = rng.random(1536) >= s
    cols = rng.random(384) >= s
    heads = rng.permutation(12) >= round(s * 12)
    tiles = rng.random((1536 // 32, 384 // 32)) >= s
    return {
        "rows": (np.repeat(rows[:, None], 384, axis=1), rows.size),
        "columns": (np.repeat(cols[None, :], 1536, axis=0), cols.size),
        "heads": (np.repeat(np.repeat(heads, 32)[:, None], 384, axis=1), heads.size),
        "tiles": (np.kron(tiles, np.ones((32, 32), dtype=bool)).astype(bool), tiles.size),
    }


@pytest.mark.parametrize("s", [0.3, 0.5, 0.9])
def test_structured_masks_take_a_few_bytes_per_unit(s):
    for name, (mask, units) in _structured_masks(s).items():
        tensor = torch.from_numpy(mask)
        encoded = encode_mask(tensor)
        assert torch.equal(decode_mask(encoded, tuple(mask.shape)), tensor), name
        per_unit = encoded.numel() / units
        assert per_unit <= 6.0, (name, s, per_unit, encoding_scheme(encoded))  # bit-packing: 48 to 1536 per unit


def test_encoding_is_deterministic_and_picks_the_smallest_scheme():
    mask = _iid(300_000, 0.9, seed=1)
    first, second = encode_mask(mask), encode_mask(mask.clone())
    assert torch.equal(first, second)
    assert encoding_scheme(first) == "gaps-kept"  # rare kept weights: their gaps
    assert encoding_scheme(encode_mask(~mask)) == "gaps-pruned"  # s = 0.1: the pruned ones
    assert encoding_scheme(encode_mask(torch.from_numpy(_structured_masks(0.5)["rows"][0]))) == "runs"
    heads = torch.zeros(384, 384, dtype=torch.bool)
    heads[:64] = heads[200:232] = True  # three heads kept: 4 runs, shorter stored than compressed
    header = mask_header(encode_mask(heads))
    assert (header["scheme"], header["stored"], header["m"]) == ("runs", True, 4)
    assert encode_mask(heads).numel() == header["offset"] + 4 + 4 * 4  # 4 escaped runs: 1 + 4 bytes each
    assert encode_mask(torch.ones(1536, 384, dtype=torch.bool)).numel() == 5  # scheme, n (3 bytes), m = 0


def test_decode_refuses_other_shapes_and_non_uint8():
    encoded = encode_mask(_iid(1000, 0.9))
    with pytest.raises(ValueError, match=r"records 1000 weights, but the shape \(10, 99\) has 990"):
        decode_mask(encoded, (10, 99))
    with pytest.raises(ValueError, match="1-d uint8 tensor"):
        decode_mask(encoded.float(), (1000,))


def _damaged(encoded: torch.Tensor, how: str) -> torch.Tensor:
    raw = bytearray(encoded.numpy().tobytes())
    offset = mask_header(encoded)["offset"]  # where the compressed stream starts
    if how == "truncated":
        raw = raw[: len(raw) - 5]
    elif how == "trailing":
        raw += b"\x00\x00"
    elif how == "flipped":
        middle = offset + (len(raw) - offset) // 2
        raw[middle] ^= 0xFF
    elif how == "length":  # m, the number of gaps, off by one (the low bit of its last varint byte)
        raw[offset - 1] ^= 0x01
    return torch.frombuffer(raw, dtype=torch.uint8).clone()


@pytest.mark.parametrize("how", ["truncated", "trailing", "flipped", "length"])
def test_damaged_tensor_with_recomputed_checksum_is_refused_on_decode(tmp_path, how):
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5))
    name = "bert.encoder.layer.0.intermediate.dense"
    masks = {n: m.clone() for n, m in srnet.binary_masks().items()}
    masks[name] = _iid(masks[name].numel(), 0.95, seed=2).reshape(masks[name].shape)
    srnet.set_masks(masks)
    srnet.save_pretrained(tmp_path)
    tensors = load_file(tmp_path / MASKS_NAME)
    assert encoding_scheme(tensors[name]) == "gaps-kept"
    tensors[name] = _damaged(tensors[name], how)
    save_file(tensors, tmp_path / MASKS_NAME)
    config = json.loads((tmp_path / CONFIG_NAME).read_text())
    config["tensor_checksums"][name] = tensor_checksum(tensors[name])  # so the checksum passes
    (tmp_path / CONFIG_NAME).write_text(json.dumps(config))
    with pytest.raises(ValueError, match=rf"The mask '{name}' in .*{MASKS_NAME} cannot be decoded .*damaged"):
        SRNetModel.from_pretrained(tiny_model("bert"), tmp_path)


def test_save_and_load_round_trip_in_the_new_format(tmp_path):
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.9))
    gen = torch.Generator().manual_seed(3)
    masks = {n: torch.rand(m.shape, generator=gen) >= 0.9 for n, m in srnet.binary_masks().items()}
    srnet.set_masks(masks)
    srnet.save_pretrained(tmp_path / "a")
    srnet.save_pretrained(tmp_path / "b")
    for file in (MASKS_NAME, CONFIG_NAME):  # two saves of the same masks: the same bytes
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes()
    assert json.loads((tmp_path / "a" / CONFIG_NAME).read_text())["mask_encoding"] == MASK_ENCODING
    schemes = {encoding_scheme(t) for t in load_file(tmp_path / "a" / MASKS_NAME).values()}
    assert schemes & {"gaps-kept", "runs"}, schemes  # coded, not only bit-packed
    loaded = SRNetModel.from_pretrained(tiny_model("bert"), tmp_path / "a")
    for name, mask in masks.items():
        assert torch.equal(loaded.binary_masks()[name], mask), name
    config, read = read_mask_dir(tmp_path / "a")  # the reader of --random_like
    assert config.mask_encoding == MASK_ENCODING
    assert all(torch.equal(read[name], mask) for name, mask in masks.items())


def test_bit_packed_v0_directories_still_load():
    expected = torch.load(FIXTURE / "expected.pt", weights_only=True)
    for kind in ("threshold", "imp"):
        assert "mask_encoding" not in (FIXTURE / kind / CONFIG_NAME).read_text()
        config, masks = read_mask_dir(FIXTURE / kind)
        assert config.mask_encoding is None
        assert masks.keys() == expected[kind]["masks"].keys()
        for name, mask in expected[kind]["masks"].items():
            assert torch.equal(masks[name], mask), name
            assert torch.equal(load_file(FIXTURE / kind / MASKS_NAME)[name], pack_mask(mask))  # really bit-packed
        base = AutoModelForSequenceClassification.from_pretrained(FIXTURE / "base")
        loaded = SRNetModel.from_pretrained(base, FIXTURE / kind)
        assert all(torch.equal(loaded.binary_masks()[n], m) for n, m in expected[kind]["masks"].items())


def test_unknown_mask_encoding_is_a_clear_error(tmp_path):
    SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5)).save_pretrained(tmp_path)
    config = json.loads((tmp_path / CONFIG_NAME).read_text())
    config["mask_encoding"] = "zstd-v9"
    (tmp_path / CONFIG_NAME).write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"mask_encoding='zstd-v9', which this hf_srnets cannot read.*upgrade"):
        SRNetModel.from_pretrained(tiny_model("bert"), tmp_path)


def test_saved_mask_file_at_90_percent_is_within_the_entropy_budget(tmp_path):
    """The whole srnet_masks.safetensors (header, every tensor) per prunable weight, IMP at s = 0.9 (local)."""
    torch.manual_seed(0)
    config = BertConfig(
        hidden_size=256, num_hidden_layers=2, num_attention_heads=4, intermediate_size=1024, vocab_size=100
    )
    model = AutoModelForSequenceClassification.from_config(config)
    srnet = SRNetModel(model, ThresholdConfig(sparsity=0.9))
    magnitude_prune(srnet, 0.9)
    srnet.save_pretrained(tmp_path)
    n = srnet.sparsity_report()["num_prunable"]
    s = srnet.sparsity_report()["sparsity"]
    bits_per_weight = 8 * os.path.getsize(tmp_path / MASKS_NAME) / n
    assert s == pytest.approx(0.9, abs=0.002)
    assert bits_per_weight <= 1.1 * binary_entropy(s), bits_per_weight  # 0.516 bits; bit-packing took 1.01
    loaded = SRNetModel.from_pretrained(
        AutoModelForSequenceClassification.from_config(config), tmp_path, check_fingerprint=False
    )
    assert all(torch.equal(loaded.binary_masks()[k], m) for k, m in srnet.binary_masks().items())


def test_a_long_stream_near_half_sparsity_is_not_compressed_whole(monkeypatch):
    # at s = 0.45 the gap stream's order-0 cost is just below bit-packing, so only the head probe stops LZMA from
    # compressing all of it for nothing (a BERT-base save at 50% outran the H100 check of 2026-11-27)
    from hf_srnets.pruning import mask_codec

    sizes = []
    real = mask_codec._compress
    monkeypatch.setattr(mask_codec, "_compress", lambda data: sizes.append(len(data)) or real(data))
    mask = _iid(2_000_000, 0.45, seed=3)
    encoded = encode_mask(mask)
    assert encoding_scheme(encoded) == "bits" and torch.equal(decode_mask(encoded, (2_000_000,)), mask)
    assert sizes and max(sizes) <= max(mask_codec._PROBE, 1_000_000 // 16)  # heads only: the stream is ~1 MB
