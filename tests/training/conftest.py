"""The one-process references of the multi-process tests (DDP, two nodes, FSDP, DeepSpeed), computed once per test
run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from training.ddp_helpers import launched_once

WORKER = Path(__file__).with_name("ddp_worker.py")
METHODS = "mask,imp,l0,wanda"


@pytest.fixture(scope="session")
def one_process(tmp_path_factory) -> Callable[[str], dict]:
    """method -> the state `ddp_worker.py` writes for one process of 8 examples; every method searched in one launch,
    once per test run (`launched_once`)."""
    root = launched_once(tmp_path_factory, "one_process_masks", WORKER, 1, 8, "-", METHODS)
    return lambda method: torch.load(root / method / "rank0.pt")
