"""Names of the files and folders a run folder holds, for every package that writes or reads them.

One name, one constant: a module that writes or reads a run's file takes its name from here, and
`tests/test_run_files.py` fails on a string literal elsewhere in `hf_srnets` that spells one of these names again
(docstrings aside). The names transformers writes (`config.json`, `trainer_state.json`, the tokenizer's files, ...)
are spelled as transformers spells them; the same test checks them against transformers' own constants.

A run folder is what an hf_srnets script writes into its `--output_dir`: `run_glue_sparse.py`'s run (model or
masks, results, card, checkpoints), `run_bias_model.py`'s p_b files, `run_attack.py`'s results,
`run_extract_ticket.py`'s tickets, `run_sample_difficulty.py`'s d_i files, and `run_sweep.py`'s tables and plots.

A run's JSON records (results, a sweep run's settings, the tickets' record) are written with `write_json`, and every
other file a script writes into an output dir with `replaced_file`: to a hidden temporary file beside it, then
renamed over it (`os.replace`), so a run killed, or a disk that fills up, mid-write leaves the previous file whole,
never a cut one, and a hard link or a file someone placed at the path is replaced, never written through.

A name the user gives that becomes a file name (an evaluation set's NAME in `eval_predictions/NAME.jsonl`, a
split's in `bias_NAME.jsonl`) passes `check_file_name` at argument validation, before any work: no path
separator, no `..`, only characters safe in a file name. `is_finished` counts a run as finished only when
its results file parses to a JSON object.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import re
from collections.abc import Iterator
from typing import IO, Any

from .errors import InputError, naming_path

# ---- what transformers writes (`save_pretrained`, `Trainer`), as transformers names it ----
MODEL_CONFIG_NAME = "config.json"  # transformers.utils.CONFIG_NAME
GENERATION_CONFIG_NAME = "generation_config.json"
SAFE_WEIGHTS_NAME = "model.safetensors"
SAFE_WEIGHTS_INDEX_NAME = "model.safetensors.index.json"
WEIGHTS_NAME = "pytorch_model.bin"
ONNX_NAME = "model.onnx"  # the graph `run_export.py --format onnx` writes (optimum's name too)
WEIGHTS_INDEX_NAME = "pytorch_model.bin.index.json"
TRAINER_STATE_NAME = "trainer_state.json"  # written last into a checkpoint: it marks the checkpoint complete
TRAINING_ARGS_NAME = "training_args.bin"
LOGGING_DIR = "runs"  # the Trainer's default logging dir (TensorBoard)
# `Trainer.save_metrics(split, ...)` writes `<split>_results.json`; "all" is the run's results (RESULTS_NAME)
TRAINER_RESULTS = ("train_results.json", "eval_results.json", "predict_results.json")
# The tokenizer's files that a mask repo carries (`publish.hub.MASK_REPO_FILES`), then the others some
# tokenizers save; an output dir may hold any of them.
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "merges.txt",
    "vocab.json",
    "spm.model",
)
OTHER_TOKENIZER_FILES = ("tokenizer.model", "added_tokens.json", "chat_template.jinja", "sentencepiece.bpe.model")

# ---- what hf_srnets writes into a run_glue_sparse.py run's output dir ----
RESULTS_NAME = "all_results.json"  # every metric of the run (`Trainer.save_metrics("all", ...)`)
SPARSITY_REPORT_NAME = "sparsity_report.json"  # `SRNetModel.sparsity_report()` of the saved model
CARD_NAME = "README.md"  # the model card
SRNET_CONFIG_NAME = "srnet_config.json"  # an SRNet's mask config (`pruning.CONFIG_NAME`)
MASKS_NAME = "srnet_masks.safetensors"  # its entropy-coded masks (`pruning.MASKS_NAME`)
TRAINING_STATE_NAME = "srnet_training_state.safetensors"  # a checkpoint's mask scores and thresholds
MERGED_DIR = "merged"  # the masks merged into the base weights (`--save_merged`)
COMPACT_REPORT_NAME = "compact_report.json"  # what `--save_compact` removed, beside the merged checkpoint
REMOTE_CODE_NAME = "modeling_srnet_compact.py"  # a compact model's modeling file (`compact.remote_code`)
EARLY_START_DIR = "early_start"  # the checkpoint `--early_start_patience` trains before the search
BIAS_MODEL_DIR = "bias_model"  # the cache of bias models fitted in runs
EVAL_PREDICTIONS_DIR = "eval_predictions"  # per-example predictions, `<set>.jsonl` per evaluation set
TRAIN_PREDICTIONS_NAME = "train_predictions.jsonl"  # the name messages suggest for `--write_train_predictions`
LOCK_NAME = ".hf_srnets.lock"  # held while a run writes (`training.output_dir`)

# ---- what the other scripts write into theirs ----
BIAS_REPORT_NAME = "bias_report.json"  # run_bias_model.py (and a bias-model cache entry): the fit's report
BIAS_PREDICTIONS_PATTERN = "bias_*.jsonl"  # ... and p_b per split: `bias_predictions_name`
ATTACK_RESULTS_NAME = "attack_results.json"  # run_attack.py: the summary per recipe
ATTACK_ROWS_PATTERN = "attack_*.jsonl"  # ... and each recipe's attacked examples: `attack_rows_name`
TICKETS_NAME = "tickets.json"  # run_extract_ticket.py: the tickets extracted from one search
DIFFICULTY_NAME = "difficulty.jsonl"  # run_sample_difficulty.py: d_i of the training set
DIFFICULTY_VALIDATION_NAME = "difficulty_validation.jsonl"  # ... the dev set's easy/hard split
DIFFICULTY_REPORT_NAME = "difficulty_report.json"  # ... what it scored with
DIFFICULTY_SETTINGS_NAME = "difficulty_settings.json"  # ... the settings an output dir was made with
SWEEP_RUN_NAME = "sweep_run.json"  # run_sweep.py: in each run's dir, the settings and inputs it was made with
SWEEP_RUNS_TABLE = "runs.csv"  # ... at the sweep's top: one row per run
SWEEP_SUMMARY_TABLE = "summary.csv"  # ... mean ± std per method and sparsity
SWEEP_SUMMARY_MARKDOWN = "summary.md"  # ... the same as a Markdown table
SWEEP_SUMMARY_PLOT = "summary.png"  # ... each metric against sparsity
SWEEP_PAIRED_PLOT = "paired.png"  # ... the paired differences against a baseline

# What an hf_srnets run writes at the top of its output dir (shell patterns). `--overwrite_output_dir` deletes these.
RUN_OUTPUTS = (
    # the model (full fine-tuning) or the masks, and the tokenizer
    MODEL_CONFIG_NAME,
    GENERATION_CONFIG_NAME,
    SAFE_WEIGHTS_NAME,
    "model-*-of-*.safetensors",
    SAFE_WEIGHTS_INDEX_NAME,
    "pytorch_model*.bin",
    WEIGHTS_INDEX_NAME,
    "srnet_*",
    REMOTE_CODE_NAME,
    *TOKENIZER_FILES,
    *OTHER_TOKENIZER_FILES,
    # the Trainer's state, checkpoints and logs
    TRAINING_ARGS_NAME,
    TRAINER_STATE_NAME,
    LOGGING_DIR,
    # results, card and hf_srnets' own folders
    RESULTS_NAME,
    *TRAINER_RESULTS,
    SPARSITY_REPORT_NAME,
    CARD_NAME,
    MERGED_DIR,
    EARLY_START_DIR,
    BIAS_MODEL_DIR,
    EVAL_PREDICTIONS_DIR,
    # run_attack.py's per-recipe rows and summary; run_bias_model.py's p_b files and report
    ATTACK_ROWS_PATTERN,
    ATTACK_RESULTS_NAME,
    BIAS_PREDICTIONS_PATTERN,
    BIAS_REPORT_NAME,
)
# What a Trainer checkpoint holds besides RUN_OUTPUTS' model files (optimizer, scheduler, RNG, DeepSpeed, FSDP)
CHECKPOINT_FILES = (
    "optimizer.pt",
    "optimizer.bin",
    "scheduler.pt",
    "scaler.pt",
    "rng_state.pth",
    "rng_state_*.pth",
    "global_step*",
    "latest",
    "zero_to_fp32.py",
    "pytorch_model_fsdp*",
    "optimizer_*",
    "adapter_config.json",
    "adapter_model.safetensors",
)
# What the Trainer's TensorBoard logging writes under LOGGING_DIR (in its run sub-folders); a LOGGING_DIR holding
# any other file is a user's and `--overwrite_output_dir` keeps it
LOGGING_FILES = ("events.out.tfevents.*",)


def holds_tokenizer_files(directory: str | os.PathLike) -> bool:
    """Whether `directory` holds a tokenizer's file (`TOKENIZER_FILES`, `OTHER_TOKENIZER_FILES`). Without one,
    `AutoTokenizer.from_pretrained` builds a tokenizer from `config.json` alone whose vocabulary is its special tokens:
    every word becomes the unknown token."""
    return any(os.path.isfile(os.path.join(directory, name)) for name in (*TOKENIZER_FILES, *OTHER_TOKENIZER_FILES))


def bias_predictions_name(split: str) -> str:
    """The p_b file of `split` that run_bias_model.py writes (a `BIAS_PREDICTIONS_PATTERN` name)."""
    return BIAS_PREDICTIONS_PATTERN.replace("*", split)


def attack_rows_name(recipe: str) -> str:
    """The file of `recipe`'s attacked examples that run_attack.py writes (an `ATTACK_ROWS_PATTERN` name)."""
    return ATTACK_ROWS_PATTERN.replace("*", recipe)


# a NAME that becomes a file name: letters, digits, `_`, `-`, `+` and inner dots (no separator, no `..`, not hidden)
SAFE_FILE_NAME = re.compile(r"[\w+-]+(\.[\w+-]+)*")
MAX_NAME_LENGTH = 100


def check_file_name(option: str, name: str, example: str) -> str:
    """Return `name`, a NAME given with `option` that becomes a file name; raise an `InputError` naming the option,
    the name and the fix when it could write outside the folder meant (a path separator, `..`) or is unsafe in a
    file name (spaces, `:`, a leading dot, control characters). `example` is the fix as a command-line fragment
    with `{name}` where a safe form of the name goes (e.g. `--ood_file {name}=PATH`)."""
    if SAFE_FILE_NAME.fullmatch(name) and len(name) <= MAX_NAME_LENGTH:
        return name
    safe = re.sub(r"[^\w+-]+", "_", name).strip("_")[:MAX_NAME_LENGTH] or "my_set"
    raise InputError(
        f"{option} {name!r}: the NAME becomes a file name, so it may hold only letters, digits, '_', '-', '+' and "
        f"inner dots (no '/', no '..', at most {MAX_NAME_LENGTH} characters): e.g. {example.format(name=safe)}"
    )


@contextlib.contextmanager
def replaced_file(path: str | os.PathLike, mode: str = "w", newline: str | None = None) -> Iterator[IO[Any]]:
    """Open a file that replaces `path` when the block ends: writes go to `.<name>.<pid>.tmp` beside it (created
    afresh), flushed to disk, then renamed over `path`. So a hard link or a file placed at `path` is replaced, never
    written through, and a failed write (a full disk, a kill) leaves `path` as it was and removes the temporary
    file; a full disk is reported naming `path` (`naming_path`). `mode`: "w" (UTF-8 text, `newline` as `open`'s)
    or "wb"."""
    path = os.fspath(path)
    directory, name = os.path.split(path)
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.tmp")  # hidden: never a run output, never "not empty"
    binary = "b" in mode
    try:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)  # a leftover (or a link placed there): "x" below creates a new file
        # not mkstemp: its 0600 mode would stay on the file
        with (
            naming_path(path),
            open(tmp, "xb" if binary else "x", **({} if binary else {"encoding": "utf-8", "newline": newline})) as f,
        ):
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        if isinstance(err, OSError) and err.filename == tmp:  # name the file meant, not the hidden temporary one
            raise OSError(err.errno, err.strerror, path) from err
        raise


WRITTEN_NAMES = (*RUN_OUTPUTS, *CHECKPOINT_FILES)  # what a run or its checkpoints write


def is_written_name(name: str) -> bool:
    """Whether `name` is one a run or its checkpoints write (`WRITTEN_NAMES`, shell patterns)."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in WRITTEN_NAMES)


def detach_links(directory: str | os.PathLike, also: tuple[str, ...] = ()) -> list[str]:
    """Before a writer that opens its paths in place (transformers' `save_pretrained`, `torch.save`, safetensors,
    `Trainer.save_state`, `torch.onnx.export`) writes into `directory`: unlink each entry there named as a run's file
    (`WRITTEN_NAMES`, and the shell patterns `also`: an export's own names) that is a symbolic link or a file with
    another hard link, so the writer makes a new file instead of writing through the link into a file that also
    lives elsewhere. Only the name in `directory` goes; the linked file is kept whole. Other entries (a user's files)
    are left alone. Return the names unlinked."""
    detached = []
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        for entry in os.scandir(directory):
            if not (is_written_name(entry.name) or any(fnmatch.fnmatchcase(entry.name, p) for p in also)):
                continue
            if entry.is_symlink() or (entry.is_file() and entry.stat().st_nlink > 1):
                os.unlink(entry.path)
                detached.append(entry.name)
    return sorted(detached)


def write_json(path: str, data: Any, **dump_options: Any) -> None:
    """Write `data` as JSON to `path` atomically (`replaced_file`). `dump_options` go to `json.dump` (`indent`,
    `sort_keys`)."""
    with replaced_file(path) as f:
        json.dump(data, f, **dump_options)
        f.write("\n")


def read_json_object(path: str) -> dict[str, Any] | None:
    """The JSON object in `path`; None when the file is missing, empty, cut, or holds something else than an object."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):  # ValueError: not JSON (json.JSONDecodeError) or not UTF-8 (UnicodeDecodeError)
        return None
    return data if isinstance(data, dict) else None


def is_finished(directory: str) -> bool:
    """Whether the run in `directory` finished: its results file (the last thing a run writes) is a JSON object.
    An empty or cut file (a disk that filled up, a run killed while writing it) is not a finished run."""
    return read_json_object(os.path.join(directory, RESULTS_NAME)) is not None
