"""Share SRNets on the Hub: the mask repo (config + bit-packed masks + card) and, optionally, a merged checkpoint.

Uploads never hold the base weights of a mask repo. When an upload fails (offline, no token, no rights) the
local files stay complete and the error says how to retry:

    python -m hf_srnets.hub OUTPUT_DIR --repo_id user/my-srnet [--merged]
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
from collections.abc import Sequence
from typing import Any

from .masking import CONFIG_NAME, MASKS_NAME

logger = logging.getLogger(__name__)

MERGED_DIR = "merged"
# What a mask repo holds: the adapter itself, its card, the tokenizer, and the run's results.
MASK_REPO_FILES = (
    CONFIG_NAME,
    MASKS_NAME,
    "README.md",
    "all_results.json",
    "sparsity_report.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "merges.txt",
    "vocab.json",
    "spm.model",
)


class HubUploadError(RuntimeError):
    """An upload failed; the message says what to run to retry."""


def mask_repo_files(output_dir: str) -> list[str]:
    """The files of `output_dir` that a mask repo upload sends (never base weights or checkpoints)."""
    if not os.path.isfile(os.path.join(output_dir, MASKS_NAME)):
        raise FileNotFoundError(f"{output_dir} has no {MASKS_NAME}: only mask-training runs make a mask repo")
    return [name for name in MASK_REPO_FILES if os.path.isfile(os.path.join(output_dir, name))]


def retry_command(output_dir: str, repo_id: str, merged: bool = False) -> str:
    return f"python -m hf_srnets.hub {output_dir} --repo_id {repo_id}" + (" --merged" if merged else "")


def upload_folder(
    folder: str,
    repo_id: str,
    files: Sequence[str] | None = None,
    *,
    token: str | None = None,
    private: bool | None = None,
    commit_message: str = "Upload SRNet",
    retry: str | None = None,
) -> str:
    """Create `repo_id` if needed and upload `files` (all of `folder` when None). Raise `HubUploadError`."""
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
            f"Upload of {folder} to the Hub repo {repo_id!r} failed ({type(err).__name__}: {err}). "
            f"The local files are complete. To retry: {retry or retry_command(folder, repo_id)}"
        ) from err
    return str(info)


def push_masks(output_dir: str, repo_id: str, *, token: str | None = None, private: bool | None = None) -> str:
    """Upload a run's mask repo files (`mask_repo_files`) to `repo_id`."""
    return upload_folder(
        output_dir,
        repo_id,
        mask_repo_files(output_dir),
        token=token,
        private=private,
        commit_message="Upload SRNet masks",
        retry=retry_command(output_dir, repo_id),
    )


def save_merged(srnet: Any, output_dir: str, tokenizer: Any = None, card: str | None = None) -> str:
    """Write `output_dir/merged`: a plain transformers checkpoint with the pruned weights set to 0.

    `srnet` is left intact (the merge works on a copy), so the run can go on using it.
    """
    import copy

    merged_dir = os.path.join(output_dir, MERGED_DIR)
    if os.path.isdir(merged_dir):
        shutil.rmtree(merged_dir)
    model = copy.deepcopy(srnet).merge_and_unload()
    model.save_pretrained(merged_dir)
    if tokenizer is not None:
        tokenizer.save_pretrained(merged_dir)
    if card is not None:
        with open(os.path.join(merged_dir, "README.md"), "w", encoding="utf-8") as f:
            f.write(card)
    return merged_dir


def push_merged(output_dir: str, repo_id: str, *, token: str | None = None, private: bool | None = None) -> str:
    """Upload `output_dir/merged` (written by `save_merged`) to `repo_id`."""
    merged_dir = os.path.join(output_dir, MERGED_DIR)
    if not os.path.isfile(os.path.join(merged_dir, "config.json")):
        raise FileNotFoundError(f"No merged checkpoint in {merged_dir}: run with --push_merged (or save_merged) first")
    return upload_folder(
        merged_dir,
        repo_id,
        token=token,
        private=private,
        commit_message="Upload merged SRNet",
        retry=retry_command(output_dir, repo_id, merged=True),
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Upload an hf_srnets output dir (masks, or --merged) to the Hub.")
    parser.add_argument("output_dir")
    parser.add_argument("--repo_id", required=True)
    parser.add_argument("--merged", action="store_true", help="upload OUTPUT_DIR/merged instead of the masks")
    parser.add_argument("--private", action="store_true")
    parser.add_argument("--token", default=None)
    args = parser.parse_args(argv)
    push = push_merged if args.merged else push_masks
    print(push(args.output_dir, args.repo_id, token=args.token, private=args.private or None))


if __name__ == "__main__":
    main()
