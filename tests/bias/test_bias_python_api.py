"""The Python API of docs/python-api.md fits (or loads) the bias model and joins p_b by id without the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEADING = "### Bias-model predictions without the command line"


def docs_block() -> str:
    """The first python code block under `HEADING` in docs/python-api.md."""
    text = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    section = text[text.index(HEADING) :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_block_is_found_and_imports_nothing_of_the_command_line():
    block = docs_block()
    assert "fit_or_load_bias_predictions(" in block and "add_probability_column(" in block
    assert "hf_srnets.arguments" not in block and "hf_srnets.runner" not in block and "hf_srnets.commands" not in block


@pytest.mark.slow
def test_the_docs_example_fits_then_loads_the_bias_model_and_joins_p_b_by_id(data_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    block = docs_block().replace('DATA_DIR = "../shared/data"', f"DATA_DIR = {str(data_dir)!r}")
    first: dict = {}
    exec(compile(block, "docs/python-api.md", "exec"), first)
    assert first["fitted"] is True and len(first["train"]) == 300
    second: dict = {}
    exec(compile(block, "docs/python-api.md", "exec"), second)
    assert second["fitted"] is False and second["files"] == first["files"]  # the cache entry of the same fit

    # the column holds each row's own line of the predictions file, found by its id (read here with json)
    by_id = {}
    with open(first["files"]["train"], encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            by_id[str(row["id"])] = row
    train = second["train"]
    for i in (0, 7, 299):
        row_id = str(train[i]["id"])
        probs = train[i]["bias_probs"]
        assert len(probs) == 3 and sum(probs) == pytest.approx(1.0, abs=1e-5)
        assert probs == pytest.approx(by_id[row_id]["probs"], abs=1e-6)
