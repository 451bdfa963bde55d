"""`torchrun ... deepspeed_cli.py ARGS` runs `run_glue_sparse.py ARGS` as users do, without building DeepSpeed's CPU
inference all-reduce kernel (`ddp_helpers.without_inference_kernel`: minutes of compiling on a fresh machine, for an
op training does not use)."""

import runpy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's hf_srnets, as run_glue_sparse.py sees

from training.ddp_helpers import without_inference_kernel

ROOT = Path(__file__).resolve().parents[2]

if __name__ == "__main__":
    without_inference_kernel()
    sys.argv[0] = str(ROOT / "run_glue_sparse.py")
    runpy.run_path(sys.argv[0], run_name="__main__")
