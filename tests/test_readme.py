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
