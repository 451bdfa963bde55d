"""The private names of transformers hf_srnets relies on (`hf_srnets.training.trainer_internals`) exist in the
installed transformers with the parameters listed, and `SRNetTrainer` uses no private name that the list lacks.

A transformers upgrade that renames `Trainer._save` (or changes its parameters) fails here, instead of leaving
`SRNetTrainer._save` an override that is never called.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import textwrap
from pathlib import Path

import pytest
import transformers
from transformers import Trainer

from hf_srnets.training import trainer_internals as internals

PACKAGE = Path(__file__).resolve().parents[2] / "hf_srnets"
TRAINER_SOURCE = PACKAGE / "training" / "trainer.py"
LISTED = {
    *internals.OVERRIDDEN_METHODS,
    *internals.CALLED_METHODS,
    *internals.TRAINER_ATTRIBUTES,
    *internals.OWN_METHODS,
    *internals.OWN_ATTRIBUTES,
}


def parameter_names(function: object) -> tuple[str, ...]:
    """The named parameters of `function` after `self` (no *args / **kwargs)."""
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    names = [p.name for p in inspect.signature(function).parameters.values() if p.kind in kinds]
    return tuple(names[1:] if names[:1] == ["self"] else names)


def private_methods(source: str, class_name: str = "SRNetTrainer") -> set[str]:
    """The `def _x` (not dunder) of class `class_name` in `source`."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return {
                f.name
                for f in node.body
                if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
                and f.name.startswith("_")
                and not f.name.startswith("__")
            }
    raise AssertionError(f"no class {class_name}")


def private_uses(source: str, owners: tuple[str, ...] = ("self", "super()", "trainer")) -> set[str]:
    """Private names taken from `owners` in `source`: `self._x`, `super()._x(...)`, `trainer._x` and
    `getattr(self, "_x", ...)`."""

    def is_owner(node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id in owners
        is_super = isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
        return is_super and "super()" in owners

    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and is_owner(node.value):
            found.add(node.attr)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
            if len(node.args) > 1 and is_owner(node.args[0]) and isinstance(node.args[1], ast.Constant):
                found.add(str(node.args[1].value))
    return {name for name in found if name.startswith("_") and not name.startswith("__")}


# ---- against the installed transformers ----


@pytest.mark.parametrize(
    "name, parameters",
    [*internals.OVERRIDDEN_METHODS.items(), *internals.CALLED_METHODS.items(), *internals.POSITIONAL_METHODS.items()],
)
def test_each_trainer_method_exists_with_these_parameters(name, parameters):
    assert hasattr(Trainer, name), f"transformers {transformers.__version__}: Trainer.{name} is gone"
    assert parameter_names(getattr(Trainer, name)) == parameters, f"Trainer.{name} changed its parameters"


@pytest.mark.parametrize("name", sorted(internals.TRAINER_ATTRIBUTES))
def test_each_trainer_attribute_is_set_by_the_trainer(name):
    source = inspect.getsource(importlib.import_module(Trainer.__module__))
    assert re.search(rf"self\.{name}\s*(:[^=\n]*)?=[^=]", source), f"Trainer no longer sets self.{name}"


@pytest.mark.parametrize("name", [*internals.OWN_METHODS, *internals.OWN_ATTRIBUTES])
def test_srnet_trainers_own_names_override_nothing(name):
    source = inspect.getsource(importlib.import_module(Trainer.__module__))
    assert not hasattr(Trainer, name) and f"self.{name}" not in source


def test_the_other_private_names_exist():
    cached_files = transformers.utils.hub.cached_files
    assert "_raise_exceptions_for_missing_entries" in inspect.signature(cached_files).parameters
    assert isinstance(transformers.PretrainedConfig()._name_or_path, str)
    assert set(internals.OTHER_INTERNALS) == {
        ("transformers.utils.hub.cached_files", "_raise_exceptions_for_missing_entries"),
        ("transformers.PretrainedConfig", "_name_or_path"),
    }


# ---- every private name SRNetTrainer (and any `trainer` elsewhere) uses is listed ----


def test_every_private_method_of_srnet_trainer_is_listed():
    defined = private_methods(TRAINER_SOURCE.read_text(encoding="utf-8"))
    assert defined == set(internals.OVERRIDDEN_METHODS) | set(internals.OWN_METHODS)


def test_every_private_name_srnet_trainer_and_other_modules_use_is_listed():
    for path in sorted(PACKAGE.rglob("*.py")):
        # in trainer.py `self` is the Trainer; elsewhere only `trainer._x` is (a step objective's `trainer`)
        owners = ("self", "super()", "trainer") if path == TRAINER_SOURCE else ("trainer",)
        unlisted = private_uses(path.read_text(encoding="utf-8"), owners) - LISTED
        assert unlisted == set(), f"{path.name}: private names not in trainer_internals: {sorted(unlisted)}"


def test_the_scans_find_an_unlisted_override_and_an_unlisted_private_read():
    source = textwrap.dedent(
        """
        class SRNetTrainer(Trainer):
            def __init__(self):
                self._own = 1
            def _save(self, output_dir=None, state_dict=None):
                return super()._save(output_dir, state_dict)
            def _new_hook(self):
                return getattr(self, "_hidden_state", None), trainer._step_inputs(1)
        """
    )
    assert private_methods(source) == {"_save", "_new_hook"}
    assert private_methods(source) - set(internals.OVERRIDDEN_METHODS) - set(internals.OWN_METHODS) == {"_new_hook"}
    assert private_uses(source) - LISTED == {"_own", "_hidden_state", "_step_inputs"}
    assert parameter_names(lambda self, a, *args, b=1, **kw: None) == ("a", "b")
