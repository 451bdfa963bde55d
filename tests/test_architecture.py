"""Architecture rules of the package (ARCHITECTURE.md): no import cycles among `hf_srnets` modules, layers that only
import downwards, no pruning method named outside its own folder, at most 5 modules beside the packages, scripts of
at most 40 lines that call `hf_srnets.commands.<script>.main`, no circle of packages, no function over 80 lines.

Import graph: module A needs module B when A imports B anywhere in its source: at module level, inside a function
or under `if TYPE_CHECKING:` (a deferred or type-only import hides a cycle, it does not remove it). Relative
imports are resolved against A's package. `from P import X` needs the module `P.X` when there is one, else `P`
itself: taking a name from a package runs `P/__init__.py`, and with it every submodule that `__init__` imports.
The implicit import of a parent package when a submodule is imported is not an edge, so a package `__init__` that
imports (re-exports) its submodules is not, by itself, in a cycle with them; a submodule that takes a name from its
own package while the package imports that submodule is (A needs B and B needs A, and which one finishes loading
first depends on import order). A cycle is a path A -> ... -> A, reported once per strongly connected set.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "hf_srnets"
MAX_FUNCTION_LINES = 80
MAX_SCRIPT_LINES = 40
MAX_LOOSE_MODULES = 5

# The layers, lowest first: a module imports only modules of its own layer or below. Each package sits on one
# floor: the run configuration and its parsing (arguments/) under one run's phases (runner/), under the single jobs
# of the other commands (jobs/: attack, bias model, export, ticket extraction) and the experiments made of runs
# (experiments/), under the scripts' commands (commands/).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "registry", "run_files", "version", "resources"),
    ("metrics", "data"),
    ("pruning", "masking", "losses", "objectives", "compact", "bias", "export"),
    ("evaluation", "attack", "difficulty"),
    ("training",),
    ("publish",),
    ("arguments",),
    ("runner",),
    ("jobs", "experiments"),
    ("commands",),
)


def module_files(root: Path, package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every `.py` file of `package` under `root` (`__init__.py` names the package)."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[str, str | None]]:
    """(absolute module imported, name taken from it or None) for every import statement in `tree`."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")
                parent = parent[: len(parent) - (node.level - 1)]
                base = ".".join([*parent, base] if base else parent)
            for alias in node.names:
                yield base, alias.name


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the modules of `package` it depends on (module doc)."""
    files = module_files(root, package)
    trees = {name: ast.parse(path.read_text(encoding="utf-8"), str(path)) for name, path in files.items()}
    packages = {name for name, path in files.items() if path.name == "__init__.py"}

    def needed(base: str, name: str | None) -> str | None:
        """The module `from base import name` (or `import base`) needs, or None outside the package."""
        if name is not None and f"{base}.{name}" in files:
            return f"{base}.{name}"
        while base and base not in files:  # `import a.b.c` of a non-module: the longest module prefix
            base = base.rpartition(".")[0]
        return base or None

    graph: dict[str, set[str]] = {}
    for name, tree in trees.items():
        targets = {needed(base, imported) for base, imported in _imports(tree, name, name in packages)}
        graph[name] = {t for t in targets if t is not None and t != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One shortest cycle (a path A -> ... -> A) per strongly connected set of more than one module."""
    cycles = []
    for component in _strongly_connected(graph):
        if len(component) < 2:
            continue
        start = min(component)
        paths = {start: [start]}
        frontier = [start]
        cycle = None
        while cycle is None:  # breadth first within the component: a cycle back to `start` exists
            nxt = []
            for node in frontier:
                for target in sorted(graph[node] & component):
                    if target == start:
                        cycle = [*paths[node], start]
                        break
                    if target not in paths:
                        paths[target] = [*paths[node], target]
                        nxt.append(target)
                if cycle:
                    break
            frontier = nxt
        cycles.append(cycle)
    return sorted(cycles)


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next((c for c in children if c in graph), None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                components.append(component)
    return components


def long_functions(files: list[Path], root: Path, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """`file:line name (N lines)` for each function or method longer than `limit` lines (def line to last line)."""
    out = []
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > limit:
                    out.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({length} lines)")
    return sorted(out)


def layer_of(module: str) -> str | None:
    """The layer (`LAYERS`) of a module of the package: its top-level package or module; None for the package's
    `__init__`, which may import all."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph drawn per floor member: top-level package (or loose module) -> those it imports."""
    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        here = layer_of(module)
        if here is None:
            continue
        out.setdefault(here, set()).update(t for t in map(layer_of, targets) if t is not None and t != here)
    return out


def package_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Circles of packages that import each other (through any of their modules), one per strongly connected set."""
    return import_cycles(package_graph(graph))


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """`A -> B` for each import of a module B of a higher layer than A's (or of the package root)."""
    rank = {name: i for i, names in enumerate(LAYERS) for name in names}
    found = []
    for module, targets in sorted(graph.items()):
        here = layer_of(module)
        if here is None:
            continue
        for target in sorted(targets):
            there = layer_of(target)
            if there is None or rank[there] > rank[here]:
                found.append(f"{module} -> {target}")
    return found


def method_name_literals(root: Path, package: str, names: set[str]) -> list[str]:
    """`file:line 'name'` for each string literal equal to a pruning method's `--pruning` name (its registry name
    or an alias) outside `pruning/` and `arguments/`, docstrings left out. A method's own folder names it; the CLI's
    help and the card take the names from the registry."""
    out = []
    for path in module_files(root, package).values():
        rel = path.relative_to(root).as_posix()
        if rel.startswith((f"{package}/pruning/", f"{package}/arguments/")):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree) if _has_docstring(node)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in names and id(node) not in docstrings:
                out.append(f"{rel}:{node.lineno} {node.value!r}")
    return sorted(out)


def _has_docstring(node: ast.AST) -> bool:
    body = getattr(node, "body", None)
    return (
        isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and bool(body)
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
    )


def loose_modules(root: Path, package: str) -> list[str]:
    """The modules directly under the package folder (its `__init__.py` included)."""
    return sorted(path.name for path in (root / package).glob("*.py"))


def script_problems(root: Path) -> list[str]:
    """Each top-level `run_<name>.py` longer than `MAX_SCRIPT_LINES` or not calling
    `hf_srnets.commands.<module>.main`."""
    problems = []
    for path in sorted(root.glob("run_*.py")):
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_SCRIPT_LINES:
            problems.append(f"{path.name}: {lines} lines")
        if not re.search(r"^from hf_srnets\.commands\.\w+ import .*\bmain\b", text, re.MULTILINE):
            problems.append(f"{path.name}: does not take `main` from hf_srnets.commands")
    return problems


def checked_files(root: Path) -> list[Path]:
    """The package's modules and the top-level scripts (`run_*.py`)."""
    return [*module_files(root, PACKAGE).values(), *sorted(root.glob("run_*.py"))]


# ---- the rules, on the real tree ----


def test_no_import_cycles_in_the_package():
    graph = import_graph(ROOT, PACKAGE)
    cycles = import_cycles(graph)
    tangled = [sorted(c) for c in _strongly_connected(graph) if len(c) > 1]
    assert not cycles, (
        "import cycles (one per set of modules that need each other):\n"
        + "\n".join(" -> ".join(c) for c in cycles)
        + "\nsets: "
        + "; ".join(", ".join(t) for t in tangled)
    )


def test_no_circle_of_packages():
    """A package that imports another which imports it back sits on two floors (as `cli/`, now `arguments/`, once
    did)."""
    circles = package_cycles(import_graph(ROOT, PACKAGE))
    assert not circles, "packages that import each other:\n" + "\n".join(" -> ".join(c) for c in circles)


def test_every_package_has_a_floor():
    packages = {path.parent.name for path in (ROOT / PACKAGE).glob("*/__init__.py")}
    loose = {path.stem for path in (ROOT / PACKAGE).glob("*.py")} - {"__init__"}
    floors = {name for names in LAYERS for name in names}
    assert packages | loose == floors, f"not in LAYERS: {sorted((packages | loose) - floors)}"


def test_layers_only_import_downwards():
    found = upward_imports(import_graph(ROOT, PACKAGE))
    assert not found, "imports of a higher layer (ARCHITECTURE.md, LAYERS):\n" + "\n".join(found)


def test_no_pruning_method_is_named_outside_its_folder():
    from hf_srnets.pruning import PRUNING_ALIASES, PRUNING_METHODS

    names = set(PRUNING_METHODS) | set(PRUNING_ALIASES)
    assert {"threshold", "magnitude", "l0", "random", "mask", "imp", "imp-rw"} <= names
    found = method_name_literals(ROOT, PACKAGE, names)
    assert not found, "method names outside hf_srnets/pruning/<method>/ and hf_srnets/arguments/:\n" + "\n".join(found)


# The methods added after the first four, each with what names it in source (case-insensitive) and the files outside
# its folder that may: the registration import (pruning/__init__.py) and, when it cites a paper, its BibTeX.
NEW_METHODS = {
    "pruning/wanda": (r"wanda", {"pruning/__init__.py", "resources/citations.py"}),
    "pruning/oneshot_magnitude": (r"oneshot_magnitude|OneShotMagnitude|magnitude-oneshot", {"pruning/__init__.py"}),
}


def files_naming(pattern: str, root: Path = ROOT) -> set[str]:
    """The package's files (relative to `hf_srnets/`) whose source matches `pattern` (case-insensitive)."""
    package = root / PACKAGE
    found = re.compile(pattern, re.IGNORECASE)
    return {str(p.relative_to(package)) for p in package.rglob("*.py") if found.search(p.read_text(encoding="utf-8"))}


@pytest.mark.parametrize("folder", sorted(NEW_METHODS))
def test_a_new_method_touches_only_its_folder_and_the_registration(folder):
    """A pruning method is its folder: outside it only the registration import (and a BibTeX entry) names it, so
    `--pruning <name>`, its options, saving, loading, merging and the card come from the registry alone."""
    pattern, allowed = NEW_METHODS[folder]
    outside = {name for name in files_naming(pattern) if not name.startswith(folder + "/")}
    assert outside == allowed, f"{folder} is named outside its folder in {sorted(outside - allowed)}"


def test_files_naming_finds_a_method_named_in_another_module(tmp_path):
    (tmp_path / PACKAGE / "pruning" / "shiny").mkdir(parents=True)
    (tmp_path / PACKAGE / "pruning" / "shiny" / "method.py").write_text('name = "shiny"\n')
    (tmp_path / PACKAGE / "runner.py").write_text("if method == 'Shiny': pass\n")
    assert files_naming("shiny", tmp_path) == {"pruning/shiny/method.py", "runner.py"}


def test_at_most_five_modules_beside_the_packages():
    loose = loose_modules(ROOT, PACKAGE)
    assert len(loose) <= MAX_LOOSE_MODULES, loose


def test_scripts_are_thin():
    assert sorted(p.name for p in ROOT.glob("run_*.py")) == [
        "run_attack.py", "run_bias_model.py", "run_export.py", "run_extract_ticket.py", "run_glue_sparse.py",
        "run_sample_difficulty.py", "run_sweep.py",
    ]  # fmt: skip
    assert script_problems(ROOT) == []


def test_no_function_over_80_lines():
    found = long_functions(checked_files(ROOT), ROOT)
    assert not found, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(found)


# ---- the checks themselves, on synthetic trees ----


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def test_a_cycle_through_a_function_level_relative_import_is_found(tmp_path):
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/sub/__init__.py": "",
            "pkg/sub/a.py": "from .b import f\n",
            "pkg/sub/b.py": "def f():\n    from ..c import g\n    return g()\n",
            "pkg/c.py": "import pkg.sub.a\n",
            "pkg/d.py": "from pkg.sub import a\n",  # needs a, nothing needs d: not in the cycle
        },
    )
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.d"] == {"pkg.sub.a"} and graph["pkg.sub.b"] == {"pkg.c"}
    assert import_cycles(graph) == [["pkg.c", "pkg.sub.a", "pkg.sub.b", "pkg.c"]]


def test_a_package_importing_its_modules_is_not_a_cycle_but_a_module_taking_names_from_it_is(tmp_path):
    files = {
        "pkg/__init__.py": "from .a import f\nfrom .b import g as h\n\nVALUE = 1\n",
        "pkg/a.py": "def f():\n    return 1\n",
        "pkg/b.py": "from .a import f\n\ndef g():\n    return f()\n",
        "pkg/c.py": "from pkg import h\nfrom . import a\n",  # a name of pkg, and the module pkg.a
    }
    graph = import_graph(write_tree(tmp_path, files), "pkg")
    assert graph == {"pkg": {"pkg.a", "pkg.b"}, "pkg.a": set(), "pkg.b": {"pkg.a"}, "pkg.c": {"pkg", "pkg.a"}}
    assert import_cycles(graph) == []

    # pkg.a takes a name from its package, which imports pkg.a: loading either first finds the other half-done
    files["pkg/a.py"] = "def f():\n    from pkg import VALUE\n    return VALUE\n"
    assert import_cycles(import_graph(write_tree(tmp_path, files), "pkg")) == [["pkg", "pkg.a", "pkg"]]
    files["pkg/a.py"] = "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from . import h\n"
    assert import_cycles(import_graph(write_tree(tmp_path, files), "pkg")) == [["pkg", "pkg.a", "pkg"]]


def test_a_long_function_is_named_with_file_line_and_length(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(79))
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/m.py": f"def short():\n{body}\n\nclass C:\n    def long(self):\n{textwrap.indent(body, '    ')}"
            "        return 0\n",
        },
    )
    found = long_functions([tmp_path / "pkg/m.py"], tmp_path)
    assert found == ["pkg/m.py:84 long (81 lines)"]  # `short` has exactly 80 lines: allowed


def test_the_real_tree_is_scanned():
    files = checked_files(ROOT)
    assert ROOT / "run_glue_sparse.py" in files and ROOT / PACKAGE / "bias" / "__init__.py" in files
    assert len(long_functions(files, ROOT, limit=1)) > 100  # every function has more than one line
    graph = import_graph(ROOT, PACKAGE)
    assert "hf_srnets.data.loading" in graph["hf_srnets.data"]


def test_the_layer_and_name_checks_find_what_they_look_for(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/data/__init__.py": "",
        "pkg/data/load.py": "from ..arguments.run import X\nMODE = 'imp'\n",  # up two layers, and a method name
        "pkg/arguments/__init__.py": "",
        "pkg/arguments/run.py": "from ..data import load\nX = 'threshold'\n",  # down: fine; arguments/ may name methods
        "pkg/commands/__init__.py": "",
        "pkg/commands/sweep.py": "from ..experiments import runs\n",  # the top floor: above experiments
        "pkg/experiments/__init__.py": "",
        "pkg/experiments/runs.py": '"""imp"""\nfrom ..arguments import run\nfrom ..commands import sweep\n',  # up one
    }
    root = write_tree(tmp_path, files)
    assert upward_imports(import_graph(root, "pkg")) == [
        "pkg.data.load -> pkg.arguments.run",
        "pkg.experiments.runs -> pkg.commands.sweep",
    ]
    assert method_name_literals(root, "pkg", {"imp", "threshold"}) == ["pkg/data/load.py:2 'imp'"]
    assert loose_modules(root, "pkg") == ["__init__.py"]
    (root / "run_long.py").write_text("from hf_srnets.commands.long import main\n" + "x = 1\n" * 40)
    (root / "run_thin.py").write_text("from hf_srnets.arguments import main\n")  # the parser's floor, not a command
    assert script_problems(root) == [
        "run_long.py: 41 lines",
        "run_thin.py: does not take `main` from hf_srnets.commands",
    ]


def test_a_circle_of_packages_is_found_where_no_module_cycle_is(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/a/__init__.py": "",
        "pkg/a/x.py": "from ..b import y\n",
        "pkg/a/w.py": "",
        "pkg/b/__init__.py": "",
        "pkg/b/y.py": "",
        "pkg/b/z.py": "from ..a import w\n",  # b needs a while a needs b: one package on two floors
        "pkg/c.py": "from .a import x\n",
    }
    graph = import_graph(write_tree(tmp_path, files), "pkg")
    assert import_cycles(graph) == []
    assert package_graph(graph) == {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert package_cycles(graph) == [["a", "b", "a"]]


def test_test_module_names_are_unique():
    """pytest imports test files by basename (no __init__.py): two files with one name break collection."""
    tests = Path(__file__).resolve().parent
    names = [path.name for path in tests.rglob("test_*.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == []
