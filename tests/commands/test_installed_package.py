"""The commands work from an installed package, away from the repository: `python -m hf_srnets.commands.<name>`,
and a sweep whose child runs start `python -m hf_srnets.commands.glue_sparse` (issue 31: they used to start the
checkout's `run_glue_sparse.py`, which a pip install does not have)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import mnli_run_args

from hf_srnets.experiments import child_runs

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = sorted(p.stem for p in (ROOT / "hf_srnets" / "commands").glob("*.py") if p.stem != "__init__")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """hf_srnets built and installed (not editable) into a folder of its own, as `pip install` would; built from a
    copy of the package and its project files, so the build leaves nothing in the checkout."""
    source = tmp_path_factory.mktemp("source")
    shutil.copytree(ROOT / "hf_srnets", source / "hf_srnets", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", str(target),
         str(source)],
        check=True, cwd=source,
    )  # fmt: skip
    assert (target / "hf_srnets" / "commands" / "glue_sparse.py").is_file()
    assert not (target / "run_glue_sparse.py").exists()
    return target


def _env(site: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(site), "OMP_NUM_THREADS": "1"}


def test_child_runs_start_the_package_command_not_a_repository_file(monkeypatch):
    calls = []
    monkeypatch.setattr(
        child_runs.subprocess, "run", lambda cmd, **_: calls.append(cmd) or subprocess.CompletedProcess(cmd, 0)
    )
    child_runs.run_glue_sparse(["--output_dir", "x"])
    assert calls == [[sys.executable, "-m", "hf_srnets.commands.glue_sparse", "--output_dir", "x"]]


# runs `python -m hf_srnets.commands.NAME --help` for each NAME given, in one interpreter (the imports they share are
# paid once), and prints {name: [exit code, whether the output holds "usage:"]} as JSON, then hf_srnets' location
HELP_DRIVER = """
import contextlib, io, json, runpy, sys
import hf_srnets
answers = {}
for name in sys.argv[1:]:
    out = io.StringIO()
    sys.argv = [name, "--help"]
    code = 0
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_module(f"hf_srnets.commands.{name}", run_name="__main__", alter_sys=True)
    except SystemExit as exit:
        code = exit.code or 0
    answers[name] = [code, "usage:" in out.getvalue()]
print(json.dumps(answers))
print(hf_srnets.__file__)
"""


@pytest.mark.slow
def test_every_command_answers_help_from_the_installed_package(installed, tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", HELP_DRIVER, *COMMANDS],
        cwd=tmp_path, env=_env(installed), capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    answers, where = result.stdout.strip().splitlines()[-2:]
    assert json.loads(answers) == {name: [0, True] for name in COMMANDS}, result.stderr[-3000:]
    assert where == str(installed / "hf_srnets" / "__init__.py")


@pytest.mark.slow
def test_a_sweep_runs_its_child_runs_from_the_installed_package(installed, pretrained, data_dir, tmp_path):
    run = mnli_run_args(pretrained, data_dir, "unused", "--do_train", train=32, eval=16, ood=16, batch=16)
    at = run.index("--output_dir")
    del run[at : at + 2]
    out = tmp_path / "sweep"
    result = subprocess.run(
        [sys.executable, "-m", "hf_srnets.commands.sweep", "--seeds", "1", "--output_dir", str(out),
         "--method_name", "full_ce", "--", *run, "--num_train_epochs", "1"],
        cwd=tmp_path, env=_env(installed), capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    (results,) = out.rglob("all_results.json")
    metrics = json.loads(results.read_text())
    assert metrics["train_examples"] == 32 and 0.0 <= metrics["eval_mnli_accuracy"] <= 1.0
    assert "eval_mnli_accuracy" in (out / "summary.md").read_text()
