"""What Linux's /proc/cpuinfo says of the CPU, read in one place for the precision record (`training.precision`) and
the speed tables (`evaluation.speed`)."""

from __future__ import annotations

CPUINFO = "/proc/cpuinfo"


def cpuinfo_values(key: str, cpuinfo: str = CPUINFO) -> list[str] | None:
    """The value of every `key` line of `cpuinfo` ("key<TAB>: value", one block per logical CPU), in order; None
    where there is no such file (not Linux)."""
    try:
        with open(cpuinfo, encoding="utf-8") as handle:
            return [line.partition(":")[2].strip() for line in handle if line.startswith(key)]
    except OSError:
        return None
