"""A cache of fitted bias-model predictions, keyed by everything p_b depends on rather than by folder.

`cache_key` hashes (SHA-256) the bias model's code (the source of the modules that compute p_b), the task's
label names, the features (`overlap`/`claim`), the seed, the word vectors (a file's absolute path, size and
modification time; the GloVe package's files likewise; or the fastText settings when vectors are trained on
the training text, itself part of the key) and every split fitted on or predicted: its name and the `id`,
`sentence1`, `sentence2` and `label` of every row. Change any of them and the key changes, so a reused
`--output_dir` with other data fits again instead of reusing stale p_b.

Entries live in `<root>/<key>/` (`bias_<split>.jsonl` + `bias_report.json`, the `save_bias_predictions` layout).
`save_cached` writes an entry into a temporary folder and renames it into place (`os.replace`), so a reader
sees a complete entry or none, and two runs fitting the same key at once both end up with one complete entry.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Mapping
from typing import Any

from datasets import Dataset

from ..resources.word_vectors import FASTTEXT_SETTINGS, GLOVE_VECTORS, TRAIN_VECTORS, glove_package_dir
from ..run_files import BIAS_REPORT_NAME, bias_predictions_name
from .prediction_files import save_bias_predictions

logger = logging.getLogger(__name__)

KEY_LENGTH = 16
# the modules whose code determines p_b (a change to any of them invalidates every cached entry)
CODE_MODULES = (
    "bias/pipeline.py",
    "bias/kinds.py",
    "bias/cue.py",
    "resources/tokens.py",
    "bias/features.py",
    "bias/model.py",
    "bias/report.py",
    "resources/word_vectors.py",
)
KEYED_COLUMNS = ("id", "sentence1", "sentence2", "label")


def code_version(folder: str | None = None) -> str:
    """SHA-256 (first 16 hex digits) of the source of the modules that compute p_b (`CODE_MODULES`, paths under
    `folder`, default the `hf_srnets` package's folder)."""
    digest = hashlib.sha256()
    here = folder or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for name in CODE_MODULES:
        with open(os.path.join(here, name), "rb") as f:
            digest.update(name.encode() + b"\0" + f.read())
    return digest.hexdigest()[:KEY_LENGTH]


def _file_stamp(path: str) -> dict[str, Any]:
    stat = os.stat(path)
    return {"path": os.path.abspath(path), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def vectors_fingerprint(vectors: str | None) -> dict[str, Any]:
    """What identifies the word vectors `resolve_vectors` will use for `vectors` (module doc)."""
    if vectors not in (None, TRAIN_VECTORS, GLOVE_VECTORS):
        if not os.path.isfile(vectors):
            return {"kind": "file", "path": os.path.abspath(vectors), "missing": True}  # loading will say so
        return {"kind": "file", **_file_stamp(vectors)}
    root = glove_package_dir() if vectors in (None, GLOVE_VECTORS) else None
    if root is not None:
        return {
            "kind": "glove_package",
            "files": [_file_stamp(os.path.join(root, f)) for f in sorted(os.listdir(root))],
        }
    if vectors == GLOVE_VECTORS:
        return {"kind": "glove_package", "missing": True}  # loading will say so
    return {"kind": "trained_fasttext", "settings": FASTTEXT_SETTINGS}


def _hash_split(digest: Any, name: str, dataset: Dataset) -> None:
    columns = [c for c in KEYED_COLUMNS if c in dataset.column_names]
    digest.update(json.dumps({"split": name, "rows": len(dataset), "columns": columns}).encode())
    data = dataset.select_columns(columns).to_dict()
    for column in columns:
        digest.update(json.dumps(data[column], ensure_ascii=False, default=str).encode("utf-8"))


def cache_key(
    *,
    label_names: tuple[str, ...],
    bias_model: str,
    train: Dataset,
    splits: Mapping[str, Dataset],
    vectors: str | None,
    seed: int,
    C: float | None,
) -> tuple[str, dict[str, Any]]:
    """The cache key of a bias-model fit (module doc) and the readable parts of it (for the report)."""
    parts = {
        "code_version": code_version(),
        "label_names": list(label_names),
        "bias_model": bias_model,
        "seed": seed,
        "C": C if C is not None else "selected on held-out training rows",
        "vectors": vectors_fingerprint(vectors),
        "splits": {"train": len(train), **{name: len(ds) for name, ds in splits.items()}},
    }
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode())
    for name, dataset in {"train": train, **splits}.items():
        _hash_split(digest, name, dataset)
    return digest.hexdigest()[:KEY_LENGTH], parts


def entry_dir(root: str, key: str) -> str:
    return os.path.join(root, key)


def load_cached(root: str, key: str) -> tuple[dict[str, str], dict[str, Any]] | None:
    """The files (split -> path) and report of a complete cache entry, or None when there is none."""
    folder = entry_dir(root, key)
    report_path = os.path.join(folder, BIAS_REPORT_NAME)
    if not os.path.isfile(report_path):
        return None
    with open(report_path, encoding="utf-8") as f:
        report = json.load(f)
    if report.get("cache", {}).get("key") != key:
        logger.warning("Ignoring the bias-model cache %s: its report does not carry the key %s", folder, key)
        return None
    files = {split: os.path.join(folder, bias_predictions_name(split)) for split in report.get("splits", {})}
    if not all(os.path.isfile(p) for p in files.values()):
        logger.warning("Ignoring the incomplete bias-model cache %s", folder)
        return None
    return files, report


def save_cached(
    root: str,
    key: str,
    predictions: dict[str, dict[str, list[float]]],
    report: dict[str, Any],
    datasets: Mapping[str, Dataset] | None = None,
) -> dict[str, str]:
    """Write a cache entry atomically (module doc); return split -> path of the entry's prediction files.
    `datasets` (split -> its rows) give the rows their `text_digest` (`save_bias_predictions`)."""
    os.makedirs(root, exist_ok=True)
    final = entry_dir(root, key)
    tmp = tempfile.mkdtemp(prefix=f".{key}.tmp-", dir=root)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it 0700; the entry should be as readable as any output
    try:
        save_bias_predictions(tmp, predictions, report, files_dir=final, datasets=datasets)
        try:
            os.replace(tmp, final)
        except OSError:
            if load_cached(root, key) is not None:
                logger.info("Another run wrote the same bias-model cache entry %s first; using it", final)
            else:  # not an entry this module wrote (they appear complete or not at all): replace it
                logger.warning("Replacing the incomplete bias-model cache entry %s", final)
                shutil.rmtree(final)
                os.replace(tmp, final)
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    return {split: os.path.join(final, bias_predictions_name(split)) for split in predictions}
