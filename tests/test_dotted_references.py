"""Every dotted name `hf_srnets.<module>[.<name>...]` that the package's docstrings and comments, the docs, the
examples and the benches point a reader to exists: a moved constant (the BibTeX table once named
`hf_srnets.objectives.BIBTEX`) fails here instead of sending the reader nowhere."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# not inside a file name (`.hf_srnets.lock`) or a path; a trailing sentence dot is not part of the name
REFERENCE = re.compile(r"(?<![\w./-])hf_srnets(?:\.[A-Za-z_]\w*)+")


def scanned_files() -> list[Path]:
    """The package's modules, the README, ARCHITECTURE.md, the docs pages, the examples and the benches."""
    files = [*ROOT.glob("hf_srnets/**/*.py"), *ROOT.glob("docs/*.md"), ROOT / "README.md", ROOT / "ARCHITECTURE.md"]
    return sorted({*files, *ROOT.glob("examples/**/*.py"), *ROOT.glob("bench/**/*.py")})


def resolves(reference: str) -> bool:
    """Whether `reference` is an importable module, or attributes of the longest importable module prefix."""
    parts = reference.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(target, name):
                return False
            target = getattr(target, name)
        return True
    return False


def test_resolves_tells_a_real_name_from_a_moved_one():
    assert resolves("hf_srnets.resources.citations.BIBTEX") and resolves("hf_srnets.pruning.mask_codec")
    assert resolves("hf_srnets.pruning.PruningConfig.unused_options")
    assert not resolves("hf_srnets.objectives.BIBTEX") and not resolves("hf_srnets.no_such_module.X")
    assert REFERENCE.findall("see `hf_srnets.resources.citations.BIBTEX`. Or OUT/.hf_srnets.lock") == [
        "hf_srnets.resources.citations.BIBTEX"
    ]


def test_every_dotted_hf_srnets_name_in_the_code_and_docs_exists():
    missing = []
    for path in scanned_files():
        text = path.read_text(encoding="utf-8")
        for match in REFERENCE.finditer(text):
            if not resolves(match[0]):
                line = text.count("\n", 0, match.start()) + 1
                missing.append(f"{path.relative_to(ROOT)}:{line} {match[0]}")
    assert not missing, "names that do not exist:\n" + "\n".join(missing)
