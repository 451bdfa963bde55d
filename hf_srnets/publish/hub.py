"""Share SRNets on the Hub: the mask repo (config + entropy-coded masks + card) and, optionally, a merged checkpoint.

Uploads never hold the base weights of a mask repo, nor local paths: the uploaded `srnet_config.json` names a
local base model by its directory name (the local file keeps the real path). When an upload fails (offline, no
token, no rights) the local files stay complete and the error says how to retry each upload still to do:

    python -m hf_srnets.commands.push_to_hub OUTPUT_DIR --repo_id user/my-srnet                 # the mask repo
    python -m hf_srnets.commands.push_to_hub OUTPUT_DIR --repo_id user/my-srnet-merged --merged  # OUTPUT_DIR/merged
    python -m hf_srnets.commands.push_to_hub OUTPUT_DIR --repo_id user/my-model --full_model     # an unpruned model
"""

from __future__ import annotations

import fnmatch
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

from ..compact.remote_code import save_pretrained_model
from ..errors import MissingInputError
from ..masking.hub_upload import HubUploadError, make_config_portable, retry_command, upload_folder
from ..pruning import CONFIG_NAME, MASKS_NAME
from ..run_files import (
    CARD_NAME,
    COMPACT_REPORT_NAME,
    MERGED_DIR,
    MODEL_CONFIG_NAME,
    REMOTE_CODE_NAME,
    RESULTS_NAME,
    SPARSITY_REPORT_NAME,
    TOKENIZER_FILES,
    TRAINER_STATE_NAME,
    replaced_file,
    write_json,
)
from ..training.output_dir import is_run_output
from .card import portable_card

logger = logging.getLogger(__name__)

# What a mask repo holds: the adapter itself, its card, the tokenizer, and the run's results.
MASK_REPO_FILES = (CONFIG_NAME, MASKS_NAME, CARD_NAME, RESULTS_NAME, SPARSITY_REPORT_NAME, *TOKENIZER_FILES)
# What the repo of an unpruned run (full fine-tuning) holds: the model, tokenizer, card and results.
# a compact model's modeling file too: its config.json's auto_map names it (a recovery run of a compact model)
FULL_MODEL_PATTERNS = ("*.json", "*.safetensors", "*.txt", "*.model", CARD_NAME, REMOTE_CODE_NAME)


def mask_repo_files(output_dir: str) -> list[str]:
    """The files of `output_dir` that a mask repo upload sends (never base weights or checkpoints)."""
    if not os.path.isfile(os.path.join(output_dir, MASKS_NAME)):
        raise MissingInputError(
            f"{output_dir} has no {MASKS_NAME}: only mask-training runs make a mask repo (an unpruned run's model: "
            "--full_model; a merged checkpoint: --merged)"
        )
    return [name for name in MASK_REPO_FILES if os.path.isfile(os.path.join(output_dir, name))]


def _staged_upload(folder: str, files: Sequence[str], repo_id: str, *, base: str | None = None, **kwargs: Any) -> str:
    """Upload `files` of `folder` from a copy in which nothing names a local path: `srnet_config.json` through
    `make_config_portable`, the card through `model_card.portable_card` (the folder becomes the repo id, a local
    base model its portable name). The local files keep their real paths."""

    with tempfile.TemporaryDirectory() as staging:
        for name in files:
            shutil.copy2(os.path.join(folder, name), os.path.join(staging, name))
        if CONFIG_NAME in files:
            make_config_portable(staging)
        if CARD_NAME in files:
            card_path = os.path.join(staging, CARD_NAME)
            with open(card_path, encoding="utf-8") as f:
                card = portable_card(f.read(), output_dir=folder, repo_id=repo_id, base=base)
            with open(card_path, "w", encoding="utf-8") as f:
                f.write(card)
        return upload_folder(staging, repo_id, files, local_dir=folder, **kwargs)


def _searched_on(output_dir: str) -> str | None:
    path = os.path.join(output_dir, CONFIG_NAME)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f).get("base_model_name_or_path")


def push_masks(output_dir: str, repo_id: str, *, token: str | None = None, private: bool | None = None) -> str:
    """Upload a run's mask repo files (`mask_repo_files`) to `repo_id`, with a portable config and card."""
    return _staged_upload(
        output_dir,
        mask_repo_files(output_dir),
        repo_id,
        base=_searched_on(output_dir),
        token=token,
        private=private,
        commit_message="Upload SRNet masks",
        retry=retry_command(output_dir, repo_id, private=private),
    )


def full_model_files(output_dir: str) -> list[str]:
    """An unpruned run's model, tokenizer, card and results: files matching `FULL_MODEL_PATTERNS` that the run
    wrote (`output_dir.is_run_output`; a user's files are not sent), without `trainer_state.json` (local paths)."""

    if not os.path.isfile(os.path.join(output_dir, MODEL_CONFIG_NAME)):
        raise MissingInputError(f"{output_dir} has no {MODEL_CONFIG_NAME}: not a saved transformers model")
    names = sorted(n for n in os.listdir(output_dir) if os.path.isfile(os.path.join(output_dir, n)))
    return [
        n
        for n in names
        if any(fnmatch.fnmatch(n, p) for p in FULL_MODEL_PATTERNS) and is_run_output(n) and n != TRAINER_STATE_NAME
    ]


def push_full_model(output_dir: str, repo_id: str, *, token: str | None = None, private: bool | None = None) -> str:
    """Upload an unpruned run's model, tokenizer, card and results (`full_model_files`) to `repo_id`."""
    return _staged_upload(
        output_dir,
        full_model_files(output_dir),
        repo_id,
        token=token,
        private=private,
        commit_message="Upload model",
        retry=retry_command(output_dir, repo_id, full_model=True, private=private),
    )


def save_merged(
    srnet: Any,
    output_dir: str,
    tokenizer: Any = None,
    card: str | Callable[[dict[str, Any] | None], str] | None = None,
    *,
    compact: bool = False,
) -> str:
    """Write `output_dir/merged`: a plain transformers checkpoint with the pruned weights set to 0.

    With `compact`, units and heads the masks removed entirely are removed from the weights
    (`SRNetModel.merge_and_unload(compact=True)`) and the report is written as `compact_report.json`. `card` is the
    model card's text, or a function of the compact report (None when not compact) that returns it.
    `srnet` is left intact (the merge works on a copy), so the run can go on using it.
    """
    import copy

    merged_dir = os.path.join(output_dir, MERGED_DIR)
    if os.path.islink(merged_dir):  # a link placed there: the merged model goes into the output dir, not its target
        os.unlink(merged_dir)
    elif os.path.isdir(merged_dir):
        shutil.rmtree(merged_dir)
    srnet_copy = copy.deepcopy(srnet)
    model = srnet_copy.merge_and_unload(compact=compact)
    save_pretrained_model(model, merged_dir)  # a compact one with its modeling file (loads without hf_srnets)
    report = getattr(srnet_copy, "compact_report", None) if compact else None
    if report is not None:  # its stock_checkpoint: loads with AutoModelForSequenceClassification alone
        write_json(os.path.join(merged_dir, COMPACT_REPORT_NAME), report, indent=2)
    if tokenizer is not None:
        tokenizer.save_pretrained(merged_dir)
    text = card(report) if callable(card) else card
    if text is not None:
        with replaced_file(os.path.join(merged_dir, CARD_NAME)) as f:
            f.write(text)
    return merged_dir


def push_merged(output_dir: str, repo_id: str, *, token: str | None = None, private: bool | None = None) -> str:
    """Upload `output_dir/merged` (written by `save_merged`) to `repo_id`, with a portable card."""
    merged_dir = os.path.join(output_dir, MERGED_DIR)
    if not os.path.isfile(os.path.join(merged_dir, MODEL_CONFIG_NAME)):
        raise MissingInputError(f"No merged checkpoint in {merged_dir}: run with --push_merged (or save_merged) first")
    files = sorted(n for n in os.listdir(merged_dir) if os.path.isfile(os.path.join(merged_dir, n)))
    return _staged_upload(
        merged_dir,
        files,
        repo_id,
        base=_searched_on(output_dir),
        token=token,
        private=private,
        commit_message="Upload merged SRNet",
        retry=retry_command(output_dir, repo_id, merged=True, private=private),
    )


def push_run(
    output_dir: str,
    repo_id: str | None,
    merged_repo_id: str | None = None,
    *,
    token: str | None = None,
    private: bool | None = None,
    pruned: bool = True,
) -> list[str]:
    """Upload a run: the mask repo to `repo_id` (the full model when `pruned` is False; skipped when `repo_id`
    is None) and the merged checkpoint `output_dir/merged` to `merged_repo_id` (when given).

    Every upload is tried even if an earlier one failed; if any failed, raise one `HubUploadError` naming every
    upload still to do with its retry command (also in `err.retry_commands`). Missing local files raise
    `MissingInputError` (a `FileNotFoundError`) before anything is uploaded. Returns the commit infos of the uploads.
    """
    uploads: list[tuple[str, str, Any, str]] = []  # (what, repo, push function, retry command)
    if repo_id is not None:
        if pruned:
            mask_repo_files(output_dir)
            uploads.append(("the masks", repo_id, push_masks, retry_command(output_dir, repo_id, private=private)))
        else:
            full_model_files(output_dir)
            retry = retry_command(output_dir, repo_id, full_model=True, private=private)
            uploads.append(("the model", repo_id, push_full_model, retry))
    if merged_repo_id is not None:
        if not os.path.isfile(os.path.join(output_dir, MERGED_DIR, MODEL_CONFIG_NAME)):
            raise MissingInputError(
                f"No merged checkpoint in {os.path.join(output_dir, MERGED_DIR)}: run with --push_merged "
                "(or save_merged) first"
            )
        retry = retry_command(output_dir, merged_repo_id, merged=True, private=private)
        uploads.append(("the merged checkpoint", merged_repo_id, push_merged, retry))
    done: list[str] = []
    failed: list[tuple[str, str, str, HubUploadError]] = []
    for what, repo, push, retry in uploads:
        try:
            done.append(push(output_dir, repo, token=token, private=private))
            logger.info(f"Pushed {what} of {output_dir} to the Hub: {repo}")
        except HubUploadError as err:
            failed.append((what, repo, retry, err))
    if failed:
        cause = failed[0][3].__cause__
        lines = [f"{len(failed)} of {len(uploads)} Hub upload(s) failed; the local files in {output_dir} are complete."]
        lines += [f"  - {what} to {repo!r}: {type(e.__cause__).__name__}: {e.__cause__}" for what, repo, _, e in failed]
        lines.append("To retry, run:")
        lines += [f"  {retry}" for _, _, retry, _ in failed]
        raise HubUploadError("\n".join(lines), [retry for _, _, retry, _ in failed]) from cause
    return done
