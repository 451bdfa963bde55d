"""Near-entropy coding of binary masks: gaps or runs as bytes, compressed by LZMA; bit-packing otherwise.

A mask of n weights at sparsity s holds at least n·H(s) bits of information, H(s) = −s·log₂s − (1−s)·log₂(1−s)
the binary entropy (Cover & Thomas, *Elements of Information Theory*, §5): 0.47 bits per weight at s = 0.9, where
bit-packing spends 1. Each mask is encoded in the smallest of three schemes, named by the tensor's first byte:

- `SCHEME_BITS` (0): bit-packed, ⌈n/8⌉ bytes (the old format; wins near s = 0.5, where H(s) ≈ 1).
- `SCHEME_GAPS_KEPT` (1) / `SCHEME_GAPS_PRUNED` (2): the positions p_1 < … < p_m of the rarer symbol as gaps
  g_j = p_j − p_{j−1} − 1 (p_0 = −1), the number of common symbols before each rare one. For an i.i.d. mask the
  gaps are geometric, and an ideal coder of them spends n·H(s) bits in total; LZMA's adaptive range coder gets
  within a few percent of that (measured by `bench/bench_mask_size.py`).
- `SCHEME_RUNS` (3): the lengths of the alternating runs, kept first (a leading 0 when the mask starts pruned).
  Structured masks (whole rows, columns, heads, tiles) repeat a few run lengths, which LZMA's matches code in a
  few bytes per unit. Tried only when there are fewer runs than rare symbols.

Both streams write each length L as one byte min(L, 255), then, after the m bytes, L as uint32 little-endian for
every L ≥ 255 in order (a vectorisable escape). The bytes are compressed with raw LZMA2 (fixed filter settings, so
equal masks give equal bytes), or stored as they are when that is shorter (a handful of lengths: whole heads).
Layout of an encoded mask (1-d uint8): the scheme byte (+ `_STORED` when not compressed), n as an unsigned LEB128
varint, then for scheme 0 the packed bits, else m (varint) and the stream. Decoding checks every length: a
damaged or truncated tensor raises `ValueError`, never yields a mask of another size.
"""

from __future__ import annotations

import lzma
import math

import numpy as np
import torch

SCHEME_BITS, SCHEME_GAPS_KEPT, SCHEME_GAPS_PRUNED, SCHEME_RUNS = 0, 1, 2, 3
SCHEME_NAMES = {
    SCHEME_BITS: "bits",
    SCHEME_GAPS_KEPT: "gaps-kept",
    SCHEME_GAPS_PRUNED: "gaps-pruned",
    SCHEME_RUNS: "runs",
}
_STORED = 0x80  # added to a coded scheme's byte: the stream follows uncompressed
_ESCAPE = 255
# a 64 KiB window: matches within ~64K lengths are what structured masks repeat; a larger window made encoding
# 85M i.i.d. weights 4x slower for the same size (bench/bench_mask_size.py)
_DICT = 1 << 16
# lc = lp = pb = 0: the gap/run bytes do not depend on the previous byte or on their position (measured best)
_FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 6, "lc": 0, "lp": 0, "pb": 0, "dict_size": _DICT}]
# a stream is compressed only when its head (a 16th, at least _PROBE bytes) compresses below its share of
# bit-packing: near s = 0.5 an i.i.d. stream never does (LZMA spends ~7% above order 0), and compressing it whole
# was most of a save's time (BERT-base at 50%: the save outran the H100 check of 2026-11-27); a structured mask
# shows its repeats within a few rows
_PROBE = 1 << 14


def _varint(value: int) -> bytes:
    """Unsigned LEB128: 7 bits per byte, low first, high bit set on every byte but the last."""
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _read_varint(raw: bytes, offset: int) -> tuple[int, int]:
    """The varint at `offset` and the offset after it; refuses one that runs off the end or past 64 bits."""
    value = 0
    for i in range(10):
        if offset + i >= len(raw):
            raise ValueError("its header is truncated")
        value |= (raw[offset + i] & 0x7F) << (7 * i)
        if not raw[offset + i] & 0x80:
            return value, offset + i + 1
    raise ValueError("its header holds a length over 64 bits")


def _lengths_to_bytes(lengths: np.ndarray) -> bytes:
    """One byte min(L, 255) per length, then uint32 LE of each L ≥ 255 (the escapes), in order."""
    clipped = np.minimum(lengths, _ESCAPE).astype(np.uint8)
    return clipped.tobytes() + lengths[lengths >= _ESCAPE].astype("<u4").tobytes()


def _bytes_to_lengths(raw: bytes, m: int) -> np.ndarray:
    """Inverse of `_lengths_to_bytes` for m lengths; refuses a stream of any other size."""
    data = np.frombuffer(raw, dtype=np.uint8)
    if data.size < m:
        raise ValueError(f"the stream holds {data.size} bytes, fewer than its {m} lengths")
    lengths = data[:m].astype(np.int64)
    escaped = np.flatnonzero(lengths == _ESCAPE)
    if data.size != m + 4 * escaped.size:
        raise ValueError(
            f"the stream holds {data.size} bytes, but {m} lengths with {escaped.size} escapes need "
            f"{m + 4 * escaped.size}"
        )
    lengths[escaped] = np.frombuffer(raw, dtype="<u4", offset=m).astype(np.int64)
    return lengths


def _order0_bits(stream: bytes) -> float:
    """Empirical entropy of the stream's bytes times its length: what an order-0 coder would spend (bits)."""
    counts = np.bincount(np.frombuffer(stream, dtype=np.uint8), minlength=256)
    p = counts[counts > 0] / len(stream)
    return float(-(counts[counts > 0] * np.log2(p)).sum())


def _compress(data: bytes) -> bytes:
    """Raw LZMA2 at the codec's fixed settings (`_FILTERS`): equal bytes give equal output."""
    return lzma.compress(data, format=lzma.FORMAT_RAW, filters=_FILTERS)


def _coded(scheme: int, n: int, lengths: np.ndarray, stream: bytes) -> bytes:
    """The encoded mask of a coded scheme: LZMA2-compressed, or stored when that is not longer."""
    payload = _compress(stream)
    if len(stream) <= len(payload):
        scheme, payload = scheme | _STORED, stream
    return bytes([scheme]) + _varint(n) + _varint(lengths.size) + payload


def _probe_compresses(stream: bytes, n: int) -> bool:
    """Whether the stream's head (a 16th of it, at least `_PROBE` bytes) compresses below the bit-packed bits of its
    share of the n weights (always True for a stream no longer than `_PROBE`, which is compressed whole)."""
    size = max(_PROBE, len(stream) // 16)
    if len(stream) <= size:
        return True
    return len(_compress(stream[:size])) * len(stream) < math.ceil(n / 8) * size


def _gap_lengths(flat: np.ndarray, rare: bool) -> np.ndarray:
    positions = np.flatnonzero(flat == rare)
    return np.diff(positions, prepend=-1) - 1


def _run_lengths(flat: np.ndarray) -> np.ndarray:
    changes = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    runs = np.diff(np.concatenate(([0], changes, [flat.size])))
    return runs if flat[0] else np.concatenate(([0], runs))


def encode_mask(mask: torch.Tensor) -> torch.Tensor:
    """Encode a bool mask (True = kept) as a 1-d uint8 tensor in the smallest scheme (see the module docstring).

    A coded scheme is tried only when the order-0 entropy of its byte stream is below the bit-packed size (LZMA
    does not beat that bound on i.i.d. lengths) and, for a long stream, when its head (`_probe_compresses`) compresses
    below its share of it: both skip hopeless compressions near s = 0.5. Deterministic.
    """
    flat = mask.detach().cpu().reshape(-1).numpy().astype(np.bool_, copy=False)
    n = flat.size
    best = bytes([SCHEME_BITS]) + _varint(n) + np.packbits(flat).tobytes()
    if 0 < n < 2**32:  # lengths must fit the uint32 escapes: a larger matrix stays bit-packed
        kept = int(flat.sum())
        rare = kept * 2 <= n  # the rarer symbol: True (kept) at s ≥ 0.5
        candidates = [(SCHEME_GAPS_KEPT if rare else SCHEME_GAPS_PRUNED, _gap_lengths(flat, rare))]
        runs = _run_lengths(flat)
        if runs.size < candidates[0][1].size:
            candidates.append((SCHEME_RUNS, runs))
        for scheme, lengths in candidates:
            stream = _lengths_to_bytes(lengths)
            if stream and _order0_bits(stream) >= 8 * math.ceil(n / 8):
                continue
            if not _probe_compresses(stream, n):
                continue
            coded = _coded(scheme, n, lengths, stream)
            if len(coded) < len(best):
                best = coded
    return torch.from_numpy(np.frombuffer(best, dtype=np.uint8).copy())


def mask_header(data: torch.Tensor) -> dict[str, int | str | bool | None]:
    """What an encoded mask's header says: `scheme` (name), `stored` (not compressed), `n` (weights), `m`
    (lengths; None for bit-packed) and `offset` (where the packed bits or the stream start)."""
    if data.dtype != torch.uint8 or data.dim() != 1 or data.numel() < 2:
        raise ValueError("an encoded mask is a 1-d uint8 tensor of at least 2 bytes")
    raw = data[:21].numpy().tobytes()  # scheme + two varints of at most 10 bytes
    scheme, stored = raw[0] & ~_STORED, bool(raw[0] & _STORED)
    if scheme not in SCHEME_NAMES or (stored and scheme == SCHEME_BITS):
        raise ValueError(f"its scheme byte {raw[0]} is unknown (written by a newer hf_srnets?)")
    n, offset = _read_varint(raw, 1)
    m = None
    if scheme != SCHEME_BITS:
        m, offset = _read_varint(raw, offset)
    return {"scheme": SCHEME_NAMES[scheme], "stored": stored, "n": n, "m": m, "offset": offset}


def _decompress(payload: bytes, m: int) -> bytes:
    """The LZMA2 stream, refused unless it ends exactly at the end of the tensor and is no longer than m lengths
    with m escapes (so a damaged header cannot make it expand without bound)."""
    decompressor = lzma.LZMADecompressor(format=lzma.FORMAT_RAW, filters=_FILTERS)
    try:
        raw = decompressor.decompress(payload, max_length=5 * m + 1)
    except lzma.LZMAError as err:
        raise ValueError(f"its compressed data is corrupt ({err})") from err
    if not decompressor.eof:
        raise ValueError("its compressed data ends early (truncated) or expands beyond its recorded length")
    if decompressor.unused_data:
        raise ValueError(f"{len(decompressor.unused_data)} bytes follow its compressed data")
    return raw


def _decode_lengths(scheme: str, n: int, lengths: np.ndarray) -> np.ndarray:
    if scheme == "runs":
        if int(lengths.sum()) != n:
            raise ValueError(f"its runs cover {int(lengths.sum())} weights, not {n}")
        return np.repeat(np.arange(lengths.size) % 2 == 0, lengths)
    rare = scheme == "gaps-kept"
    positions = np.cumsum(lengths + 1) - 1
    if positions.size and positions[-1] >= n:
        raise ValueError(f"its gaps reach position {int(positions[-1])} of a mask of {n} weights")
    flat = np.full(n, not rare, dtype=np.bool_)
    flat[positions] = rare
    return flat


def decode_mask(data: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    """Inverse of `encode_mask`: the bool mask of `shape`. Raises `ValueError` saying what is wrong when the
    tensor is not uint8, records another number of weights, or its data does not decode to exactly n entries."""
    n = math.prod(shape)
    header = mask_header(data)
    if header["n"] != n:
        raise ValueError(f"it records {header['n']} weights, but the shape {tuple(shape)} has {n}")
    raw = data.numpy().tobytes()[header["offset"] :]
    if header["scheme"] == "bits":
        if len(raw) != math.ceil(n / 8):
            raise ValueError(f"it holds {len(raw)} packed bytes, {n} weights need {math.ceil(n / 8)}")
        flat = np.unpackbits(np.frombuffer(raw, dtype=np.uint8), count=n).astype(np.bool_)
        return torch.from_numpy(flat).reshape(shape)
    m = header["m"]
    if m > n + 1:
        raise ValueError(f"it records {m} lengths for {n} weights")
    lengths = _bytes_to_lengths(raw if header["stored"] else _decompress(raw, m), m)
    return torch.from_numpy(_decode_lengths(header["scheme"], n, lengths)).reshape(shape)


def encoding_scheme(data: torch.Tensor) -> str:
    """The name of the scheme an encoded mask uses (for reports and the benchmark)."""
    return str(mask_header(data)["scheme"])
