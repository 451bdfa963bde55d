"""Hub id or local path? One rule for every name a user gives for a model (`--model_name_or_path`, a base model
recorded in `srnet_config.json`, a card's base model).

A name is a local path when something exists under it (after `~` expansion), or when it can only be a path: it
starts with `.`, `/` or `~`, is absolute, ends with `/`, or has more than one `/` (a Hub id is `name` or
`org/name`). Anything else is a Hub id: `bert-base-uncased`, `textattack/bert-base-uncased-MNLI`. A missing
`./model` or `out/run/merged` is therefore a local path that does not exist (a clear error), never a Hub id to
download.
"""

from __future__ import annotations

import os


def looks_like_path(name: str) -> bool:
    """Whether `name` can only be a local path, not a Hub id (`org/name` or `name`), whether or not it exists."""
    return name.startswith((".", "/", "~")) or os.path.isabs(name) or name.count("/") > 1 or name.endswith("/")


def is_local_path(name: str | os.PathLike) -> bool:
    """Whether `name` names a local file or directory (existing or not) rather than a Hub id (module doc)."""
    name = os.fspath(name)
    return os.path.exists(os.path.expanduser(name)) or looks_like_path(name)
