"""Low-level Hub uploads: create a repo and upload a folder, with an error that says how to retry, and a
portable `srnet_config.json` (no local paths). Used by `SRNetModel.push_to_hub` and `hf_srnets.publish.hub`."""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Sequence

from ..pruning import CONFIG_NAME
from ..resources.model_location import is_local_path

# Fields of srnet_config.json that may hold a local path.
PATH_FIELDS = ("base_model_name_or_path",)
# Directory names that say nothing on their own: the parent's name is kept with them.
_GENERIC_DIR = re.compile(r"^(model|models|merged|early_start|out|output|outputs|final|best|checkpoint-\d+)$")


class HubUploadError(RuntimeError):
    """An upload failed; the message says what to run to retry. `retry_commands` lists those commands."""

    def __init__(self, message: str, retry_commands: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.retry_commands = list(retry_commands)


def retry_command(
    output_dir: str, repo_id: str, merged: bool = False, *, full_model: bool = False, private: bool | None = None
) -> str:
    """The `python -m hf_srnets.commands.push_to_hub` command that redoes one upload (never with the token)."""
    where = f"{shlex.quote(str(output_dir))} --repo_id {shlex.quote(repo_id)}"
    command = f"python -m hf_srnets.commands.push_to_hub {where}"
    return (
        command
        + (" --merged" if merged else "")
        + (" --full_model" if full_model else "")
        + (" --private" if private else "")
    )


def portable_path(value: str) -> str:
    """A local path as a name that means something elsewhere: its directory name (with the parent's when the
    name is generic, e.g. `.../bert-mnli/checkpoint-500` -> `bert-mnli/checkpoint-500`). Hub ids stay as they are.
    """
    if not is_local_path(value):
        return value
    parts = [p for p in os.path.abspath(os.path.expanduser(value)).replace(os.sep, "/").split("/") if p]
    if not parts:
        return value
    if _GENERIC_DIR.match(parts[-1]) and len(parts) > 1:
        return f"{parts[-2]}/{parts[-1]}"
    return parts[-1]


def make_config_portable(directory: str) -> None:
    """Rewrite `directory/srnet_config.json` so that no field holds a local path (for an upload copy)."""
    path = os.path.join(directory, CONFIG_NAME)
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    changed = False
    for key in PATH_FIELDS:
        value = config.get(key)
        if isinstance(value, str) and portable_path(value) != value:
            config[key] = portable_path(value)
            changed = True
    if changed:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(config, f, indent=2, sort_keys=True)
            f.write("\n")


def upload_folder(
    folder: str,
    repo_id: str,
    files: Sequence[str] | None = None,
    *,
    token: str | None = None,
    private: bool | None = None,
    commit_message: str = "Upload SRNet",
    retry: str | None = None,
    local_dir: str | None = None,
) -> str:
    """Create `repo_id` if needed and upload `files` (all of `folder` when None). Raise `HubUploadError`.

    `local_dir` names the run directory in the error when `folder` is a staging copy of it.
    """
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, private=private, exist_ok=True, repo_type="model")
        info = api.upload_folder(
            repo_id=repo_id,
            folder_path=folder,
            allow_patterns=list(files) if files is not None else None,
            commit_message=commit_message,
        )
    except Exception as err:  # network, auth and permission errors alike: keep the local files, say how to retry
        raise HubUploadError(
            f"Upload of {local_dir or folder} to the Hub repo {repo_id!r} failed ({type(err).__name__}: {err}). "
            f"The local files are complete. To retry: {retry or retry_command(local_dir or folder, repo_id)}",
            [retry or retry_command(local_dir or folder, repo_id)],
        ) from err
    return str(info)
