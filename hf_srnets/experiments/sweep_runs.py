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
* `changed`: finished, or holding checkpoints, with other settings than the recipe's now: the sweep refuses to
  mix them into its summary or resume from them, unless asked to run them again.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..run_files import is_finished
from ..training.output_dir import last_complete_checkpoint

RUN_META = "sweep_run.json"
STATES = ("done", "resume", "start", "changed")


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


def run_dir(root: str, method: str, sparsity: float, seed: int) -> str:
    return os.path.join(root, method, f"s{sparsity:g}", f"seed{seed}")


def dict_to_argv(config: dict[str, Any]) -> list[str]:
    """A run's options as run_glue_sparse.py flags (parsed by its one parser, `hf_srnets.cli`):
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


def expand(value: Any, seed: int, output_dir: str) -> Any:
    """Fill `{seed}`, `{output_dir}` and environment variables into a recipe value (other values pass through)."""
    if isinstance(value, list):
        return [expand(v, seed, output_dir) for v in value]
    if not isinstance(value, str):
        return value
    value = value.replace("{seed}", str(seed)).replace("{output_dir}", output_dir)
    expanded = os.path.expandvars(value)
    if "$" in expanded:
        raise InputError(f"recipe value {value!r} names an environment variable that is not set")
    return expanded


def is_full_model(method_args: dict[str, Any]) -> bool:
    """A method without pruning or a fixed mask: run once per seed, at sparsity 0."""
    return method_args.get("pruning", "none") == "none" and "mask_from" not in method_args


def planned_runs(recipe: dict[str, Any]) -> list[PlannedRun]:
    """Every run of the recipe, methods in the recipe's order (a method may start from an earlier one's models)."""
    runs = []
    for method, method_args in recipe["methods"].items():
        method_args = dict(method_args)
        sparsities = method_args.pop("sparsities", recipe["sparsities"])
        raw_argv = method_args.pop("argv", [])  # run_glue_sparse arguments as given (a recipe-free sweep)
        full = is_full_model(method_args)
        for sparsity in [0.0] if full else sparsities:
            for seed in recipe["seeds"]:
                out = run_dir(recipe["output_dir"], method, sparsity, seed)
                config = {**recipe.get("common", {}), **method_args}
                config = {k: expand(v, seed, recipe["output_dir"]) for k, v in config.items()}
                config.update(seed=seed, output_dir=out)
                if not full:
                    config["sparsity"] = sparsity
                argv = [expand(a, seed, recipe["output_dir"]) for a in raw_argv] + dict_to_argv(config)
                runs.append(PlannedRun(method, float(sparsity), int(seed), out, tuple(argv)))
    return runs


def checkpoint_argv(steps: int | None) -> list[str]:
    """The flags that make a run save a checkpoint every `steps` steps, keeping only the last one (none: [])."""
    if not steps:
        return []
    return ["--save_strategy", "steps", "--save_steps", str(steps), "--save_total_limit", "1"]


def read_meta(directory: str) -> dict[str, Any] | None:
    path = os.path.join(directory, RUN_META)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_meta(run: PlannedRun) -> None:
    """Record the run's identity and settings in its dir before it starts (`collect` reads method, sparsity, seed)."""
    os.makedirs(run.output_dir, exist_ok=True)
    meta = {"method": run.method, "sparsity": run.sparsity, "seed": run.seed, "fingerprint": run.fingerprint}
    with open(os.path.join(run.output_dir, RUN_META), "w", encoding="utf-8") as f:
        json.dump({**meta, "argv": list(run.argv)}, f, indent=2)


def run_status(run: PlannedRun) -> RunStatus:
    """What the next invocation does with `run` (module doc)."""
    meta = read_meta(run.output_dir)
    recorded = (meta or {}).get("fingerprint")
    checkpoint = last_complete_checkpoint(run.output_dir) if os.path.isdir(run.output_dir) else None
    if is_finished(run.output_dir):
        same = meta is not None and recorded in (None, run.fingerprint)  # None: made before fingerprints
        return RunStatus(run, "done" if same else "changed")
    if checkpoint is not None:
        return RunStatus(run, "resume", checkpoint) if recorded == run.fingerprint else RunStatus(run, "changed")
    return RunStatus(run, "start")


def status_report(statuses: list[RunStatus]) -> str:
    """`N runs: D done, R to resume, S to start[, C with other settings]` and one line per run not done."""
    counts = {state: sum(s.state == state for s in statuses) for state in STATES}
    head = f"{len(statuses)} runs: {counts['done']} done, {counts['resume']} to resume, {counts['start']} to start"
    if counts["changed"]:
        head += f", {counts['changed']} made with other settings"
    lines = [head]
    for status in statuses:
        if status.state == "resume":
            lines.append(f"  resume {status.run.label} from {os.path.basename(status.checkpoint or '')}")
        elif status.state != "done":
            lines.append(f"  {status.state} {status.run.label}")
    return "\n".join(lines)


def changed_runs_error(changed: list[RunStatus]) -> InputError:
    dirs = ", ".join(s.run.output_dir for s in changed)
    return InputError(
        f"{len(changed)} run dir(s) hold a run made with other settings than the recipe's now ({dirs}; the "
        f"settings a run was made with are in its {RUN_META}, and a dir without one holds results the sweep did "
        "not make): give --rerun_changed to run them again with the "
        "recipe's settings (their outputs are replaced), or another --output_dir to keep them"
    )
