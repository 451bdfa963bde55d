"""The suite's time budget (docs/testing.md): hooks that `conftest.py` imports.

Budget: a run of the whole suite in parallel (the README's command: every test under `tests/`, no `-k` or `-m`,
pytest-xdist with two workers or more) ends with a line giving its wall-clock time against `suite_budget_seconds`
(`[tool.pytest.ini_options]` in pyproject.toml), and fails when it is over it, so a change that makes the suite
slower finds out in its own CI instead of pushing a later one past CI's limit. The budget is per kind of CPU (torch's
kernel capability), with a default for the others: the one AVX2 machine timed ran the suite in 1.49 times an AVX-512
one's time. The kind stands for the machine, not for its kernels: forcing AVX2 kernels on an AVX-512 machine
(ATEN_CPU_CAPABILITY=avx2, ONEDNN_MAX_CPU_ISA=AVX2, MKL_ENABLE_INSTRUCTIONS=AVX2) left an end-to-end test's time
unchanged (10.3-10.8 s either way). A partial or one-process run prints the time and is not judged.
`SRNETS_SUITE_BUDGET=0` turns the check off for one run (e.g. on a machine shared with other work); any other value
replaces the budget.

The suite keeps its collection order: putting the modules with slow tests first made a whole run slower (847 s
against 709 s on one machine), since the two workers then ran multi-process tests side by side on two cores; and two
workers on two cores: three took 495 s for the suite two ran in 441 s.
"""

from __future__ import annotations

import os
import time

import pytest

BUDGET_INI = "suite_budget_seconds"
BUDGET_ENV = "SRNETS_SUITE_BUDGET"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        BUDGET_INI,
        "wall-clock seconds a parallel run of the whole suite may take: SECONDS, or KIND=SECONDS per torch CPU "
        "capability (AVX512, AVX2, ...) with default=SECONDS for the others (docs/testing.md)",
        type="linelist",
    )


def cpu_kind() -> str:
    """torch's kernel capability of this CPU (`AVX512` also on CPUs with AMX, `AVX2`, `DEFAULT`, ...)."""
    import torch

    return torch.backends.cpu.get_cpu_capability()


def budget_seconds(config: pytest.Config, kind: str | None = None) -> float | None:
    """The budget in seconds for this CPU kind (`kind`, default `cpu_kind()`), or None when the check is off or no
    budget is set: `SRNETS_SUITE_BUDGET` if set, else the ini entry `KIND=SECONDS` of this kind, else
    `default=SECONDS`, else a lone `SECONDS`."""
    entries = [os.environ[BUDGET_ENV]] if os.environ.get(BUDGET_ENV) else config.getini(BUDGET_INI)
    budgets = {}
    for entry in entries:
        name, _, value = entry.rpartition("=")
        try:
            budgets[name.strip().upper() or "DEFAULT"] = float(value)
        except ValueError:
            raise pytest.UsageError(
                f"{BUDGET_ENV} or {BUDGET_INI} must be SECONDS or KIND=SECONDS entries (0 turns the check off), "
                f"got {entry!r}"
            ) from None
    seconds = budgets.get((kind or cpu_kind()).upper(), budgets.get("DEFAULT"))
    return seconds if seconds else None


def whole_suite(config: pytest.Config) -> bool:
    """Whether this run is the whole suite: its `testpaths` (or the root folder), no `-k` or `-m` selection."""
    if config.getoption("keyword", "") or config.getoption("markexpr", ""):
        return False
    here = config.invocation_params.dir
    asked = {(here / arg.split("::")[0]).resolve() for arg in config.args}
    return asked == {(config.rootpath / path).resolve() for path in config.getini("testpaths") or ["."]}


def workers(config: pytest.Config) -> int:
    """pytest-xdist's worker count on the controller (`-n` capped by `--maxprocesses` becomes one `--tx` each)."""
    return len(getattr(config.option, "tx", None) or [])


def start_clock(session: pytest.Session) -> None:
    """Called first by conftest's `pytest_sessionstart`."""
    session.config.stash[_START] = time.monotonic()


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if hasattr(config, "workerinput") or _START not in config.stash:
        return
    seconds = time.monotonic() - config.stash[_START]
    budget = budget_seconds(config)
    judged = budget is not None and whole_suite(config) and workers(config) >= 2
    config.stash[_VERDICT] = (seconds, budget, judged)
    if judged and seconds > budget and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    if _VERDICT not in config.stash:
        return
    seconds, budget, judged = config.stash[_VERDICT]
    if budget is None:
        terminalreporter.write_line(f"suite time: {seconds:.0f} s (no budget: {BUDGET_ENV}=0 or {BUDGET_INI} unset)")
    elif not judged:
        terminalreporter.write_line(f"suite time: {seconds:.0f} s (a partial or one-process run: not held to a budget)")
    elif seconds <= budget:
        terminalreporter.write_line(
            f"suite time: {seconds:.0f} s, within its budget of {budget:.0f} s on {cpu_kind()} ({BUDGET_INI})"
        )
    else:
        terminalreporter.write_line(
            f"suite budget exceeded: {seconds:.0f} s, over the {budget:.0f} s on {cpu_kind()} of {BUDGET_INI} in "
            "pyproject.toml; "
            "make the slow tests cheaper (docs/testing.md says how to find them and how to add a slow test)",
            red=True,
        )


_START = pytest.StashKey[float]()
_VERDICT = pytest.StashKey[tuple]()
