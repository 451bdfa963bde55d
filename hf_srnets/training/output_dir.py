"""One run per output dir: refuse to mix runs, clear a reused dir on request, and lock it while a run writes.

The rules follow the `Trainer` convention users know from `run_glue.py`:

* A fresh or empty `--output_dir` is used as is.
* A dir that is not empty is refused, unless `--overwrite_output_dir` (first delete what an hf_srnets run writes
  there) or `--resume_from_checkpoint` (continue the run that is there; nothing is deleted).
* `--overwrite_output_dir` deletes only the files and folders an hf_srnets script makes (`run_files.RUN_OUTPUTS`:
  model and masks, `merged/`, `early_start/`, results, `eval_predictions/`, card, the bias-model cache,
  `run_attack.py`'s `attack_*.jsonl` and `attack_results.json`, `run_bias_model.py`'s `bias_*.jsonl` and
  `bias_report.json`, ...) and the Trainer's checkpoints: a `checkpoint-<step>` folder (digits only) all of whose
  entries are files a checkpoint holds (`is_checkpoint`), complete or cut short while saving, and the Trainer's
  TensorBoard `runs/` if every file under it is an event file (`run_files.LOGGING_FILES`). Anything else (a
  user's notes, configs, other runs' sub-folders, `checkpoint-notes/`, a `checkpoint-500/` holding a file a
  checkpoint does not, a `runs/` holding a user's file) stays and is listed in the log.
* It refuses, before deleting anything, to delete a file the run reads (`check_reads_kept`): one that lies in
  what it deletes (e.g. `--model_name_or_path OUT/checkpoint-500` with `--output_dir OUT`) or an input that is the
  output dir itself (`--model_name_or_path OUT`), paths compared once resolved (relative, absolute, symbolic
  links). A hard link to a deleted file elsewhere keeps the file: only its name in the output dir goes.
* A checkpoint is complete once it holds `trainer_state.json`, which the Trainer writes last. A run stopped while
  saving leaves one without it: the refusal of a reused dir points to the last complete checkpoint, and
  `--resume_from_checkpoint` refuses an incomplete one by name.
* Hidden entries (`.git`, `.gitattributes`, the lock file) never make a dir "not empty" and are never deleted.

While a run is on, its main process holds an exclusive lock on `<output_dir>/.hf_srnets.lock`, a small JSON file
naming the pid, host, start time and command of the run. A second run on the same dir fails at start, naming the
first. The lock is an OS file lock (`fcntl.flock`), so the kernel releases it when the process dies, however it
dies: a lock file left behind by a crashed run does not block the next one. Where file locks are not available
(Windows, some network file systems) the lock is the file's existence; a lock left by a dead process on this host
is then taken over, and one from another host must be deleted by hand (the error says which file).

Under `accelerate launch` / `torchrun` every process enters `prepare_output_dir`; only the main process checks,
locks and clears, and all processes learn its outcome (`all_gather_object`), so they all fail together with the
same message, or all go on once the dir is ready.

A sweep hands a run dir's lock to the run it starts there (`handing_over`): it takes the lock, records the run, and
keeps holding it while the child process runs; the child finds the handover in its environment (`LOCK_HANDOVER_ENV`:
the dir and the lock's token, the lock file naming its parent's pid) and runs under its parent's lock instead of
taking its own. No other run can take the dir between the sweep's check and the run's start. The child inherits the
lock's file descriptor (`handed_over_fds`, passed with `pass_fds`), so the OS lock is held while either process lives:
a sweep killed with SIGKILL leaves its run writing under the lock, not in an unlocked dir, and the child records its
pid in the lock file (`run_pid`), so whoever meets the lock learns which process writes there (`orphaned_run_pid`:
a run whose sweep is gone, for which a rerun of the sweep waits).
"""

from __future__ import annotations

import contextlib
import datetime
import fnmatch
import json
import logging
import os
import re
import shutil
import socket
import sys
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..errors import InputError, naming_path, os_error_message
from ..run_files import LOCK_NAME, LOGGING_DIR, LOGGING_FILES, RUN_OUTPUTS, TRAINER_STATE_NAME, is_written_name

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

CHECKPOINT_DIR = re.compile(r"checkpoint-(\d+)")

# A path the run reads: a bare path, or (the flag that names it, its path) so that a refusal names the flag
Read = str | tuple[str, str | None] | None


class OutputDirError(InputError):
    """The output dir cannot be used as asked; the message says why and what to pass instead."""


def _visible_entries(output_dir: str, ignore: Iterable[str] = ()) -> list[str]:
    """The entries of `output_dir` that make it "not empty": not hidden, not in `ignore`."""
    if not os.path.isdir(output_dir):
        return []
    ignored = set(ignore)
    return sorted(name for name in os.listdir(output_dir) if not name.startswith(".") and name not in ignored)


def is_run_output(name: str, output_dir: str | None = None) -> bool:
    """Whether a top-level entry of an output dir is something an hf_srnets run writes (`RUN_OUTPUTS`), or, given
    the `output_dir` to look into, a Trainer checkpoint (`is_checkpoint`). Given `output_dir`, `runs/` counts only
    when it holds nothing but TensorBoard's event files (`foreign_logging_files`)."""
    if CHECKPOINT_DIR.fullmatch(name):
        return output_dir is not None and is_checkpoint(os.path.join(output_dir, name))
    if name == LOGGING_DIR and output_dir is not None:
        return not foreign_logging_files(os.path.join(output_dir, name))
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in RUN_OUTPUTS)


def foreign_logging_files(path: str) -> list[str]:
    """The entries under the logging dir `path` (`runs/`) that the Trainer's TensorBoard logging does not write
    (`LOGGING_FILES`; symbolic links and hidden files included), relative to `path`. `path` itself a symbolic link
    or a file is foreign as a whole (`["."]`)."""
    if os.path.islink(path) or not os.path.isdir(path):
        return ["."]
    foreign = []
    for root, dirs, files in os.walk(path):
        for name in [*files, *(d for d in dirs if os.path.islink(os.path.join(root, d)))]:
            entry = os.path.join(root, name)
            if os.path.islink(entry) or not any(fnmatch.fnmatchcase(name, p) for p in LOGGING_FILES):
                foreign.append(os.path.relpath(entry, path))
    return sorted(foreign)


def is_checkpoint(path: str) -> bool:
    """Whether `path` is a folder a Trainer wrote as a checkpoint: named `checkpoint-<step>` and holding only files
    a checkpoint holds (hidden ones included), complete or not. A folder holding anything else is a user's."""
    if not CHECKPOINT_DIR.fullmatch(os.path.basename(os.path.normpath(path))):
        return False
    if os.path.islink(path) or not os.path.isdir(path):
        return False
    return all(is_written_name(name) for name in os.listdir(path))


def is_complete_checkpoint(path: str) -> bool:
    """A checkpoint whose saving finished: it holds a whole `trainer_state.json`, which the Trainer writes last (and
    not atomically: a run killed while writing it leaves an empty or cut file, which does not parse)."""
    try:
        with open(os.path.join(path, TRAINER_STATE_NAME), encoding="utf-8") as f:
            return isinstance(json.load(f), dict)
    except (OSError, ValueError):
        return False


def run_outputs(output_dir: str, ignore: Iterable[str] = ()) -> list[str]:
    """The top-level entries of `output_dir` (but `ignore`) that an hf_srnets run writes."""
    return [name for name in _visible_entries(output_dir, ignore) if is_run_output(name, output_dir)]


def is_inside(path: str, directory: str) -> bool:
    """Whether `path` is `directory` or lies under it (symbolic links resolved)."""
    path, directory = os.path.realpath(path), os.path.realpath(directory)
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _flagged(reads: Iterable[Read]) -> list[tuple[str, str]]:
    """Each existing path of `reads` as (how a message names it: "--flag path", or the bare path; the path)."""
    pairs = [read if isinstance(read, tuple) else ("", read) for read in reads]
    return [(f"{flag} {path}" if flag else path, path) for flag, path in pairs if path and os.path.exists(path)]


def _same_dir(path: str, directory: str) -> bool:
    """Whether `path` is the folder `directory`, however reached (relative, through symbolic links, a bind mount)."""
    if os.path.realpath(path) == os.path.realpath(directory):
        return True
    return os.path.isdir(path) and os.path.isdir(directory) and os.path.samefile(path, directory)


def check_reads_kept(output_dir: str, doomed: list[str], reads: Iterable[Read]) -> None:
    """Raise `OutputDirError` when clearing the `doomed` top-level entries of `output_dir` would delete a path the
    run reads: the output dir itself, or a path in (or through a symbolic link to) a doomed entry. A hard link to a
    doomed file elsewhere is kept: deleting one name of a file leaves its other names."""
    if not doomed:
        return
    for named, path in _flagged(reads):
        if _same_dir(path, output_dir):
            raise OutputDirError(
                f"{named} is the output dir that --overwrite_output_dir would clear (it would delete "
                f"{_short_list(doomed)} there before the run reads them): write to another --output_dir."
            )
        entry = next((e for e in (os.path.join(output_dir, d) for d in doomed) if is_inside(path, e)), None)
        if entry is not None:
            where = "" if os.path.realpath(path) == os.path.realpath(entry) else f" (it lies in {entry})"
            raise OutputDirError(
                f"--overwrite_output_dir would delete {named}, which this run reads{where}. Write to another "
                f"--output_dir, or move {path} out of {output_dir} first."
            )


def _step(path: str) -> int:
    return int(CHECKPOINT_DIR.fullmatch(os.path.basename(os.path.normpath(path))).group(1))


def _checkpoints(output_dir: str) -> list[str]:
    """The `checkpoint-<step>` folders of `output_dir`, by step."""
    paths = [os.path.join(output_dir, name) for name in _visible_entries(output_dir) if CHECKPOINT_DIR.fullmatch(name)]
    return sorted((path for path in paths if os.path.isdir(path)), key=_step)


def last_complete_checkpoint(output_dir: str) -> str | None:
    """The `checkpoint-<step>` of `output_dir` with the highest step whose saving finished, or None."""
    complete = [path for path in _checkpoints(output_dir) if is_complete_checkpoint(path)]
    return complete[-1] if complete else None


def _incomplete_note(output_dir: str) -> str:
    """Names the checkpoints past the last complete one that a run stopped while saving (trainer_state.json cut)."""
    last = last_complete_checkpoint(output_dir)
    after = _step(last) if last else -1
    cut = [os.path.basename(p) for p in _checkpoints(output_dir) if _step(p) > after and not is_complete_checkpoint(p)]
    if not cut:
        return ""
    return f" ({_short_list(cut)}: incomplete, no whole {TRAINER_STATE_NAME}, cut short while saving)"


def check_resume_checkpoint(resume: str) -> None:
    """Refuse a `--resume_from_checkpoint` that is not a folder or whose saving did not finish, naming the last
    complete checkpoint beside it."""
    if not os.path.isdir(resume):
        raise OutputDirError(
            f"--resume_from_checkpoint {resume} is not a directory: pass a checkpoint-N folder written by an "
            "earlier run with --save_strategy steps|epoch."
        )
    if is_complete_checkpoint(resume):
        return
    last = last_complete_checkpoint(os.path.dirname(os.path.normpath(resume)))
    fix = f"resume from {last}, the last complete checkpoint" if last else "start the run again"
    raise OutputDirError(
        f"--resume_from_checkpoint {resume} is incomplete: it has no whole {TRAINER_STATE_NAME} (the Trainer writes it "
        f"last, so the run was stopped while saving this checkpoint): {fix}."
    )


def _short_list(names: list[str], limit: int = 8) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def check_output_dir(
    output_dir: str,
    *,
    overwrite: bool,
    resume: str | None = None,
    reads: Iterable[Read] = (),
    ignore: Iterable[str] = (),
) -> None:
    """Raise `OutputDirError` unless a run may write to `output_dir` with these flags. Reads only.

    `reads` are the paths the run reads (model, masks, prediction files), bare or as (flag, path): `overwrite` must
    not delete them, nor clear an output dir that is one of them (`check_reads_kept`).
    `ignore`: top-level names that neither make the dir "not empty" nor are deleted (a script's own cache folder).
    """
    if resume is not None:
        check_resume_checkpoint(resume)
    entries = _visible_entries(output_dir, ignore)
    if not entries:
        return
    if overwrite:
        if resume is not None and is_inside(resume, output_dir):
            raise OutputDirError(
                f"--overwrite_output_dir would delete {resume}, the checkpoint --resume_from_checkpoint continues "
                "from: drop one of the two flags (resume keeps the dir as it is)."
            )
        check_reads_kept(output_dir, run_outputs(output_dir, ignore), reads)
        return
    if resume is not None:
        if is_inside(resume, output_dir):
            return
        if not run_outputs(output_dir, ignore):
            return
        raise OutputDirError(
            f"--output_dir {output_dir} holds the outputs of another run "
            f"({_short_list(run_outputs(output_dir, ignore))}) "
            f"and --resume_from_checkpoint {resume} is not one of its checkpoints. Pass --overwrite_output_dir to "
            "delete those outputs first, or choose a new --output_dir."
        )
    last = last_complete_checkpoint(output_dir)
    mine = run_outputs(output_dir, ignore)
    what = (
        f"holds the outputs of an earlier run ({_short_list(mine)})"
        if mine
        else f"is not empty ({_short_list(entries)})"
    )
    raise OutputDirError(
        f"--output_dir {output_dir} {what}. A new run there would mix its files with those (and its checkpoints "
        "would replace the old ones). Pass --overwrite_output_dir to delete what an hf_srnets run writes there "
        "first (other files are kept)"
        + (f", --resume_from_checkpoint {last} to continue that run{_incomplete_note(output_dir)}" if last else "")
        + ", or choose a new --output_dir."
    )


def clear_run_outputs(output_dir: str, ignore: Iterable[str] = ()) -> list[str]:
    """Delete what an hf_srnets run writes in `output_dir` (`RUN_OUTPUTS`, checkpoints) but `ignore`; keep anything
    else. Return the names."""
    removed = run_outputs(output_dir, ignore)
    for name in removed:
        path = os.path.join(output_dir, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)
    if removed:
        logger.info(f"--overwrite_output_dir: deleted {_short_list(removed, 20)} from {output_dir}")
    kept = _visible_entries(output_dir, ignore)
    logs = os.path.join(output_dir, LOGGING_DIR)
    if LOGGING_DIR in kept and os.path.isdir(logs) and not os.path.islink(logs):
        foreign = _short_list(foreign_logging_files(logs))
        logger.info(f"--overwrite_output_dir: kept {logs}: besides TensorBoard's event files it holds {foreign}")
    if kept:
        logger.info(f"--overwrite_output_dir: kept {_short_list(kept, 20)} in {output_dir} (not written by hf_srnets)")
    return removed


def _lock_info() -> dict[str, object]:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join([os.path.basename(sys.argv[0]) if sys.argv else "python", *sys.argv[1:]]),
        "token": uuid.uuid4().hex,
    }


def read_lock(output_dir: str) -> dict[str, object] | None:
    """The JSON of `<output_dir>/.hf_srnets.lock`, or None when there is none (or it cannot be read)."""
    try:
        with open(os.path.join(output_dir, LOCK_NAME), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user
        return True
    return True


def lock_holder_words(holder: dict[str, object] | None) -> str:
    """Who holds a lock, in words: its pid, host, start and command, or the run a killed sweep left running."""
    if not holder:
        return "a run that is just starting"
    orphan = orphaned_run_pid(holder)
    if orphan is not None:
        return (
            f"pid {orphan}, a run left writing there by the sweep pid {holder.get('pid')}, which no longer runs; "
            f"started {holder.get('started')}: {holder.get('command')}"
        )
    started = f"started {holder.get('started')}: {holder.get('command')}"
    return f"pid {holder.get('pid')} on host {holder.get('host')}, {started}"


def _locked_error(output_dir: str, holder: dict[str, object] | None) -> OutputDirError:
    path = os.path.join(output_dir, LOCK_NAME)
    return OutputDirError(
        f"Another run is using --output_dir {output_dir} ({lock_holder_words(holder)}). Two runs in one dir "
        f"overwrite each other's masks, results and caches. Wait for it to end, or choose another --output_dir. If "
        f"that process no longer runs, delete {path}."
    )


def orphaned_run_pid(holder: dict[str, object] | None) -> int | None:
    """The pid of the run a sweep handed its lock to, when that run still runs on this host and the sweep does not
    (it was killed: the run goes on, and holds the lock until it ends); else None."""
    if not holder or holder.get("host") != socket.gethostname():
        return None
    pid, run_pid = holder.get("pid"), holder.get("run_pid")
    if not (isinstance(pid, int) and isinstance(run_pid, int)) or _pid_alive(pid) or not _pid_alive(run_pid):
        return None
    return run_pid


@dataclass
class OutputDirLock:
    """An exclusive lock on an output dir, held by this process until `release()` (`handed_over`: held by the parent
    process, which handed it to this one; `release()` leaves it to the parent)."""

    output_dir: str
    info: dict[str, object]
    _fd: int | None = None
    handed_over: bool = False

    @property
    def path(self) -> str:
        return os.path.join(self.output_dir, LOCK_NAME)

    def release(self) -> None:
        """Remove the lock file (if it is still this lock's) and drop the OS lock."""
        if self.handed_over:
            return
        holder = read_lock(self.output_dir)
        if holder is not None and holder.get("token") == self.info["token"]:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.path)
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None


def _flock(output_dir: str, info: dict[str, object]) -> OutputDirLock | None:
    """Take the lock with `fcntl.flock`; None when the file system has no file locks."""
    path = os.path.join(output_dir, LOCK_NAME)
    for _ in range(10):  # the file may be removed by its holder between our open and our flock: retry
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise _locked_error(output_dir, read_lock(output_dir)) from None
        except OSError:  # ENOLCK, EOPNOTSUPP: no file locks here
            os.close(fd)
            return None
        try:
            same_file = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same_file = False
        if not same_file:  # we locked a file its holder had just unlinked
            os.close(fd)
            continue
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(info, indent=2).encode("utf-8"))
        os.fsync(fd)
        return OutputDirLock(output_dir, info, fd)
    raise _locked_error(output_dir, read_lock(output_dir))


def _exclusive_file(output_dir: str, info: dict[str, object]) -> OutputDirLock:
    """The lock as the file's existence (no OS file locks): take over a lock of a dead process on this host."""
    path = os.path.join(output_dir, LOCK_NAME)
    for _ in range(2):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            holder = read_lock(output_dir)
            pid = holder.get("pid") if holder else None
            local = holder and holder.get("host") == socket.gethostname()
            if local and isinstance(pid, int) and not _pid_alive(pid) and orphaned_run_pid(holder) is None:
                logger.warning(f"Removing the stale lock {path} of pid {pid}, which no longer runs")
                with contextlib.suppress(FileNotFoundError):
                    os.remove(path)
                continue
            raise _locked_error(output_dir, holder) from None
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(info, f, indent=2)
        return OutputDirLock(output_dir, info)
    raise _locked_error(output_dir, read_lock(output_dir))


def check_is_folder(output_dir: str) -> None:
    """Raise `OutputDirError` if `output_dir`, or a folder above it, is a file: a run writes a folder there."""
    path = os.path.abspath(output_dir)
    while path and not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            return
        path = parent
    if os.path.exists(path) and not os.path.isdir(path):
        what = "is a file" if path == os.path.abspath(output_dir) else f"lies under {path}, which is a file"
        raise OutputDirError(f"--output_dir {output_dir} {what}, not a folder: choose a folder (new or empty).")


LOCK_HANDOVER_ENV = "SRNETS_LOCK_HANDOVER"  # JSON {"output_dir", "token"}: a lock the parent process hands over


_HANDED_OVER_FDS: list[int] = []  # the OS-lock file descriptors of the locks `handing_over` hands over now


@contextlib.contextmanager
def handing_over(lock: OutputDirLock) -> Iterator[None]:
    """While the block runs, child processes started from this one (a sweep's run) run under `lock`: their
    `acquire_lock` of its dir takes it over instead of being refused. The lock stays this process's; a child started
    with `pass_fds=handed_over_fds()` holds its OS lock too, so the lock outlives this process if it is killed."""
    before = os.environ.get(LOCK_HANDOVER_ENV)
    handover = {"output_dir": os.path.realpath(lock.output_dir), "token": lock.info["token"]}
    os.environ[LOCK_HANDOVER_ENV] = json.dumps(handover)
    fds = [lock._fd] if lock._fd is not None else []
    _HANDED_OVER_FDS.extend(fds)
    try:
        yield
    finally:
        for fd in fds:
            _HANDED_OVER_FDS.remove(fd)
        if before is None:
            os.environ.pop(LOCK_HANDOVER_ENV, None)
        else:
            os.environ[LOCK_HANDOVER_ENV] = before


def handed_over_fds() -> tuple[int, ...]:
    """The file descriptors a child process must inherit (`subprocess.run(..., pass_fds=...)`) to hold the OS lock
    of what `handing_over` hands it."""
    return tuple(_HANDED_OVER_FDS)


def _this_or_parent() -> tuple[int, int]:
    return os.getpid(), os.getppid()


def _handed_over_lock(output_dir: str) -> OutputDirLock | None:
    """The lock of `output_dir` that the parent process (or this one) holds and handed over (`handing_over`), or
    None."""
    try:
        handover = json.loads(os.environ.get(LOCK_HANDOVER_ENV) or "{}")
    except ValueError:
        return None
    if not isinstance(handover, dict) or handover.get("output_dir") != os.path.realpath(output_dir):
        return None
    holder = read_lock(output_dir)
    # the holder is the parent (a sweep's child run) or this process itself (a runner called in-process)
    if holder is None or holder.get("token") != handover.get("token") or holder.get("pid") not in _this_or_parent():
        return None
    if holder.get("pid") != os.getpid():  # a child run: the lock file names it, for whoever meets the lock
        holder = {**holder, "run_pid": os.getpid()}
        _rewrite_lock(output_dir, holder)
    return OutputDirLock(output_dir, holder, handed_over=True)


def _rewrite_lock(output_dir: str, info: dict[str, object]) -> None:
    """Rewrite the lock file in place (the same file, so the OS lock on it stays)."""
    with contextlib.suppress(OSError), open(os.path.join(output_dir, LOCK_NAME), "r+", encoding="utf-8") as f:
        f.truncate(0)
        json.dump(info, f, indent=2)


def acquire_lock(output_dir: str) -> OutputDirLock:
    """Create `output_dir` if needed and lock it; raise `OutputDirError` naming the holder if another run has it, or
    naming the dir if it cannot be a run's folder (a regular file, a read-only or full disk). A lock the parent
    process (or this one) holds and handed over (`handing_over`) is taken over."""
    check_is_folder(output_dir)
    handed = _handed_over_lock(output_dir) if os.path.isdir(output_dir) else None
    if handed is not None:
        return handed
    try:
        os.makedirs(output_dir, exist_ok=True)
        info = _lock_info()
        with naming_path(os.path.join(output_dir, LOCK_NAME)):  # a full disk met while writing it names the lock
            lock = _flock(output_dir, info) if fcntl is not None else None
            return lock if lock is not None else _exclusive_file(output_dir, info)
    except OSError as err:
        message = os_error_message(err)
        if message is None:
            raise
        raise OutputDirError(f"--output_dir {output_dir}: {message}") from err


def _agree(error: str | None) -> str | None:
    """Across the processes of a distributed run: the first error any of them met, else None."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return error
    errors: list[str | None] = [None] * dist.get_world_size()
    dist.all_gather_object(errors, error)
    return next((e for e in errors if e), None)


def _barrier() -> None:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        dist.barrier()


@contextlib.contextmanager
def prepare_output_dir(
    output_dir: str,
    *,
    overwrite: bool,
    resume: str | None,
    is_main_process: bool,
    reads: Iterable[Read] = (),
    ignore: Iterable[str] = (),
) -> Iterator[OutputDirLock | None]:
    """Make `output_dir` ready for one run and hold its lock for the duration of the `with` block.

    The main process (`is_main_process`, e.g. `args.should_save`) locks the dir, checks it (`check_output_dir`)
    and, with `overwrite`, deletes what earlier runs wrote (`clear_run_outputs`). In a distributed run all
    processes must enter: they raise the main process's `OutputDirError` too, and wait until the dir is cleared.
    `ignore`: top-level names that are neither checked nor deleted (`check_output_dir`). Yields the lock (None on
    the other processes).
    """
    ignore = tuple(ignore)
    error: str | None = None
    lock: OutputDirLock | None = None
    if is_main_process:
        try:
            lock = acquire_lock(output_dir)
            check_output_dir(output_dir, overwrite=overwrite, resume=resume, reads=reads, ignore=ignore)
        except OutputDirError as err:
            error = str(err)
    error = _agree(error)
    if error is not None:
        if lock is not None:
            lock.release()
        raise OutputDirError(error)
    try:
        if lock is not None and overwrite:
            clear_run_outputs(output_dir, ignore)
        _barrier()
        yield lock
    finally:
        if lock is not None:
            lock.release()
