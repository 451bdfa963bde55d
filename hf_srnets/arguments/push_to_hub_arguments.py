"""The command line of `python -m hf_srnets.commands.push_to_hub`, parsing only: `PushToHubArguments` (the run folder,
the Hub repo, what to upload), checked as they are parsed. The uploads are `hf_srnets.publish.hub`."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..errors import InputError, MissingInputError
from .parser import parse_command


@dataclass
class PushToHubArguments:
    """The run folder, the Hub repo to create or update, and what of the run to upload."""

    output_dir: str = field(metadata={"help": "The --output_dir of an hf_srnets run (also the first argument)."})
    repo_id: str = field(metadata={"help": "The Hub repo to create or update, user/name."})
    merged: bool = field(default=False, metadata={"help": "Upload OUTPUT_DIR/merged instead of the masks."})
    full_model: bool = field(
        default=False, metadata={"help": "Upload the model of an unpruned run (no masks) instead of the masks."}
    )
    private: bool = field(default=False, metadata={"help": "Create the repo private."})
    token: str | None = field(default=None, metadata={"help": "A Hub token (default: the one huggingface_hub finds)."})

    def __post_init__(self) -> None:
        if self.merged and self.full_model:
            raise InputError("--merged and --full_model upload different things: give one of them")
        check_repo_id(self.repo_id)
        if not os.path.isdir(self.output_dir):
            raise MissingInputError(f"{self.output_dir} does not exist: give the --output_dir of an hf_srnets run")


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


def parse_args(argv: list[str] | None = None, description: str | None = None) -> PushToHubArguments:
    """`PushToHubArguments` from `argv` (default: the command line); the run folder may come first."""
    (args,) = parse_command([PushToHubArguments], argv, first="output_dir", description=description)
    return args
