"""Every command has the one shape ARCHITECTURE.md gives (issue 51): its arguments are dataclasses in
`hf_srnets/arguments/<module>.py`, parsed by `arguments.parser.parse_command` (or, for run_glue_sparse.py,
`arguments.glue_sparse_arguments`), and
`hf_srnets/commands/<name>.py` is a thin `main()` over a library function. A new command is three files, pinned
here by one written from this test file: its arguments module, its library function and its command module."""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

import pytest
from prewarmed import run_python

import hf_srnets.arguments
import hf_srnets.commands

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "hf_srnets"
MAX_COMMAND_CODE_LINES = 45  # the module's statements, its docstring aside
PARSERS = {"argparse", "transformers.HfArgumentParser", "transformers.hf_argparser"}


def command_problems(command: Path, package: Path = PACKAGE) -> list[str]:
    """What keeps `command` (a `commands/<name>.py`) from the shape: an argument parser or a dataclass of its own,
    no `main`, no `parse_args` from a `arguments/` module, or more than `MAX_COMMAND_CODE_LINES` lines of code."""
    tree = ast.parse(command.read_text(encoding="utf-8"))
    problems = []
    body = [n for n in tree.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    code_lines = sum(n.end_lineno - n.lineno + 1 for n in body)
    if code_lines > MAX_COMMAND_CODE_LINES:
        problems.append(f"{code_lines} lines of code (at most {MAX_COMMAND_CODE_LINES}): move the work to a library")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name in PARSERS for a in node.names):
            problems.append("imports argparse: its arguments go to a dataclass in arguments/")
        if isinstance(node, ast.ImportFrom) and (
            node.module in PARSERS or any(f"{node.module}.{a.name}" in PARSERS for a in node.names)
        ):
            problems.append(f"imports a parser from {node.module}: its arguments go to a dataclass in arguments/")
        if isinstance(node, ast.ClassDef):
            problems.append(f"defines class {node.name}: arguments go to arguments/, the work to a library module")
    if not any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body):
        problems.append("has no main()")
    parsers = [
        n.module
        for n in tree.body
        if isinstance(n, ast.ImportFrom) and n.level == 2 and (n.module or "").startswith("arguments.")
        and any(a.name == "parse_args" for a in n.names)
    ]  # fmt: skip
    if len(parsers) != 1 or not (package / (parsers[0].replace(".", "/") + ".py")).is_file():
        problems.append("takes no parse_args from a module of arguments/")
    return problems


COMMANDS = sorted(p for p in (PACKAGE / "commands").glob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("command", COMMANDS, ids=lambda p: p.stem)
def test_every_command_is_a_thin_main_over_its_arguments_module(command):
    assert command_problems(command) == []


def test_the_shape_check_finds_a_command_that_parses_for_itself(tmp_path):
    (tmp_path / "arguments").mkdir()
    (tmp_path / "arguments" / "fine_arguments.py").write_text("def parse_args(argv): ...\n")
    fat = tmp_path / "fat.py"
    fat.write_text(
        '"""doc"""\nimport argparse\nfrom dataclasses import dataclass\n\n\n@dataclass\nclass Args:\n    x: int = 1\n'
        + "\n".join(f"y{i} = {i}" for i in range(50))
        + "\n"
    )
    problems = command_problems(fat, tmp_path)
    assert len(problems) == 5, problems  # too long, argparse, a class, no main, no arguments/ parse_args
    thin = tmp_path / "thin.py"
    thin.write_text('"""doc"""\nfrom ..arguments.fine_arguments import parse_args\n\n\ndef main(argv=None):\n    ...\n')
    assert command_problems(thin, tmp_path) == []


# A new command as a user of the package would add it: its arguments (arguments/), its work (a library function, here
# in the same file for brevity of the fixture; in the package it goes to jobs/ or experiments/) and its command.
NEW_ARGUMENTS = """
from dataclasses import dataclass, field

from hf_srnets.arguments.parser import parse_command
from hf_srnets.errors import InputError


@dataclass
class GreetArguments:
    name: str = field(metadata={"help": "Who to greet (also the first argument)."})
    times: int = field(default=1, metadata={"help": "How many times."})

    def __post_init__(self):
        if self.times < 1:
            raise InputError(f"--times must be >= 1, got {self.times}")


def parse_args(argv=None, description=None):
    (args,) = parse_command([GreetArguments], argv, first="name", description=description)
    return args


def greet(args):
    return " ".join([f"hello {args.name}"] * args.times)
"""
NEW_COMMAND = '''
"""Greet someone: the test's new command."""

from ..arguments.greet_arguments import greet, parse_args
from ..errors import run_script


def main(argv=None):
    text = greet(parse_args(argv, description=__doc__))
    print(text)
    return text


if __name__ == "__main__":
    raise SystemExit(run_script(main))
'''


@pytest.fixture
def new_command(tmp_path, monkeypatch) -> Path:
    """`hf_srnets.arguments.greet_arguments` and `hf_srnets.commands.greet`, written into folders of their own that the
    packages also search (their `__path__`), so nothing is written into the checkout."""
    for sub, name, text in (("arguments", "greet_arguments", NEW_ARGUMENTS), ("commands", "greet", NEW_COMMAND)):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / f"{name}.py").write_text(textwrap.dedent(text).lstrip())
    monkeypatch.setattr(hf_srnets.arguments, "__path__", [*hf_srnets.arguments.__path__, str(tmp_path / "arguments")])
    monkeypatch.setattr(hf_srnets.commands, "__path__", [*hf_srnets.commands.__path__, str(tmp_path / "commands")])
    yield tmp_path
    for module in ("hf_srnets.arguments.greet_arguments", "hf_srnets.commands.greet"):
        sys.modules.pop(module, None)


def test_a_new_command_is_its_arguments_its_library_function_and_its_main(new_command, capsys):
    from hf_srnets.commands import greet

    assert greet.main(["ada", "--times", "2"]) == "hello ada hello ada"
    assert greet.main(["--name", "bob"]) == "hello bob"
    with pytest.raises(ValueError, match="--times must be >= 1"):
        greet.main(["ada", "--times", "0"])
    with pytest.raises(ValueError, match="unrecognized arguments: --loud"):
        greet.main(["ada", "--loud"])
    overlay = new_command / "package"
    for sub in ("arguments", "commands"):
        (overlay / sub).mkdir(parents=True)
        for file in (new_command / sub).iterdir():
            (overlay / sub / file.name).write_text(file.read_text())
    assert command_problems(overlay / "commands" / "greet.py", overlay) == []


def test_a_new_command_answers_help_with_its_docstring_and_options(new_command, tmp_path):
    paths = "import hf_srnets.arguments, hf_srnets.commands; "
    paths += f"hf_srnets.arguments.__path__.append({str(new_command / 'arguments')!r}); "
    paths += f"hf_srnets.commands.__path__.append({str(new_command / 'commands')!r}); "
    code = paths + "from hf_srnets.commands.greet import main; main(['--help'])"
    (tmp_path / "greet_help.py").write_text(code)
    done = run_python(tmp_path / "greet_help.py", cwd=ROOT)  # a process: the new modules are imported afresh
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Greet someone: the test's new command." in done.stdout
    assert "--times TIMES" in done.stdout and "NAME" in done.stdout
