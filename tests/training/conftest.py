"""The one-process references of the multi-process tests (DDP, two nodes, FSDP, DeepSpeed), computed once per test
run."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from filelock import FileLock

from training.ddp_helpers import launch

WORKER = Path(__file__).with_name("ddp_worker.py")
METHODS = "mask,imp,l0,wanda"


@pytest.fixture(scope="session")
def one_process(tmp_path_factory) -> Callable[[str], dict]:
    """method -> the state `ddp_worker.py` writes for one process of 8 examples; every method searched in one launch,
    shared by the pytest-xdist workers through a folder and a lock (the recipe of pytest-xdist's docs)."""
    # under pytest-xdist the workers' temporary folders share this run's parent; without it, the parent holds every
    # run's folder, and a reference left by an earlier run (of older code) would be read
    run_folder = tmp_path_factory.getbasetemp()
    root = (run_folder.parent if "PYTEST_XDIST_WORKER" in os.environ else run_folder) / "one_process_masks"
    with FileLock(f"{root}.lock"):
        if not (root / "done").is_file():
            root.mkdir(exist_ok=True)
            launch(WORKER, 1, root, 8, "-", METHODS)
            (root / "done").touch()
    return lambda method: torch.load(root / method / "rank0.pt")
