"""One `run_export.py` run: the model and the output dir checked, the format's optional packages found, then the export
(`hf_srnets.export`) under the output dir's lock."""

from __future__ import annotations

import contextlib
import os
from typing import Any

from ..arguments.export_arguments import ExportArguments
from ..compact.loading import check_model_path
from ..errors import InputError
from ..export import EXPORT_FORMATS
from ..training.output_dir import acquire_lock


def check_output_dir(args: ExportArguments) -> None:
    """Refuse an --output_dir that is the model's own folder (by its real path: a link to it is the folder), or that
    holds files, unless --overwrite_output_dir."""
    if os.path.realpath(args.output_dir) == os.path.realpath(args.model_dir):
        same = "" if os.path.abspath(args.output_dir) == os.path.abspath(args.model_dir) else " (through a link)"
        raise InputError(
            f"--output_dir {args.output_dir} is the model's own folder{same}: the export would overwrite the model it "
            "reads; choose another --output_dir."
        )
    if args.overwrite_output_dir or not os.path.isdir(args.output_dir):
        return
    if [name for name in os.listdir(args.output_dir) if not name.startswith(".")]:  # hidden: the lock
        raise InputError(
            f"--output_dir {args.output_dir} is not empty: use another --output_dir, or --overwrite_output_dir true."
        )


def export(args: ExportArguments) -> dict[str, Any]:
    """The export `args` ask for, by its registered format (`hf_srnets.export.formats`); its report."""
    return EXPORT_FORMATS[args.format].export(args.model_dir, args.output_dir, **args.format_options)


def run_export(args: ExportArguments) -> dict[str, Any]:
    """Export the model `args` name under the output dir's lock (the one training runs take); return
    `export_report.json`'s content. The model, the output dir and the format's packages are checked before anything
    is written; a failed export leaves no empty folder it made."""
    check_model_path(args.model_dir, flag="model_dir")
    check_output_dir(args)
    EXPORT_FORMATS[args.format].require()  # a missing optional package is refused before anything is written
    created = not os.path.exists(args.output_dir)
    lock = acquire_lock(args.output_dir)  # one writer per dir; it makes the dir
    try:
        return export(args)
    finally:
        lock.release()
        if created:
            remove_if_empty(args.output_dir)


def remove_if_empty(folder: str) -> None:
    """Remove `folder` if nothing is in it: a failed export leaves no empty folder it made."""
    with contextlib.suppress(OSError):  # not empty: the export's files, or the lock of a run that came since
        os.rmdir(folder)
