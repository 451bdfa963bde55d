"""The runs of a sweep and their state on disk, so that a sweep stopped at any point continues where it stopped.

A recipe plans one run per (method, sparsity, seed): its `run_glue_sparse.py` arguments and output dir
(`planned_runs`). Each run's settings have a fingerprint, the SHA-256 of its arguments (`PlannedRun.fingerprint`),
recorded in the run dir's `sweep_run.json` before the run starts. On the next invocation every run is one of
(`run_status`):

* `done`: its results are written and its recorded fingerprint is the planned one (or the run was made before
  fingerprints were recorded): skipped.
* `resume`: not finished, same fingerprint, and a complete Trainer checkpoint is there (a sweep with
  `checkpoint_steps` saves one every that many steps): continued with `--resume_from_checkpoint`.
* `start`: nothing usable is there: run from the start in its cleared dir.
* `changed`: finished, or holding checkpoints, with other settings than the recipe's now, or made from an input
  file whose content has changed since: the sweep refuses to mix them into its summary or resume from them, unless
  asked to run them again.

A run dir's `sweep_run.json` is written atomically (`run_files.write_json`). One that is empty, cut or not a
record of a sweep run (a disk that filled up, an edit) makes a finished run `changed`, with that reason; and an
empty or cut results file is an unfinished run (`run_files.is_finished`), started or resumed again.

The inputs are the files a run's arguments name (bias and teacher predictions, data files) and the weights of the
folders they name (a teacher or a searched model, `INPUT_WEIGHTS`), never what the run writes itself. Their SHA-256
is recorded beside the fingerprint, so bias predictions made again, or a teacher trained again, make the runs that
read the old ones `changed` instead of silently kept.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..run_files import (
    MASKS_NAME,
    RESULTS_NAME,
    SAFE_WEIGHTS_NAME,
    SWEEP_RUN_NAME,
    WEIGHTS_NAME,
    is_finished,
    read_json_object,
    write_json,
)
from ..training.output_dir import is_inside, last_complete_checkpoint

RUN_META = SWEEP_RUN_NAME
STATES = ("done", "resume", "start", "changed")
INPUT_WEIGHTS = (SAFE_WEIGHTS_NAME, WEIGHTS_NAME, MASKS_NAME)
OUTPUT_FLAGS = ("--output_dir", "--logging_dir")  # and every --write_* flag: paths a run writes, not reads
META_KEYS = ("method", "sparsity", "seed")  # what every sweep_run.json holds (`collect` reads them)


class DamagedRecordError(InputError):
    """A run dir's `sweep_run.json` is empty, cut or not a record of a sweep run; the message names it and the fix."""


@dataclass(frozen=True)
class PlannedRun:
    """One run of a sweep: where it writes and the `run_glue_sparse.py` arguments that make it."""

    method: str
    sparsity: float
    seed: int
    output_dir: str
    argv: tuple[str, ...]

    @property
    def fingerprint(self) -> str:
        """SHA-256 of the run's arguments (output dir, seed and sparsity included): equal settings, equal value."""
        return hashlib.sha256(json.dumps(list(self.argv)).encode("utf-8")).hexdigest()

    @property
    def label(self) -> str:
        return f"{self.method} sparsity={self.sparsity:g} seed={self.seed}"


@dataclass(frozen=True)
class RunStatus:
    run: PlannedRun
    state: str  # one of STATES
    checkpoint: str | None = None  # the checkpoint a `resume` continues from
    reason: str | None = None  # why a run is `changed`


def run_dir(root: str, method: str, sparsity: float, seed: int) -> str:
    return os.path.join(root, method, f"s{sparsity:g}", f"seed{seed}")


def dict_to_argv(config: dict[str, Any]) -> list[str]:
    """A run's options as run_glue_sparse.py flags (parsed by its one parser, `hf_srnets.arguments`):
    `{"sparsity": 0.5, "do_train": True}` -> `["--sparsity", "0.5", "--do_train", "true"]`; lists spread."""
    argv: list[str] = []
    for key, value in config.items():
        if isinstance(value, list):
            argv += [f"--{key}", *map(str, value)]
        elif isinstance(value, bool):
            argv += [f"--{key}", str(value).lower()]
        elif value is not None:
            argv += [f"--{key}", str(value)]
    return argv


def expand(value: Any, seed: int, output_dir: str, sparsity: float | None = None) -> Any:
    """Fill `{seed}`, `{output_dir}`, `{sparsity}` (as in a run dir's `s<sparsity>`: `0.5`) and environment
    variables into a recipe value (other values pass through); `$$` is a literal `$`."""
    if isinstance(value, list):
        return [expand(v, seed, output_dir, sparsity) for v in value]
    if not isinstance(value, str):
        return value
    # the sweep's folder is a path as given (`--output_dir price$4`), never a place for environment variables
    value = value.replace("{seed}", str(seed)).replace("{output_dir}", output_dir.replace("$", "$$"))
    if sparsity is not None:
        value = value.replace("{sparsity}", f"{sparsity:g}")
    expanded = os.path.expandvars(value.replace("$$", LITERAL_DOLLAR))  # `$$`: a `$` of the value itself
    if "$" in expanded:
        raise InputError(
            f"recipe value {value!r} names an environment variable that is not set (write $$ for a literal $, e.g. "
            "in a regex or a folder name)"
        )
    return expanded.replace(LITERAL_DOLLAR, "$")


LITERAL_DOLLAR = "\0"  # stands for `$$` while the environment variables are filled in


def is_full_model(method_args: dict[str, Any]) -> bool:
    """A method without pruning or a fixed mask, that starts from no sparse model: run once per seed, at sparsity 0."""
    unpruned = method_args.get("pruning", "none") == "none" and "mask_from" not in method_args
    return unpruned and not starts_from_sparse_model(method_args)


def starts_from_sparse_model(method_args: dict[str, Any]) -> bool:
    """A method without pruning whose values name `{sparsity}`: it trains an earlier method's model of each sparsity
    (e.g. a compact model's recovery, `model_name_or_path: "{output_dir}/hybrid/s{sparsity}/seed{seed}/merged"`),
    so it runs at every sparsity of the grid, without `--sparsity` (it prunes nothing itself)."""
    if method_args.get("pruning", "none") != "none":
        return False
    return any("{sparsity}" in str(value) for value in method_args.values())


def planned_runs(recipe: dict[str, Any]) -> list[PlannedRun]:
    """Every run of the recipe, methods in the recipe's order (a method may start from an earlier one's models)."""
    runs = []
    for method, method_args in recipe["methods"].items():
        method_args = dict(method_args)
        sparsities = method_args.pop("sparsities", recipe["sparsities"])
        check_sparsities(method, sparsities)
        raw_argv = method_args.pop("argv", [])  # run_glue_sparse arguments as given (a recipe-free sweep)
        full = is_full_model(method_args)
        from_sparse = starts_from_sparse_model(method_args)
        for sparsity in [0.0] if full else sparsities:
            for seed in recipe["seeds"]:
                out = run_dir(recipe["output_dir"], method, sparsity, seed)
                config = {**recipe.get("common", {}), **method_args}
                config = {k: expand(v, seed, recipe["output_dir"], sparsity) for k, v in config.items()}
                config.update(seed=seed, output_dir=out)
                if not full and not from_sparse:
                    config["sparsity"] = sparsity
                argv = [expand(a, seed, recipe["output_dir"], sparsity) for a in raw_argv] + dict_to_argv(config)
                runs.append(PlannedRun(method, float(sparsity), int(seed), out, tuple(argv)))
    refuse_repeated_runs(runs)
    return runs


def check_sparsities(method: str, sparsities: list[float]) -> None:
    """Every sparsity of `method`'s grid (the command line's or the recipe's) in [0, 1): checked as the runs are
    planned, so that a bad value is refused before the first run, not when its own run starts."""
    bad = [s for s in sparsities if not 0.0 <= s < 1.0]  # NaN fails too
    if bad:
        raise InputError(
            f"the sweep's sparsity {bad[0]:g} (method {method}) is not in [0, 1): give --sparsities or the recipe's "
            "sparsities as the fractions of weights to prune, e.g. 0.3,0.5,0.7"
        )


def refuse_repeated_runs(runs: list[PlannedRun]) -> None:
    """A seed or sparsity given twice plans one run dir twice (its second run would find the first's results):
    refuse it by name."""
    seen: set[str] = set()
    for run in runs:
        if run.output_dir in seen:
            raise InputError(
                f"the sweep plans {run.label} twice (into {run.output_dir}): a seed or sparsity is repeated in "
                "--seeds/--sparsities or the recipe's seeds/sparsities; give each once"
            )
        seen.add(run.output_dir)


def checkpoint_argv(steps: int | None) -> list[str]:
    """The flags that make a run save a checkpoint every `steps` steps, keeping only the last one (none: [])."""
    if not steps:
        return []
    return ["--save_strategy", "steps", "--save_steps", str(steps), "--save_total_limit", "1"]


def input_files(run: PlannedRun) -> list[str]:
    """The files the run reads that can change between invocations (module doc), in argument order."""
    files: list[str] = []
    for flag, value in zip(("",) + run.argv[:-1], run.argv):
        if value.startswith("--") or flag in OUTPUT_FLAGS or flag.startswith("--write_"):
            continue
        if is_inside(value, run.output_dir):
            continue
        if os.path.isfile(value):
            files.append(value)
        elif os.path.isdir(value):
            files += [os.path.join(value, n) for n in INPUT_WEIGHTS if os.path.isfile(os.path.join(value, n))]
    return list(dict.fromkeys(files))


@functools.lru_cache(maxsize=256)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_digest(path: str) -> str:
    """SHA-256 of a file's content, computed once per file version (path, size, mtime) in a process."""
    stat = os.stat(path)
    return _sha256(os.path.realpath(path), stat.st_size, stat.st_mtime_ns)


def changed_inputs(meta: dict[str, Any]) -> list[str]:
    """The recorded inputs whose content differs now (a file gone is left to the run to report)."""
    recorded = meta.get("inputs") or {}
    return [path for path, digest in recorded.items() if os.path.isfile(path) and file_digest(path) != digest]


def read_meta(directory: str) -> dict[str, Any] | None:
    """The run's `sweep_run.json`; None when there is none; `DamagedRecordError` when it is empty, cut or lacks
    `META_KEYS`."""
    path = os.path.join(directory, RUN_META)
    if not os.path.isfile(path):
        return None
    meta = read_json_object(path)
    if meta is None or any(key not in meta for key in META_KEYS):
        raise DamagedRecordError(
            f"{path} is empty, cut or not a sweep run's record (a JSON object with {', '.join(META_KEYS)}): run the "
            f"sweep again with --rerun_changed to make that run again, or delete {directory}"
        )
    return meta


def write_meta(run: PlannedRun) -> None:
    """Record the run's identity and settings in its dir before it starts (`collect` reads method, sparsity, seed),
    atomically: a sweep stopped mid-write leaves the previous record whole."""
    os.makedirs(run.output_dir, exist_ok=True)
    meta = {"method": run.method, "sparsity": run.sparsity, "seed": run.seed, "fingerprint": run.fingerprint}
    inputs = {path: file_digest(path) for path in input_files(run)}
    write_json(os.path.join(run.output_dir, RUN_META), {**meta, "argv": list(run.argv), "inputs": inputs}, indent=2)


def _unfinished_reason(directory: str) -> str | None:
    """Why a run dir holding a results file is not finished (`is_finished`), or None when it holds none."""
    if os.path.isfile(os.path.join(directory, RESULTS_NAME)):
        return f"its {RESULTS_NAME} is empty, cut or not a JSON object: the run did not finish"
    return None


def run_status(run: PlannedRun) -> RunStatus:
    """What the next invocation does with `run` (module doc)."""
    try:
        meta, damaged = read_meta(run.output_dir), None
    except DamagedRecordError:
        meta, damaged = None, f"its {RUN_META} is empty, cut or not a sweep run's record"
    recorded = (meta or {}).get("fingerprint")
    checkpoint = last_complete_checkpoint(run.output_dir) if os.path.isdir(run.output_dir) else None
    finished = is_finished(run.output_dir)
    if not finished and checkpoint is None:
        return RunStatus(run, "start", reason=_unfinished_reason(run.output_dir))
    if damaged:
        return RunStatus(run, "changed", reason=damaged)
    if meta is None or recorded not in ((None, run.fingerprint) if finished else (run.fingerprint,)):
        return RunStatus(run, "changed", reason="other settings")  # None: finished before fingerprints
    moved = changed_inputs(meta)
    if moved:
        return RunStatus(run, "changed", reason="changed since the run read it: " + ", ".join(moved))
    return RunStatus(run, "done") if finished else RunStatus(run, "resume", checkpoint)


def status_report(statuses: list[RunStatus]) -> str:
    """`N run(s): D done, R to resume, S to start[, C with other settings]` and one line per run not done."""
    counts = {state: sum(s.state == state for s in statuses) for state in STATES}
    runs = f"{len(statuses)} run{'' if len(statuses) == 1 else 's'}"
    head = f"{runs}: {counts['done']} done, {counts['resume']} to resume, {counts['start']} to start"
    if counts["changed"]:
        head += f", {counts['changed']} made with other settings"
    lines = [head]
    for status in statuses:
        if status.state == "resume":
            lines.append(f"  resume {status.run.label} from {os.path.basename(status.checkpoint or '')}")
        elif status.state != "done":
            reason = f" ({status.reason})" if status.reason else ""
            lines.append(f"  {status.state} {status.run.label}{reason}")
    return "\n".join(lines)


def changed_runs_error(changed: list[RunStatus]) -> InputError:
    dirs = "; ".join(f"{s.run.output_dir}: {s.reason}" for s in changed)
    return InputError(
        f"{len(changed)} run dir(s) hold a run made with other settings than the recipe's now, or from inputs that "
        f"have changed since ({dirs}; the settings and inputs a run was made with are in its {RUN_META}, and a "
        "dir without one holds results the sweep did not make): give --rerun_changed to run them again with the "
        "recipe's settings and today's inputs (their outputs are replaced), or another --output_dir to keep them"
    )
