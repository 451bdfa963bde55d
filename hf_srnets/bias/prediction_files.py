"""Write fitted p_b as `bias_<split>.jsonl` files (`hf_srnets.data.read_predictions` format) and `bias_report.json`."""

from __future__ import annotations

import os

from ..data.columns import write_predictions
from ..run_files import BIAS_REPORT_NAME, bias_predictions_name, write_json


def save_bias_predictions(
    output_dir: str,
    predictions: dict[str, dict[str, list[float]]],
    report: dict,
    *,
    files_dir: str | None = None,
) -> dict[str, str]:
    """Write `<output_dir>/bias_<split>.jsonl` per split and `bias_report.json`; return split -> file path.

    Each file is written to a temporary name and renamed into place, the report last, so a reader never sees a
    half-written file. The report's `files` name the files under `files_dir` (default `output_dir`): the folder
    they will be read from when `output_dir` is itself renamed into place (`cache.save_cached`).
    """
    os.makedirs(output_dir, exist_ok=True)
    paths: dict[str, str] = {}
    for split, preds in predictions.items():
        path = os.path.join(output_dir, bias_predictions_name(split))
        tmp = f"{path}.{os.getpid()}.tmp"
        write_predictions(tmp, list(preds.keys()), list(preds.values()))
        os.replace(tmp, path)
        paths[split] = path
    recorded = {split: os.path.join(files_dir or output_dir, os.path.basename(p)) for split, p in paths.items()}
    write_json(os.path.join(output_dir, BIAS_REPORT_NAME), {**report, "files": recorded}, indent=2)
    return paths
