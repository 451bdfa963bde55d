"""Per-sentence attack outcomes small enough to commit, and paired differences between two models from them.

A run's `attack_<recipe>.jsonl` (`hf_srnets.attack.results`) holds each attacked sentence's text; the committed copy,
`attack_<recipe>.jsonl.gz`, keeps every row without the sentences (`original`, `perturbed`: the data set's text
stays in its files) and is gzipped with no time in its header, so the same results give the same bytes.
Tables read either form. Two models are paired on the sentences both attacked (by example id) and, with several
seeds, seed by seed; Clean%, Aua% and Suc% differences get paired bootstrap intervals (`hf_srnets.metrics.bootstrap`),
Suc% recomputed as successful / attacked on each resample.
"""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..metrics.bootstrap import DEFAULT_RESAMPLES, PairedInterval, paired_bootstrap, paired_bootstrap_ratio
from .results import read_results, results_path

TEXT_FIELDS = ("original", "perturbed")  # left out of the committed copies


def attack_file(run_dir: Path, recipe: str) -> Path | None:
    """The run's per-sentence results of one recipe, as `run_attack.py` writes them or gzipped; None without."""
    path = Path(results_path(str(run_dir), recipe))
    return next((p for p in (path, path.with_name(path.name + ".gz")) if p.is_file()), None)


def outcomes(run_dir: Path, recipe: str) -> dict[str, str]:
    """Example id -> attack outcome (skipped / failed / successful) of one run and recipe; {} without a file."""
    path = attack_file(run_dir, recipe)
    if path is None:
        return {}
    if path.suffix != ".gz":
        return {str(r.id): r.result.outcome for r in read_results(str(path))}
    with gzip.open(path, "rt", encoding="utf-8") as f:  # a saved copy: complete rows, without the sentences
        rows = [json.loads(line) for line in f]
    return {str(r["id"]): r["outcome"] for r in rows if r.get("type") == "result"}


def without_text(jsonl: bytes) -> bytes:
    """The attack rows without the sentences: the tables need only each sentence's id, outcome and counts."""
    rows = [json.loads(line) for line in jsonl.splitlines() if line.strip()]
    return b"".join(
        (json.dumps({k: v for k, v in row.items() if k not in TEXT_FIELDS}) + "\n").encode() for row in rows
    )


def save_attack_copy(run_dir: Path, recipe: str, dest: Path) -> Path | None:
    """Write the committed form of the run's `recipe` results into `dest`; None when the run has none."""
    path = attack_file(run_dir, recipe)
    if path is None:
        return None
    dest.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".gz":  # already a saved copy
        shutil.copyfile(path, dest / path.name)
        return dest / path.name
    target = dest / (path.name + ".gz")
    with gzip.GzipFile(target, "wb", mtime=0) as out:  # mtime 0: the same bytes each time
        out.write(without_text(path.read_bytes()))
    return target


def outcome_arrays(runs: Sequence[dict[str, str]], ids: Sequence[str]) -> dict[str, np.ndarray]:
    """[seeds, sentences] 0/1 arrays: clean (not skipped), under attack (failed), successful."""
    names = {"clean": ("failed", "successful"), "aua": ("failed",), "successful": ("successful",)}
    return {k: np.array([[run[i] in v for i in ids] for run in runs], dtype=float) for k, v in names.items()}


def paired_outcomes(
    pairs: Sequence[tuple[dict[str, str], dict[str, str]]], resamples: int = DEFAULT_RESAMPLES
) -> tuple[dict[str, PairedInterval], int]:
    """Clean, Aua and Suc of the first model of each (seed's) pair minus the second's, on the sentences every
    pair attacked, with paired bootstrap intervals, and the number of those sentences. Raises ValueError when
    the pairs share no sentence, or when a seed classified none correctly (its Suc% is undefined)."""
    if not pairs:
        raise ValueError("no pair of attack results to compare")
    ids = [i for i in pairs[0][0] if all(i in m and i in b for m, b in pairs)]
    if not ids:
        raise ValueError("the two models were attacked on no sentence in common")
    m, b = outcome_arrays([p[0] for p in pairs], ids), outcome_arrays([p[1] for p in pairs], ids)
    intervals = {
        "clean": paired_bootstrap(m["clean"], b["clean"], n_resamples=resamples),
        "aua": paired_bootstrap(m["aua"], b["aua"], n_resamples=resamples),
        "suc": paired_bootstrap_ratio(m["successful"], m["clean"], b["successful"], b["clean"], n_resamples=resamples),
    }
    return intervals, len(ids)
