"""The supported versions are declared once: pyproject.toml's `dependencies`, repeated line for line in
requirements.txt (then the optional extras the tests need, then the `dev` extra), each core package with a floor and
a cap, and `.ci/lowest` installs exactly those floors."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
CORE = ("torch", "transformers", "accelerate", "datasets")
DEV = ("pytest", "pytest-timeout", "pytest-xdist", "ruff")
TESTED_EXTRAS = ("onnx", "compressed-tensors")  # extras whose code the tests run: requirements.txt installs them


def _pyproject_dependencies() -> list[str]:
    text = (ROOT / "pyproject.toml").read_text()
    block = text[text.index("dependencies = [") :]
    return re.findall(r'^\s*"([^"]+)",', block[: block.index("\n]")], re.M)


def _requirements_lines() -> list[str]:
    lines = [line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def _floor(requirement: Requirement) -> str | None:
    return next((s.version for s in requirement.specifier if s.operator == ">="), None)


def _extra(name: str) -> list[str]:
    """The requirements of pyproject.toml's optional extra `name` (a one-line list)."""
    text = (ROOT / "pyproject.toml").read_text()
    found = re.search(rf"^{re.escape(name)} = \[(.*)\]$", text, re.M)
    return [s.strip().strip('"') for s in found[1].split(",")]


def _tested_extras() -> list[str]:
    return [line for name in TESTED_EXTRAS for line in _extra(name)]


def test_requirements_txt_repeats_pyproject_line_for_line():
    extras = {Requirement(line).name for line in _tested_extras()}
    package_lines = [line for line in _requirements_lines() if Requirement(line).name not in {*DEV, *extras}]
    assert package_lines == _pyproject_dependencies()


def test_requirements_txt_repeats_the_extras_the_tests_run():
    extras = {Requirement(line).name for line in _tested_extras()}
    assert [line for line in _requirements_lines() if Requirement(line).name in extras] == _tested_extras()


def test_requirements_txt_ends_with_the_dev_extra():
    assert [line for line in _requirements_lines() if Requirement(line).name in DEV] == _extra("dev")


@pytest.mark.parametrize("name", CORE)
def test_each_core_package_has_a_floor_and_a_cap(name):
    (spec,) = [Requirement(s) for s in _pyproject_dependencies() if Requirement(s).name == name]
    operators = {s.operator for s in spec.specifier}
    assert operators == {">=", "<"}, f"{spec}: a floor (>=) and a cap (<)"


def test_this_environment_is_within_the_declared_versions():
    for spec in map(Requirement, _pyproject_dependencies() + _tested_extras()):
        installed = Version(importlib.metadata.version(spec.name))
        # a local build tag (2.13.0+cpu) is the same release
        assert spec.specifier.contains(Version(installed.base_version), prereleases=True), f"{spec}: {installed}"


def test_ci_lowest_installs_exactly_the_declared_floors():
    script = (ROOT / ".ci" / "lowest").read_text()
    snippet = script[script.index("<<'PY'\n") + len("<<'PY'\n") : script.index("\nPY\n")]
    pins = subprocess.run([sys.executable, "-c", snippet], cwd=ROOT, capture_output=True, text=True, check=True)
    found = dict(line.split("==") for line in pins.stdout.split())
    declared = {r.name: _floor(r) for r in map(Requirement, _pyproject_dependencies())}
    for name in CORE:
        assert found[name] == declared[name], name
    assert all(found[name] == declared[name] for name in found)
