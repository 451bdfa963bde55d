"""The README's commands are the ones the project runs: its quickstart block is the body of examples/quickstart.sh,
and .ci/run calls the README's test command."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_quickstart_is_the_script():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    script = (ROOT / "examples" / "quickstart.sh").read_text(encoding="utf-8")
    body = script[script.index("DATA_DIR=${DATA_DIR") :].rstrip()
    blocks = re.findall(r"```bash\n(.*?)```", readme, re.S)
    assert any(block.rstrip() == body for block in blocks), "README's quickstart block differs from quickstart.sh"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = re.search(r"## Test\n\n```bash\n(.*?)\n```", readme, re.S)[1].strip()
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    # CI may add reporting options after the command, not change it
    assert any(line == command or line.startswith(command + " ") for line in lines), f"{command!r} not in .ci/run"


def test_readme_first_run_table_is_the_quick_fixture():
    """The `--quick` table the README shows is what `examples/quickstart_table.py` prints from the committed
    fixtures (`tests/fixtures/quickstart_quick/`), which agree on it for every CPU kind stored."""
    import json
    import sys

    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from quickstart_table import table
    finally:
        sys.path.remove(str(ROOT / "examples"))
    fixtures = sorted((ROOT / "tests" / "fixtures" / "quickstart_quick").glob("*.json"))
    tables = {table(json.loads(path.read_text(encoding="utf-8"))) for path in fixtures}
    assert len(fixtures) >= 2 and len(tables) == 1
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_run = readme[readme.index("## First run") : readme.index("## Quickstart")]
    assert tables.pop() in first_run


def test_ci_sets_the_environment_the_readme_names():
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    settings = ("SRNETS_REQUIRE_DATA=1", "HF_HUB_OFFLINE=1", "HF_DATASETS_OFFLINE=1", "TOKENIZERS_PARALLELISM=false")
    for setting in settings:
        assert setting in readme and setting in ci, setting
