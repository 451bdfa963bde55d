"""Write fitted p_b as `bias_<split>.jsonl` files (`hf_srnets.data.read_predictions` format, each row with the
`text_digest` of the example it was made on) and `bias_report.json`."""

from __future__ import annotations

import os
from collections.abc import Mapping

from datasets import Dataset

from ..data.columns import write_predictions
from ..data.text_digests import digests_by_id
from ..run_files import BIAS_REPORT_NAME, bias_predictions_name, write_json


def save_bias_predictions(
    output_dir: str,
    predictions: dict[str, dict[str, list[float]]],
    report: dict,
    *,
    files_dir: str | None = None,
    datasets: Mapping[str, Dataset] | None = None,
) -> dict[str, str]:
    """Write `<output_dir>/bias_<split>.jsonl` per split and `bias_report.json`; return split -> file path.

    Each file is written to a temporary name and renamed into place, the report last, so a reader never sees a
    half-written file. The report's `files` name the files under `files_dir` (default `output_dir`): the folder
    they will be read from when `output_dir` is itself renamed into place (`cache.save_cached`). `datasets` (split ->
    the rows it predicted, as `compute_bias_predictions` got them) gives each row its `text_digest`, so a run joining
    the file onto other data refuses it; the package's writers always pass them.
    """
    os.makedirs(output_dir, exist_ok=True)
    paths: dict[str, str] = {}
    for split, preds in predictions.items():
        path = os.path.join(output_dir, bias_predictions_name(split))
        by_id = digests_by_id(datasets[split]) if datasets is not None else None
        digests = [by_id[i] for i in preds] if by_id is not None else None
        write_predictions(path, list(preds.keys()), list(preds.values()), digests)  # replaces `path` by rename
        paths[split] = path
    recorded = {split: os.path.join(files_dir or output_dir, os.path.basename(p)) for split, p in paths.items()}
    write_json(os.path.join(output_dir, BIAS_REPORT_NAME), {**report, "files": recorded}, indent=2)
    return paths
