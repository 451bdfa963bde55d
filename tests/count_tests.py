"""Count the suite's tests and its slow ones by collection (`pytest --collect-only -q -m slow tests`, one pass:
"N/M tests collected"); with `--write`, record them in results/test_counts.json, which README.md quotes and
tests/test_results_text.py checks against the README and against a fresh collection.

    python tests/count_tests.py            # print the counts
    python tests/count_tests.py --write    # update results/test_counts.json (keeps its other keys)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COUNTS = ROOT / "results" / "test_counts.json"
COMMAND = ["-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-m", "slow", "tests"]


def collected_counts() -> dict[str, int]:
    """{"collected": every test, "slow": those marked slow}, from one collection of `tests/`."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    result = subprocess.run([sys.executable, *COMMAND], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    match = re.search(r"(\d+)/(\d+) tests collected", result.stdout)
    if match is None:
        raise RuntimeError(
            f"no collection count in the output of pytest:\n{result.stdout[-2000:]}{result.stderr[-2000:]}"
        )
    return {"collected": int(match[2]), "slow": int(match[1])}


def main() -> None:
    counts = collected_counts()
    print(json.dumps(counts))
    if "--write" in sys.argv[1:]:
        recorded = json.loads(COUNTS.read_text()) if COUNTS.is_file() else {}
        COUNTS.write_text(json.dumps({**recorded, **counts}, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
