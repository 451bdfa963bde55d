"""The per-example results file of an attack, `<output_dir>/attack_<recipe>.jsonl`, and how a re-run resumes it.

Line 1 is a header, `{"type": "header", "format": 1, "settings": {...}}`: the settings that decide the results
(recipe, model, task, data, sample, query budget, resources). Every other line is one attacked example,
`{"type": "result", "index": i, "id": ..., "recipe": ..., "timestamp": ..., "seconds": ..., **AttackResult}`, written
and flushed as soon as it is attacked. A re-run with the same settings keeps those lines and attacks only the
examples not yet in the file; other settings are refused (`--overwrite_output_dir` starts the file again). A last
line cut short by an interruption is dropped.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass, field
from typing import IO, Any

from ..errors import InputError
from ..run_files import attack_rows_name
from .base import AttackResult

FORMAT_VERSION = 1


@dataclass
class ResultRecord:
    """One line of the file: the example's position in the attacked set (`index`), its id, the recipe, when it
    was written, the seconds its attack took and its `AttackResult`."""

    index: int
    id: str
    recipe: str
    result: AttackResult
    seconds: float = 0.0
    timestamp: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S%z"))

    def to_json(self) -> str:
        head = {"type": "result", "index": self.index, "id": self.id, "recipe": self.recipe}
        head |= {"timestamp": self.timestamp, "seconds": round(self.seconds, 4)}
        return json.dumps(head | self.result.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ResultRecord:
        meta = ("type", "index", "id", "recipe", "timestamp", "seconds")
        result = AttackResult.from_dict({k: v for k, v in data.items() if k not in meta})
        return cls(data["index"], data["id"], data["recipe"], result, data.get("seconds", 0.0), data["timestamp"])


def results_path(output_dir: str, recipe: str) -> str:
    return os.path.join(output_dir, attack_rows_name(recipe))


def _read_lines(path: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]], int]:
    """(header, result records, byte length of the complete lines)."""
    header, records, good = None, [], 0
    with open(path, "rb") as f:
        for raw in f:
            if not raw.endswith(b"\n"):
                break  # cut short by an interruption
            try:
                data = json.loads(raw)
            except json.JSONDecodeError as err:
                raise InputError(
                    f"{path}: line {len(records) + 2} is not JSON ({err}); use --overwrite_output_dir"
                ) from err
            good += len(raw)
            if data.get("type") == "header":
                header = data
            else:
                records.append(data)
    return header, records, good


def _differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    keys = sorted(set(old) | set(new))
    return [f"{k}: {old.get(k)!r} in the file, {new.get(k)!r} now" for k in keys if old.get(k) != new.get(k)]


def open_results(path: str, settings: dict[str, Any], *, overwrite: bool = False) -> tuple[IO[str], list[ResultRecord]]:
    """Open `path` for appending results of `settings`; return it and the records already there (resume).

    Raises ValueError when the file holds results of other settings (the message lists them).
    """
    settings = json.loads(json.dumps(settings))  # as it reads back (tuples -> lists)
    if overwrite or not os.path.isfile(path) or os.path.getsize(path) == 0:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)  # a new file: a hard link placed at `path` keeps its contents (appends follow)
        f = open(path, "x", encoding="utf-8")
        f.write(json.dumps({"type": "header", "format": FORMAT_VERSION, "settings": settings}) + "\n")
        f.flush()
        return f, []
    header, records, good = _read_lines(path)
    if header is None or header.get("settings") != settings:
        diff = _differences((header or {}).get("settings") or {}, settings)
        raise InputError(
            f"{path} holds attack results of other settings ({'; '.join(diff) or 'no header'}). Pass "
            "--overwrite_output_dir to replace them, or choose another --output_dir."
        )
    with open(path, "r+b") as f:
        f.truncate(good)
    f = open(path, "a", encoding="utf-8")
    return f, [ResultRecord.from_dict(r) for r in records]


def append_record(f: IO[str], record: ResultRecord) -> None:
    """Write one result line and flush it to disk (an interruption loses at most the example being attacked)."""
    f.write(record.to_json() + "\n")
    f.flush()
    os.fsync(f.fileno())


def read_results(path: str) -> list[ResultRecord]:
    """All result records of a file, in file order."""
    return [ResultRecord.from_dict(r) for r in _read_lines(path)[1]]
