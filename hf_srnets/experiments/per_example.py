"""Per-example outputs small enough to commit: what every table, interval and plot of an experiment is computed from.

Layout, under `results/<experiment>/per_example/`:

    manifest.json                                  {"baseline": ..., "reference": ..., "metrics": [...]}
    <method>/s<sparsity>/seed<seed>/run.json       {"method", "sparsity", "seed", "results": {<metric>: value},
                                                    "cost": {"train_runtime": s, "eval_<set>_runtime": s, ...}}
    <method>/s<sparsity>/seed<seed>/<set>.jsonl.gz one row per example of the set, in its evaluation order

A row is `{"id": "<example id>", "label": "<gold>", "prediction": "<predicted>", "probabilities": {"<model label>":
p}}`: the run's `eval_predictions/<set>.jsonl` (`hf_srnets.evaluation.eval_predictions`) without its index, the id
falling back to the index where the set has none, probabilities rounded to 4 digits (left out for runs that predate
them). The gzip header carries no file name or time, so the same predictions give the same bytes. `results` holds the
run's reported values of the manifest's metrics: the report checks that each file gives its run's value. `cost` holds
what the run took, as its results give it (`run_cost`: the seconds of training and of each set's evaluation, the
torch threads and precision), so that a report states an experiment's compute from the committed files alone; runs
collected before it was kept have none.

Size: a row is about 130 bytes of JSON and 15.5 after gzip (measured on 3,000 rows with 6-digit ids and random
3-way probabilities; without probabilities 3.2), so 3,000 MNLI + 3,000 HANS pairs are about 93 KB per run and a
30-run experiment about 2.8 MB.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InputError
from ..evaluation.eval_predictions import COMMITTED_SUFFIX, PREDICTIONS_DIR
from ..run_files import RESULTS_NAME, read_json_object, replaced_file
from .sweep_runs import RUN_META, run_dir
from .sweep_summary import collect, is_eval_runtime

PER_EXAMPLE_DIR = "per_example"
MANIFEST = "manifest.json"
RUN_RECORD = "run.json"
SET_SUFFIX = COMMITTED_SUFFIX


COST_KEYS = ("train_runtime", "train_runtime_from_step", "torch_num_threads", "precision", "cpu")


def run_cost(results: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of a run's results that say what it cost (module docstring): `COST_KEYS` and every
    `eval_<set>_runtime`, the ones `sweep_summary.budget_line` sums."""
    return {k: v for k, v in results.items() if k in COST_KEYS or is_eval_runtime(k)}


def compact_rows(path: str) -> list[dict[str, Any]]:
    """The rows of a run's `eval_predictions/<set>.jsonl` in the committed form (module docstring)."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if not isinstance(row, dict) or not {"index", "label", "prediction"} <= set(row):
                raise InputError(f"{path}:{line_no}: not a per-example prediction row; run the evaluation again")
            out = {"id": str(row.get("id", row["index"])), "label": row["label"], "prediction": row["prediction"]}
            rows.append({**out, **({"probabilities": row["probabilities"]} if "probabilities" in row else {})})
    return rows


def write_set(rows: Sequence[dict[str, Any]], path: str) -> None:
    """Rows as gzipped JSON lines, byte for byte the same for the same rows (no name or time in the header)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)
    with replaced_file(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
        f.write(text.encode("utf-8"))


def write_json(value: Any, path: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with replaced_file(path) as f:
        f.write(json.dumps(value, indent=1, sort_keys=True) + "\n")


def collect_per_example(
    sweep_root: str,
    experiment_dir: str,
    metrics: Sequence[str],
    baseline: str | None,
    reference: str | None = None,
    extra_runs: Mapping[str, str] | None = None,
    columns: Sequence[str] = (),
    column_baselines: Sequence[str] = (),
) -> list[str]:
    """Copy every finished run of the sweep under `sweep_root` into `<experiment_dir>/per_example/` (module
    docstring), with a manifest naming the metrics, the baseline and the reference; return the set files written.
    `columns` (`paired_table.parse_column` specs) go to the manifest for the report's per-column sections, one
    per method of `column_baselines` (default: the baseline).
    `extra_runs` (name -> run dir) adds runs made outside the sweep, such as the dense model its methods start
    from, each as a method of that name at sparsity 0 and seed 0 (evaluated once, outside the sweep's seeds); a run
    of another sweep keeps the sparsity and seed its sweep recorded (`sweep_run.json`), so that a search at 50%,
    seed 42, is paired as such.
    A run without `eval_predictions/` is an `InputError`: it ran before the files existed, or without saving."""
    records = collect(sweep_root)
    if not records:
        raise InputError(f"no finished run under {sweep_root}: give the sweep's output_dir")
    for name, directory in (extra_runs or {}).items():
        results = read_json_object(os.path.join(directory, RESULTS_NAME))
        if results is None:
            raise InputError(f"{directory} holds no finished run ({RESULTS_NAME}): give a run dir for {name!r}")
        meta = read_json_object(os.path.join(directory, RUN_META)) or {}
        place = {"sparsity": float(meta.get("sparsity", 0.0)), "seed": int(meta.get("seed", 0))}
        records.append({**results, "method": name, **place, "run_dir": directory})
    root = os.path.join(experiment_dir, PER_EXAMPLE_DIR)
    written = []
    for record in records:
        written += _copy_run(record, root, metrics)
    manifest = {"baseline": baseline, "reference": reference, "metrics": list(metrics)}
    if columns:
        manifest["columns"] = list(columns)
    if column_baselines:
        manifest["column_baselines"] = list(column_baselines)
    write_json(manifest, os.path.join(root, MANIFEST))
    return written


def _copy_run(record: dict[str, Any], root: str, metrics: Sequence[str]) -> list[str]:
    source = os.path.join(record["run_dir"], PREDICTIONS_DIR)
    sets = sorted(n for n in os.listdir(source) if n.endswith(".jsonl")) if os.path.isdir(source) else []
    if not sets:
        raise InputError(f"{record['run_dir']} holds no {PREDICTIONS_DIR}/: run it again (the sweep writes them)")
    folder = run_dir(root, record["method"], float(record["sparsity"]), int(record["seed"]))
    written = []
    for name in sets:
        target = os.path.join(folder, name.removesuffix(".jsonl") + SET_SUFFIX)
        write_set(compact_rows(os.path.join(source, name)), target)
        written.append(target)
    results = {m: record[m] for m in metrics if m in record}
    meta = {k: record[k] for k in ("method", "sparsity", "seed")}
    cost = run_cost(record)
    write_json({**meta, "results": results, **({"cost": cost} if cost else {})}, os.path.join(folder, RUN_RECORD))
    return written


def read_manifest(experiment_dir: str) -> dict[str, Any]:
    path = os.path.join(experiment_dir, PER_EXAMPLE_DIR, MANIFEST)
    if not os.path.isfile(path):
        raise InputError(
            f"{path} not found: collect the sweep's per-example outputs first "
            f"(python -m hf_srnets.commands.report {experiment_dir} --collect_from <sweep output_dir>)"
        )
    with open(path, encoding="utf-8") as f:
        manifest = json.load(f)
    if not isinstance(manifest, dict) or not isinstance(manifest.get("metrics"), list):
        raise InputError(f"{path} is not a per-example manifest (it needs a list of metrics); collect it again")
    return manifest


def load_records(experiment_dir: str) -> list[dict[str, Any]]:
    """One record per committed run, as `sweep_summary.collect` gives for a sweep folder: its reported results and
    cost, its method, sparsity and seed, and `predictions_files` (set -> file) for the paired intervals."""
    root = os.path.join(experiment_dir, PER_EXAMPLE_DIR)
    records = []
    for dirpath, _, filenames in os.walk(root):
        if RUN_RECORD not in filenames:
            continue
        with open(os.path.join(dirpath, RUN_RECORD), encoding="utf-8") as f:
            run = json.load(f)
        files = {n.removesuffix(SET_SUFFIX): os.path.join(dirpath, n) for n in filenames if n.endswith(SET_SUFFIX)}
        meta = {"method": run["method"], "sparsity": float(run["sparsity"]), "seed": int(run["seed"])}
        results = {**run.get("cost", {}), **run.get("results", {})}
        records.append({**results, **meta, "run_dir": dirpath, "predictions_files": files})
    if not records:
        raise InputError(f"no {RUN_RECORD} under {root}: collect the sweep's per-example outputs first")
    refuse_repeated_runs(records)
    return sorted(records, key=lambda r: (r["method"], r["sparsity"], r["seed"]))


def refuse_repeated_runs(records: Sequence[dict[str, Any]]) -> None:
    """One run per method, sparsity and seed: a second one (a run folder copied into another, or the same run
    committed twice) would be counted as another seed in every mean and interval."""
    seen: dict[tuple[str, float, int], str] = {}
    for record in records:
        key = (record["method"], record["sparsity"], record["seed"])
        if key in seen:
            raise InputError(
                f"two runs of {key[0]} at sparsity {key[1]:g}, seed {key[2]}: {seen[key]} and {record['run_dir']}; "
                f"keep one, at {PER_EXAMPLE_DIR}/<method>/s<sparsity>/seed<seed>/"
            )
        seen[key] = record["run_dir"]
