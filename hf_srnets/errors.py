"""`InputError`: bad input a user can fix, which scripts report as one line instead of a traceback; `run_script`,
the scripts' entry point that does so, for an `InputError` and for an OS error on a path the user chose (a read-only
or full disk, a file where a folder must be: `os_error_message`); `naming_path`, around a write, so that a full disk met
by it (a plain write, safetensors, torch.save) is reported naming the path written; `json_object_option`, the
mapping a JSON-valued option gives (`--loss_options`), refusing a key given twice as config files do."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import logging
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

DEBUG_ENV = "SRNETS_DEBUG"  # SRNETS_DEBUG=1: user errors keep their traceback too
USER_ERROR_STATUS = 2  # argparse's status for a bad command line


class InputError(ValueError):
    """A bad file, option, model path or output dir: the message names the problem and the fix.

    The scripts print it as one line, ``error: <message>``, and exit with status 2; an unexpected exception keeps its
    traceback. It subclasses `ValueError`, so code that catches a `ValueError` from option checks still does.
    """


class MissingInputError(InputError, FileNotFoundError):
    """A file or directory the user named does not exist (still a `FileNotFoundError` to code that catches one)."""


class DuplicateJsonKeyError(ValueError):
    """A key given twice in one JSON object (`json` would silently keep the last value)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def unique_json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`json`'s `object_pairs_hook`: the object as a dict, or `DuplicateJsonKeyError` for a key given twice."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise DuplicateJsonKeyError(key)
        seen.add(key)
    return dict(pairs)


def json_object_option(value: Any, option: str, example: str) -> dict[str, Any] | None:
    """The mapping an option gives as JSON text (`--loss_options '{"focal_gamma": 2}'`) or, from a config file, as a
    mapping; None for None. Anything else (not JSON, a list, a string, a key given twice, which config files refuse
    too and `json` would resolve silently to the last value) is one `InputError` line naming `option` and `example`,
    a valid value."""
    if value is None or isinstance(value, dict):
        return value
    fix = f"give one JSON object, each key once, e.g. {option} '{example}'"
    if not isinstance(value, str):
        raise InputError(f"{option} must be a mapping of option names to values, got {value!r}: {fix}")
    try:
        parsed = json.loads(value, object_pairs_hook=unique_json_object)
    except DuplicateJsonKeyError as err:
        raise InputError(
            f"{option}: key {err.key!r} is given twice, and only the last value would count: {fix}"
        ) from None
    except json.JSONDecodeError as err:
        raise InputError(f"{option} must be a JSON object, but it is not valid JSON ({err}): {fix}") from None
    if not isinstance(parsed, dict):
        raise InputError(f"{option} must be a JSON object, got {value}: {fix}")
    return parsed


def check_input_file(path: str | os.PathLike, what: str) -> None:
    """Raise `MissingInputError` (`<what> not found: PATH`) when nothing is at `path`, `InputError` when a folder
    is: `what` names the file in the message ("Data file", "Predictions file", "config file")."""
    if os.path.isdir(path):
        raise InputError(f"{what} {os.fspath(path)} is a folder, not a file: give the path of the file in it")
    if not os.path.isfile(path):
        raise MissingInputError(f"{what} not found: {os.fspath(path)}")


class InputTypeError(InputError, TypeError):
    """An argument of the wrong type (a str for a number, None for a model): still a `TypeError` to code that
    catches one."""


def short_repr(value: Any, limit: int = 80) -> str:
    """`repr(value)`, cut to `limit` characters for a message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def wrong_type(where: str, name: str, expected: str, value: Any, fix: str) -> InputTypeError:
    """`where: name must be <expected>, got <type> <value>: <fix>`, for the public API's argument checks."""
    return InputTypeError(f"{where}: {name} must be {expected}, got {type(value).__name__} {short_repr(value)}: {fix}")


def check_model_argument(model: Any, where: str) -> None:
    """Raise `InputTypeError` unless `model` is a torch module (a path or None is named, with the fix)."""
    from torch import nn

    if isinstance(model, nn.Module):
        return
    hint = (
        ": load it first, e.g. AutoModelForSequenceClassification.from_pretrained(path), and pass the model"
        if isinstance(model, (str, os.PathLike))
        else ""
    )
    raise InputTypeError(
        f"{where}: model must be a torch nn.Module (a transformers model), got {type(model).__name__} "
        f"{short_repr(model)}{hint}"
    )


def check_plain_model_argument(model: Any, where: str) -> None:
    """`check_model_argument`, and refuse an `SRNetModel` (masks still apart from the weights) with the fix."""
    check_model_argument(model, where)
    if callable(getattr(model, "merge_and_unload", None)) and hasattr(model, "srnet_config"):
        raise InputTypeError(
            f"{where}: model must be a plain transformers model, got an SRNetModel: merge its masks first "
            "(model = srnet.merge_and_unload()), or save the masks alone with srnet.save_pretrained(directory)"
        )


def check_path_argument(value: Any, where: str, name: str, fix: str) -> None:
    """Raise `InputTypeError` unless `value` is a path (`str` or `os.PathLike`)."""
    if not isinstance(value, (str, os.PathLike)):
        raise wrong_type(where, name, "a path (str or os.PathLike)", value, fix)


def check_bool_argument(value: Any, where: str, name: str) -> None:
    """Raise `InputTypeError` unless `value` is a bool (a string such as "no" would count as true)."""
    if not isinstance(value, bool):
        raise wrong_type(where, name, "True or False", value, f"pass {name}=True or {name}=False")


def check_subclass_argument(value: Any, base: type, where: str) -> None:
    """Raise `InputTypeError` unless `value` is a subclass of `base` (a registry decorator's argument)."""
    if not (isinstance(value, type) and issubclass(value, base)):
        raise wrong_type(
            where, "its argument", f"a subclass of {base.__name__}", value,
            f"decorate the class: @{where} above class MyClass({base.__name__})",
        )  # fmt: skip


# the plain field types `check_field_types` checks (an int is a float; a bool is no number)
_PLAIN_TYPES: dict[str, tuple[type, ...]] = {
    "float": (float, int),
    "int": (int,),
    "bool": (bool,),
    "str": (str,),
    "None": (type(None),),
}


def check_field_types(instance: Any, names: Iterable[str] | None = None) -> None:
    """Raise `InputTypeError` naming the field if a dataclass field typed with plain types (`float | None`, `int`,
    `bool`, `str`) holds a value of another type (e.g. `sparsity="0.5"`); other fields are not checked, and with
    `names` only those fields."""
    wanted = None if names is None else set(names)
    for f in dataclasses.fields(instance):
        if wanted is not None and f.name not in wanted:
            continue
        spelled = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
        types = [part.strip() for part in spelled.split("|")]
        if not all(t in _PLAIN_TYPES for t in types):
            continue
        value = getattr(instance, f.name)
        allowed = tuple(t for name in types for t in _PLAIN_TYPES[name])
        if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
            raise InputTypeError(
                f"{type(instance).__name__}: {f.name} must be {' or '.join(types)}, got {type(value).__name__} "
                f"{value!r}: pass "
                + (f"e.g. {f.name}={f.default!r}" if f.default is not dataclasses.MISSING else f"a {types[0]}")
            )


# OS errors about a path the user chose (permissions, a full disk, a file in the way), not about a bug: errno -> fix;
# {out} is what the command writes into (`run_script`'s `output`: "--output_dir" for most scripts)
_OS_ERROR_FIXES = {
    errno.EACCES: "fix its permissions, or choose a writable {out}",
    errno.EPERM: "fix its permissions, or choose a writable {out}",
    errno.EROFS: "the disk is read-only: choose {an}{out} on a writable disk",
    errno.ENOSPC: "the disk is full: free some space, or choose {an}{out} on another disk",
    errno.EDQUOT: "the disk quota is used up: free some space, or choose {an}{out} on another disk",
    errno.ENOTDIR: "a part of that path is a file, not a folder: choose another {out}",
    errno.EEXIST: "a file is in the way of a folder: move it, or choose another {out}",
    errno.EISDIR: "a folder is in the way of a file: move it, or choose another {out}",
}
OUTPUT_DIR_OPTION = "--output_dir"


_RUST_OS_ERROR = re.compile(r"\(os error (\d+)\)")  # how Rust's std::io::Error ends its message


def os_error_message(err: OSError, output: str = OUTPUT_DIR_OPTION) -> str | None:
    """The one-line message for an OS error a user can fix (`_OS_ERROR_FIXES`), naming the path; None for others.
    `output` names what the command writes into, in the fix ("--output_dir", "copy of the experiment folder")."""
    template = _OS_ERROR_FIXES.get(err.errno)  # type: ignore[arg-type]
    if template is None:
        return None
    fix = template.format(out=output, an="an " if output.startswith("-") or output[0] in "aeiou" else "a ")
    reason = f"{err.strerror or os.strerror(err.errno)} (errno {err.errno}, {errno.errorcode.get(err.errno, '?')})"
    where = f"cannot write {err.filename}" if err.filename is not None else "cannot write the outputs"
    return f"{where}: {reason}: {fix}."


def debug_requested() -> bool:
    """Whether `SRNETS_DEBUG` asks for tracebacks of user errors (set and not 0/false/no/empty)."""
    return os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")


def run_script(main: Callable[[], Any], output: str = OUTPUT_DIR_OPTION) -> int:
    """Run a script's `main()`; an `InputError`, or an OS error on a path the user chose (`os_error_message`: a
    read-only or full disk, a file where a folder must be), becomes one line `error: <message>` on stderr and
    status 2.

    Any other exception propagates with its traceback. With `SRNETS_DEBUG=1` those errors propagate too.
    `output` names what the command writes into, for the OS errors' fixes (a command without `--output_dir` says
    what it has). Use as `raise SystemExit(run_script(main))`."""
    try:
        main()
    except InputError as err:
        if debug_requested():
            raise
        return _report(str(err))
    except Exception as err:
        cause = os_error_of(err)
        message = os_error_message(cause, output) if cause is not None else None
        if message is None or debug_requested():
            raise
        return _report(message)
    return 0


def os_error_of(err: BaseException | None) -> OSError | None:
    """The OS error behind `err`: itself, one of its causes, or one a Rust library (safetensors: a full disk while
    saving) spells in its message as `(os error N)`; None if there is none."""
    for _ in range(8):  # a cause chain is short; a cycle must not loop
        if err is None:
            return None
        if isinstance(err, OSError):
            return err
        found = _RUST_OS_ERROR.search(str(err))
        if found:
            code = int(found.group(1))
            return OSError(code, os.strerror(code))
        err = err.__cause__
    return None


# torch.save's C++ writer on a failed write (a full disk): a RuntimeError without the OS error
_TORCH_WRITE_FAILED = re.compile(r"PytorchStreamWriter failed writing|inline_container\.cc.*unexpected pos")
_NEARLY_FULL_BYTES = 1 << 20


def _disk_is_full(path: str) -> bool:
    """Whether the disk that holds `path` (or its nearest existing folder) has less than 1 MiB free."""
    folder = os.path.abspath(path)
    while not os.path.isdir(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    try:
        stat = os.statvfs(folder)
    except (OSError, AttributeError):  # AttributeError: no statvfs (Windows)
        return False
    return stat.f_bavail * stat.f_frsize < _NEARLY_FULL_BYTES


def _write_error(err: BaseException, path: str) -> OSError | None:
    """The OS error behind a failed write to `path` (`os_error_of`; torch's writer failing on a full disk is
    ENOSPC), or None when `err` is not one."""
    cause = os_error_of(err)
    if cause is None and _TORCH_WRITE_FAILED.search(str(err)) and _disk_is_full(path):
        cause = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return cause


@contextlib.contextmanager
def naming_path(path: str | os.PathLike) -> Iterator[None]:
    """Writes to `path` (a file, or a folder saved into): an OS error that names no file (a full disk met by a
    write, by safetensors or by torch.save) is raised again as an `OSError` naming `path`, so `run_script` reports
    it as one line naming where the write failed. Errors naming their file, and other errors, pass unchanged."""
    try:
        yield
    except Exception as err:
        if isinstance(err, OSError) and err.filename is not None:
            raise
        cause = _write_error(err, os.fspath(path))
        if cause is None or cause.errno is None:
            raise
        raise OSError(cause.errno, cause.strerror or os.strerror(cause.errno), os.fspath(path)) from err


def _report(message: str) -> int:
    """Print the one error line and return the user-error status."""
    logging.shutdown()  # flush what the run logged before the error line
    message = " ".join(message.split("\n"))
    print(f"error: {message} (traceback: {DEBUG_ENV}=1)", file=sys.stderr)
    return USER_ERROR_STATUS
