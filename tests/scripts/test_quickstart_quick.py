"""The README's first run, `bash examples/quickstart.sh --quick`, against the numbers it produced when committed.

`tests/fixtures/quickstart_quick_expected.json` is the `quickstart_results.json` that the script's last step
(`examples/quickstart_table.py`) wrote after `OMP_NUM_THREADS=1 bash examples/quickstart.sh --quick`. The test runs
the same script on one thread and compares: a change anywhere in the pipeline (bias model, fine-tuning, threshold
selection and its tie rule, the search, the evaluation and its order of float sums) moves a metric's last bits or
the masks' sha256.

Tolerance: none. The README promises bit-identical weights, masks and metrics for the same thread count, which holds
for one torch build on one kind of CPU (other builds and instruction sets choose other kernels, whose sums differ in
the last bits). With the fixture's torch version and CPU capability every metric must be equal and the decoded
masks' sha256 identical; elsewhere the test skips and says how to regenerate the file. A deliberate change of the
numbers regenerates it with the command above and says why in the commit.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "quickstart_quick_expected.json"
REGENERATE = (
    "OMP_NUM_THREADS=1 OUT=/tmp/quick bash examples/quickstart.sh --quick && "
    "cp /tmp/quick/quickstart_results.json tests/fixtures/quickstart_quick_expected.json"
)


def run_quick(data_dir: Path, out: Path) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", DATA_DIR=str(data_dir), OUT=str(out))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # the scripts' `python`
    done = subprocess.run(
        ["bash", str(ROOT / "examples" / "quickstart.sh"), "--quick"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((out / "quickstart_results.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_quick_quickstart_reproduces_its_committed_results(minilm, data_dir, tmp_path):
    expected = json.loads(FIXTURE.read_text(encoding="utf-8"))
    here = {"torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability()}
    if here != expected["environment"]:
        pytest.skip(f"bit-identical only on {expected['environment']} (here {here}); regenerate with: {REGENERATE}")
    measured = run_quick(data_dir, tmp_path / "quick")
    assert measured["environment"] == expected["environment"]
    for run, want in expected["runs"].items():
        got = measured["runs"][run]
        assert got["torch_num_threads"] == 1, "the fixture is a one-thread run"
        differing = {key: (got.get(key), value) for key, value in want.items() if got.get(key) != value}
        assert not differing, f"{run}: (measured, committed) differ: {differing}; if intended: {REGENERATE}"
    assert measured["runs"]["mask_poe_50"]["sparsity"] == pytest.approx(0.5, abs=1e-3)
