"""`l0`: hard-concrete L0 masks (Robust Tickets §3.2, Eq. 1-5, 8) and one-shot ticket extraction (§3.3)."""

from .config import L0Config
from .extract import extract_ticket, read_search_dir, write_ticket
from .layer import (
    GAMMA,
    ZETA,
    HardConcreteLinear,
    deterministic_gate,
    expected_nonzero,
    hard_concrete_sample,
    init_log_alpha,
)
from .method import L0Pruning, l0_penalty, lambda_at

__all__ = [
    "GAMMA",
    "ZETA",
    "HardConcreteLinear",
    "L0Config",
    "L0Pruning",
    "deterministic_gate",
    "expected_nonzero",
    "extract_ticket",
    "hard_concrete_sample",
    "init_log_alpha",
    "l0_penalty",
    "lambda_at",
    "read_search_dir",
    "write_ticket",
]
