"""Load task splits from the Hub, a data directory or single files into one canonical schema
(`hf_srnets.data.canonical`), read by `hf_srnets.data.file_readers`.

Every loaded split has the columns `id` (str, unique), `sentence1`, `sentence2` (absent for
single-text tasks) and `label` (int, the position in the set's label names), plus any extra columns of
the source (e.g. HANS `heuristic`, `subcase`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

from datasets import Dataset

from ..errors import MissingInputError
from .canonical import canonicalize, check_parallel_labels
from .file_readers import folder_format, read_formatted_rows
from .tasks import FileFormat, SplitSource

logger = logging.getLogger(__name__)


def local_source_path(source: SplitSource, data_dir: str | None) -> str | None:
    """The first of `source.local_paths` under `data_dir` that holds the split (a file, or a folder for a format of
    parallel files), or None."""
    if data_dir is None:
        return None
    for rel in source.local_paths:
        path = os.path.join(data_dir, rel)
        parallel = source.file_format is not None and bool(source.file_format.parallel_files)
        if os.path.isdir(path) if parallel else os.path.isfile(path):
            return path
    return None


def _labelled_rows(
    path: str,
    file_format: FileFormat | None,
    label_names: Sequence[str],
    aliases: dict[str, str] | None,
    options: dict[str, Any],
) -> list[dict[str, Any]]:
    """`read_formatted_rows`, with the label words of parallel files checked where their file and line are known."""
    rows = read_formatted_rows(path, file_format)
    parallel = folder_format(path, file_format)
    if parallel is not None:
        id_names, excluded = options.get("id_label_names"), options.get("excluded_labels", ())
        check_parallel_labels(
            rows, path, parallel, label_names, aliases, id_label_names=id_names, excluded_labels=excluded
        )
    return rows


def load_source(
    source: SplitSource,
    label_names: Sequence[str],
    *,
    name: str,
    data_dir: str | None = None,
    aliases: dict[str, str] | None = None,
    cache_dir: str | None = None,
    **options: Any,
) -> Dataset:
    """Load a split from `data_dir` (first existing of `source.local_paths`) or else from the Hub.

    `options` go to `canonicalize` (`text_fields`, `skip_incomplete_rows`, `id_label_names`, `excluded_labels`).
    """
    if data_dir is not None:
        path = local_source_path(source, data_dir)
        if path is not None:
            rows = _labelled_rows(path, source.file_format, label_names, aliases, options)
            return canonicalize(rows, label_names, name=f"{name} ({path})", aliases=aliases, **options)
        if source.hub_path is None:
            raise MissingInputError(
                f"{name}: none of {list(source.local_paths)} exists under --data_dir {data_dir}; "
                f"pass the file with --train_file/--validation_file/--ood_file."
            )
    if source.hub_path is None:
        raise MissingInputError(
            f"{name} is not on the Hub; pass --data_dir containing one of {list(source.local_paths)}, "
            "or the file itself."
        )
    from datasets import __version__ as datasets_version
    from datasets import load_dataset

    where = ", ".join(str(p) for p in (source.hub_path, source.hub_config, source.hub_split, source.hub_revision) if p)
    try:
        hub = load_dataset(
            source.hub_path,
            source.hub_config,
            split=source.hub_split,
            cache_dir=cache_dir,
            **({"revision": source.hub_revision} if source.hub_revision else {}),
        )
    except Exception as err:  # offline, gated, renamed: all mean "not reachable"
        if "scripts are no longer supported" in str(err):
            raise MissingInputError(
                f"{name}: the Hub repository {source.hub_path} holds only a loading script, which datasets "
                f"{datasets_version} does not run. Pass --data_dir with {list(source.local_paths)} or the file "
                "itself."
            ) from err
        raise MissingInputError(
            f"Could not load {name} from the Hub ({where}): {err}. "
            f"Offline? Pass --data_dir with {list(source.local_paths)} or the files themselves."
        ) from err
    rows = hub.to_list()
    if rows and "label" in rows[0] and hasattr(hub.features.get("label"), "names"):
        names = hub.features["label"].names
        for row in rows:
            row["label"] = names[row["label"]] if 0 <= row["label"] < len(names) else -1
    return canonicalize(rows, label_names, name=name, aliases=aliases, **options)


def load_file(
    path: str,
    label_names: Sequence[str],
    *,
    name: str | None = None,
    aliases: dict[str, str] | None = None,
    file_format: FileFormat | None = None,
    **options: Any,
) -> Dataset:
    """Load one file (or a folder of parallel files, `read_parallel_files`), in `file_format` if given (a task's
    `TaskSpec.file_format`); `options` go to `canonicalize` (e.g. `text_fields=task.text_fields`)."""
    rows = _labelled_rows(path, file_format, label_names, aliases, options)
    return canonicalize(rows, label_names, name=name or path, aliases=aliases, **options)
