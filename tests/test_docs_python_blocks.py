"""The Python examples of the docs run as they are: `docs/python-api.md`'s "Adding a method" block registers its
method, the command line takes its option as a flag, and the masks it draws have the sparsity asked for."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import tiny_model

from hf_srnets.arguments import parse_args, validate_args
from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import PRUNING_METHODS, unregister_pruning_method

ROOT = Path(__file__).resolve().parents[1]
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks(page: Path) -> list[str]:
    """The text of every fenced python block of `page`."""
    return PYTHON_BLOCK.findall(page.read_text(encoding="utf-8"))


def test_python_blocks_finds_each_fenced_block(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("a\n```python\nx = 1\n```\n```bash\nls\n```\n```python\ny = 2\nz = 3\n```\n", encoding="utf-8")
    assert python_blocks(page) == ["x = 1\n", "y = 2\nz = 3\n"]


@pytest.fixture
def method_block():
    """The block of python-api.md that registers a pruning method, run; its method unregistered afterwards."""
    (block,) = [b for b in python_blocks(ROOT / "docs" / "python-api.md") if "@register_pruning_method" in b]
    before = set(PRUNING_METHODS)
    namespace = {"__name__": "python_api_example"}
    exec(compile(block, "docs/python-api.md", "exec", dont_inherit=True), namespace)  # as a copy would run
    added = set(PRUNING_METHODS) - before
    yield namespace, added
    for name in added:
        unregister_pruning_method(name)
    assert set(PRUNING_METHODS) == before


def test_the_adding_a_method_example_runs_as_written(method_block):
    namespace, added = method_block
    assert added == {"toy_random"} and PRUNING_METHODS["toy_random"] is namespace["ToyRandomPruning"]
    run = parse_args(["--model_name_or_path", "m", "--output_dir", "o", "--pruning", "toy_random"]
                     + ["--sparsity", "0.3", "--toy_mask_seed", "7"])  # fmt: skip
    validate_args(run)
    assert isinstance(run.pruning, namespace["ToyRandomConfig"]) and run.pruning.toy_mask_seed == 7

    srnet = SRNetModel(tiny_model("bert"), run.pruning)
    zeros = {name: int((~mask).sum()) for name, mask in srnet.binary_masks().items()}
    # the tiny BERT: W_Q, W_K, W_V, W_AO 32×32 (⌊0.3·1024⌋ = 307 zeros), W_in, W_out 2048 weights (⌊0.3·2048⌋ = 614)
    # in each of 2 layers, and the 3×32 classifier (⌊0.3·96⌋ = 28)
    assert sorted(zeros.values()) == [28] + [307] * 8 + [614] * 4


def test_the_objectives_page_column_block_registers_a_column_and_a_loss_the_command_line_takes(tmp_path):
    """docs/objectives.md's block with `register_example_column` runs as it is: `--loss weighted-ce` takes
    `--example_weights FILE`, refuses to run without it, and the reader returns the file's weights by id."""
    from hf_srnets.data import EXAMPLE_COLUMNS
    from hf_srnets.errors import InputError
    from hf_srnets.losses import LOSSES

    (block,) = [b for b in python_blocks(ROOT / "docs" / "objectives.md") if "register_example_column(" in b]
    columns, losses = dict(EXAMPLE_COLUMNS), dict(LOSSES)
    try:
        exec(compile(block, "docs/objectives.md", "exec", dont_inherit=True), {"__name__": "objectives_example"})
        base = ["--model_name_or_path", "m", "--output_dir", "o", "--loss", "weighted-ce"]
        run = parse_args([*base, "--example_weights", "w.jsonl"])
        validate_args(run)
        assert run.data.column_files == {"example_weight": "w.jsonl"}
        with pytest.raises(InputError, match="--loss weighted-ce needs --example_weights FILE: write one with"):
            validate_args(parse_args(base))
        path = tmp_path / "w.jsonl"
        path.write_text('{"id": "a", "weight": 2}\n\n{"id": 7, "weight": 0.5}\n', encoding="utf-8")
        assert EXAMPLE_COLUMNS["example_weight"].read(str(path), 3) == {"a": 2.0, "7": 0.5}
    finally:
        EXAMPLE_COLUMNS.clear()
        EXAMPLE_COLUMNS.update(columns)
        LOSSES.clear()
        LOSSES.update(losses)
