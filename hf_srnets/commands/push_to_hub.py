"""Upload an hf_srnets output dir to the Hub: the mask repo, the merged checkpoint or an unpruned run's model.

    python -m hf_srnets.commands.push_to_hub OUTPUT_DIR --repo_id user/my-srnet                 # the mask repo
    python -m hf_srnets.commands.push_to_hub OUTPUT_DIR --repo_id user/my-srnet-merged --merged  # OUTPUT_DIR/merged
    python -m hf_srnets.commands.push_to_hub OUTPUT_DIR --repo_id user/my-model --full_model     # an unpruned model

A run that could not push at its end (offline, no token) prints these commands to retry
(`hf_srnets.masking.hub_upload.retry_command`); the uploads themselves are `hf_srnets.publish.hub`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ..errors import InputError, MissingInputError, run_script
from ..masking.hub_upload import HubUploadError
from ..publish.hub import push_full_model, push_masks, push_merged


def check_repo_id(repo_id: str) -> None:
    """Refuse a `--repo_id` that is no Hub repo id (a local path, say) before uploading: the upload would fail with
    it, and the retry command it prints would repeat it."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError as err:
        raise InputError(
            f"--repo_id {repo_id!r} is not a Hub repo id ({err}): give --repo_id user/name, the Hub repo to create "
            "or update (not a local folder), e.g. your-name/srnet-sst2"
        ) from None


def main(argv: Sequence[str] | None = None) -> str:
    """Upload what the flags say and print (and return) the commit URL."""
    parser = argparse.ArgumentParser(description="Upload an hf_srnets output dir (masks, --merged or --full_model).")
    parser.add_argument("output_dir")
    parser.add_argument("--repo_id", required=True)
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument("--merged", action="store_true", help="upload OUTPUT_DIR/merged instead of the masks")
    kind.add_argument(
        "--full_model", action="store_true", help="upload the model of an unpruned run (no masks) instead"
    )
    parser.add_argument("--private", action="store_true")
    parser.add_argument("--token", default=None)
    args = parser.parse_args(argv)
    check_repo_id(args.repo_id)
    if not os.path.isdir(args.output_dir):  # it was told it held no masks
        raise MissingInputError(f"{args.output_dir} does not exist: give the --output_dir of an hf_srnets run")
    push = push_merged if args.merged else push_full_model if args.full_model else push_masks
    url = push(args.output_dir, args.repo_id, token=args.token, private=args.private or None)
    print(url)
    return url


def script_main() -> None:
    """`main()` as `python -m hf_srnets.commands.push_to_hub` runs it: a failed upload ends in its error lines (what
    failed, the command to retry) and exit status 1, without a traceback."""
    try:
        main()
    except HubUploadError as err:
        print("\n".join(f"error: {line}" for line in str(err).splitlines()), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    raise SystemExit(run_script(script_main))
