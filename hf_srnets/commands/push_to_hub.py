"""Upload an hf_srnets output dir to the Hub: the mask repo, the merged checkpoint or an unpruned run's model.

    python -m hf_srnets.commands.push_to_hub OUTPUT_DIR --repo_id user/my-srnet                 # the mask repo
    python -m hf_srnets.commands.push_to_hub OUTPUT_DIR --repo_id user/my-srnet-merged --merged  # OUTPUT_DIR/merged
    python -m hf_srnets.commands.push_to_hub OUTPUT_DIR --repo_id user/my-model --full_model     # an unpruned model

A run that could not push at its end (offline, no token) prints these commands to retry
(`hf_srnets.masking.hub_upload.retry_command`); the uploads themselves are `hf_srnets.publish.hub`.

`main` parses the options (`hf_srnets.arguments.push_to_hub_arguments`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..arguments.push_to_hub_arguments import parse_args
from ..errors import run_script
from ..masking.hub_upload import HubUploadError
from ..publish.hub import push_full_model, push_masks, push_merged


def main(argv: Sequence[str] | None = None) -> str:
    """Upload what the flags say and print (and return) the commit URL."""
    args = parse_args(None if argv is None else list(argv), description=__doc__)
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
