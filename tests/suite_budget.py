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

Machine speed: one machine of one kind ran the same suite in 448 s and in 539-550 s on one day, and the dense
MiniLM of bench/bench_runtimes.py at 48.4 and 40.1 examples/s on two days, so a budget in seconds either fails a good
commit on a slow run or lets a slow test through on a fast one. The controller therefore times a fixed workload at
the start (`speed_probe`: float32 matrix products and a Python loop on one thread, about half each, best of five
after a warm-up, about a second) and scales the budget by its time over `suite_budget_probe_seconds` (the probe's
time, per CPU kind, on the machine the budget was set on), within [1/1.5, 1.5]: the verdict is on the suite's
growth, not on the machine's speed that day (the probe does not see every cause: the budget keeps a margin). Without
a reference for the kind, the budget is used as it is.

The suite keeps its collection order: putting the modules with slow tests first made a whole run slower (847 s
against 709 s on one machine), since the two workers then ran multi-process tests side by side on two cores; and two
workers on two cores: three took 495 s for the suite two ran in 441 s.
"""

from __future__ import annotations

import os
import time

import pytest

BUDGET_INI = "suite_budget_seconds"
PROBE_INI = "suite_budget_probe_seconds"
BUDGET_ENV = "SRNETS_SUITE_BUDGET"
MAX_SCALE = 1.5  # a machine slower than this against the reference is not excused further


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        BUDGET_INI,
        "wall-clock seconds a parallel run of the whole suite may take: SECONDS, or KIND=SECONDS per torch CPU "
        "capability (AVX512, AVX2, ...) with default=SECONDS for the others (docs/testing.md)",
        type="linelist",
    )
    parser.addini(
        PROBE_INI,
        "seconds of the speed probe (tests/suite_budget.speed_probe) per torch CPU capability on the machine the "
        "budget was set on: KIND=SECONDS entries; the budget is scaled by this machine's probe over it",
        type="linelist",
    )


def speed_probe(repeats: int = 5) -> float:
    """Seconds of a fixed workload on one thread, the best of `repeats`: float32 matrix products of MiniLM's FFN
    shape (the suite's torch work) and a Python loop (its interpreter work)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(0)
    a, b = torch.randn(128, 384, generator=generator), torch.randn(384, 1536, generator=generator)
    best = float("inf")
    try:
        for _ in range(repeats + 1):  # the first warms the kernels and caches up
            start = time.perf_counter()
            for _ in range(60):
                a @ b
            total = 0
            for i in range(1_000_000):
                total += i % 7
            best = min(best, time.perf_counter() - start)
    finally:
        torch.set_num_threads(threads)
    return best


def kind_entries(entries: list[str], what: str) -> dict[str, float]:
    """`KIND=SECONDS` entries (a lone SECONDS is `DEFAULT`), by upper-case kind; `what` names them in the error."""
    found = {}
    for entry in entries:
        kind, _, value = entry.rpartition("=")
        try:
            found[kind.strip().upper() or "DEFAULT"] = float(value)
        except ValueError:
            raise pytest.UsageError(f"{what} must be SECONDS or KIND=SECONDS entries, got {entry!r}") from None
    return found


def speed_scale(config: pytest.Config, probe: float | None, kind: str | None = None) -> float:
    """The budget's factor on this machine: its probe time over the reference of its CPU kind, within
    [1/MAX_SCALE, MAX_SCALE]; 1 without a probe or a reference."""
    reference = kind_entries(config.getini(PROBE_INI), PROBE_INI).get((kind or cpu_kind()).upper())
    if not probe or not reference:
        return 1.0
    return min(MAX_SCALE, max(1 / MAX_SCALE, probe / reference))


def cpu_kind() -> str:
    """torch's kernel capability of this CPU (`AVX512` also on CPUs with AMX, `AVX2`, `DEFAULT`, ...)."""
    import torch

    return torch.backends.cpu.get_cpu_capability()


def budget_seconds(config: pytest.Config, kind: str | None = None) -> float | None:
    """The budget in seconds for this CPU kind (`kind`, default `cpu_kind()`), or None when the check is off or no
    budget is set: `SRNETS_SUITE_BUDGET` if set, else the ini entry `KIND=SECONDS` of this kind, else
    `default=SECONDS`, else a lone `SECONDS`."""
    entries = [os.environ[BUDGET_ENV]] if os.environ.get(BUDGET_ENV) else config.getini(BUDGET_INI)
    budgets = kind_entries(entries, f"{BUDGET_ENV} or {BUDGET_INI}")
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


def pytest_configure(config: pytest.Config) -> None:
    """On the controller of a run that will be judged, the speed probe, before the workers start."""
    if not hasattr(config, "workerinput") and whole_suite(config) and workers(config) >= 2:
        config.stash[_PROBE] = speed_probe()


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
    probe = config.stash.get(_PROBE, None)
    scale = speed_scale(config, probe) if judged and not os.environ.get(BUDGET_ENV) else 1.0
    scaled = budget * scale if budget is not None else None
    config.stash[_VERDICT] = (seconds, scaled, judged, (budget, scale, probe))
    if judged and seconds > scaled and session.exitstatus == pytest.ExitCode.OK:  # the budget the line reports
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    if _VERDICT not in config.stash:
        return
    seconds, budget, judged, (base, scale, probe) = config.stash[_VERDICT]
    how = f"{base:.0f} s x {scale:.2f}, the speed probe's {probe:.3f} s over its reference" if scale != 1 else ""
    if budget is None:
        terminalreporter.write_line(f"suite time: {seconds:.0f} s (no budget: {BUDGET_ENV}=0 or {BUDGET_INI} unset)")
    elif not judged:
        terminalreporter.write_line(f"suite time: {seconds:.0f} s (a partial or one-process run: not held to a budget)")
    elif seconds <= budget:
        terminalreporter.write_line(
            f"suite time: {seconds:.0f} s, within its budget of {budget:.0f} s on {cpu_kind()} ({BUDGET_INI}"
            + (f"; {how})" if how else ")")
        )
    else:
        terminalreporter.write_line(
            f"suite budget exceeded: {seconds:.0f} s, over the {budget:.0f} s on {cpu_kind()} of {BUDGET_INI} in "
            + (f"pyproject.toml ({how}); " if how else "pyproject.toml; ")
            + "make the slow tests cheaper (docs/testing.md says how to find them and how to add a slow test)",
            red=True,
        )


_START = pytest.StashKey[float]()
_VERDICT = pytest.StashKey[tuple]()
_PROBE = pytest.StashKey[float]()
