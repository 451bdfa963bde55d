"""RMC stage 1 as one command (`run_sample_difficulty.py`): IMP models at several sparsities, their per-example
losses on the run's training and ID dev sets, the loss variance v_i, the difficulty d_i (Eq. 1) and the §4.1
easy/hard split of the dev set (Du et al. 2023, §4.1, §5.1, Fig. 2).

The IMP runs are ordinary `run_glue_sparse.py` runs (`--pruning imp --sparsity s`, k = ⌈s/0.1⌉ rounds of s/k each,
every 1/k of the run, so no round prunes more than 10% as in Win-win Table 4). The sets are read with the run's own
data phase (`hf_srnets.runner.data`), so the ids, rows and label order are the ones a later `--loss rmc` run joins
`--sample_difficulty` on.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
from collections.abc import Callable
from typing import Any

import numpy as np

from ..arguments import parse_args, validate_args
from ..arguments.parser import cli_field_names
from ..arguments.sample_difficulty_arguments import SampleDifficultyArguments
from ..data.columns import write_difficulty
from ..data.text_digests import DIGEST_KEY, dataset_digests
from ..difficulty.scoring import example_losses, load_scoring_model, measured_sparsity
from ..difficulty.variance import alpha_for, difficulty_degree, hard_split, loss_variance
from ..errors import InputError, MissingInputError
from ..pruning.magnitude import MagnitudePruning
from ..run_files import (
    DIFFICULTY_NAME,
    DIFFICULTY_REPORT_NAME,
    DIFFICULTY_SETTINGS_NAME,
    DIFFICULTY_VALIDATION_NAME,
    RESULTS_NAME,
    is_finished,
    write_json,
)
from ..runner.data import RunData, check_model_inputs, read_data, run_task, run_transform, tokenize_data
from ..training.output_dir import check_is_folder
from .child_runs import run_glue_sparse, sets_flag

logger = logging.getLogger(__name__)

DIFFICULTY_FILE = DIFFICULTY_NAME
VALIDATION_FILE = DIFFICULTY_VALIDATION_NAME
REPORT_FILE = DIFFICULTY_REPORT_NAME
SETTINGS_FILE = DIFFICULTY_SETTINGS_NAME
OUTPUT_FILES = (DIFFICULTY_FILE, VALIDATION_FILE, REPORT_FILE, SETTINGS_FILE)
SCRIPT_SET_FLAGS = ("--pruning", "--sparsity", "--output_dir")
MAX_ROUND_PRUNE = 0.1  # Win-win Table 4: IMP prunes 10% per round


def run_one(argv: list[str]) -> None:
    """Train one IMP model with run_glue_sparse.py; a failed run stops the script with one line."""
    run_glue_sparse(argv, "IMP run")


def imp_schedule(sparsity: float, max_round: float = MAX_ROUND_PRUNE) -> tuple[int, float, float]:
    """(k, Δs, Δt) for `--pruning imp --sparsity s`: k = ⌈s/max_round⌉ rounds of Δs = s/k every Δt = 1/k of the
    run, so s = k·Δs and k·Δt = 1 (the rules of `imp_rounds`) and no round prunes more than `max_round`."""
    k = max(1, math.ceil(sparsity / max_round - 1e-9))
    return k, sparsity / k, 1.0 / k


def imp_dir_name(sparsity: float) -> str:
    return f"imp_s{sparsity:g}"


def magnitude_flag(option: str) -> str:
    """`--option`, an option of the magnitude method's config (`MagnitudePruning.config_class`); a `ValueError`
    (at import, below) if the method has no such option, so a rename there cannot silently break the IMP runs."""
    if option not in cli_field_names(MagnitudePruning.config_class):
        raise ValueError(f"--pruning {MagnitudePruning.name} has no option {option!r}: update sample_difficulty.py")
    return f"--{option}"


# the magnitude options `imp_schedule` fills in for every IMP run (Δs, Δt) unless the user gives them
SCHEDULE_FLAGS = (magnitude_flag("imp_prune_ratio"), magnitude_flag("imp_interval"))


def imp_run_argv(run_argv: list[str], sparsity: float, output_dir: str) -> list[str]:
    """The run_glue_sparse.py arguments of the IMP model at `sparsity`: the user's, plus the pruning, the sparsity,
    the run dir and (unless given) the `imp_schedule` ratio and interval."""
    _, ratio, interval = imp_schedule(sparsity)
    argv = [*run_argv, "--pruning", MagnitudePruning.name, "--sparsity", repr(sparsity)]
    for flag, value in zip(SCHEDULE_FLAGS, (ratio, interval), strict=True):
        if not sets_flag(run_argv, flag):
            argv += [flag, repr(value)]
    return argv + ["--output_dir", os.path.join(output_dir, imp_dir_name(sparsity))]


def most_training_steps(run: Any) -> int | None:
    """The most optimisation steps a run can take: `--max_steps`, else the steps of `--max_train_samples` rows in
    one process (more processes take fewer); None when neither bounds them (the row count is the data's), or
    `--extra_train` adds rows."""
    args = run.training
    if args.max_steps > 0:
        return int(args.max_steps)
    rows = run.data.max_train_samples
    if rows is None or run.data.extra_train:  # --extra_train rows come on top of the cap
        return None
    updates = max(math.ceil(rows / args.per_device_train_batch_size) // args.gradient_accumulation_steps, 1)
    return math.ceil(args.num_train_epochs * updates)


def check_imp_steps(run: Any, sparsity: float) -> None:
    """Before anything trains: the IMP run at `sparsity` has k = `imp_schedule` rounds, at least one step apart, so
    it needs k training steps; a run bounded below that (`most_training_steps`) would fail when it starts."""
    rounds = imp_schedule(sparsity)[0]
    steps = most_training_steps(run)
    if steps is None or steps >= rounds:
        return
    args = run.training
    bound = (
        f"--max_steps {args.max_steps}"
        if args.max_steps > 0
        else f"--max_train_samples {run.data.max_train_samples} in batches of {args.per_device_train_batch_size}, "
        f"{args.num_train_epochs:g} epoch(s)"
    )
    raise InputError(
        f"the IMP model at sparsity {sparsity:g} needs {rounds} pruning rounds, each at least one training step "
        f"apart, but its run has at most {steps} step(s) ({bound}): give --max_steps {rounds} or more after --, or "
        "raise --num_train_epochs or --max_train_samples"
    )


def check_run_argv(run_argv: list[str], args: SampleDifficultyArguments) -> list[list[str]]:
    """Refuse flags the script sets and runs that would fail; return the argv of every IMP run (none with
    --model_dirs). The checks run before anything trains."""
    if not run_argv:
        raise InputError("Give the run_glue_sparse.py arguments of the runs after --, e.g. -- --model_name_or_path M "
                         "--task mnli --data_dir DATA")  # fmt: skip
    if args.model_dirs is not None:
        run = parse_args([*run_argv, "--output_dir", args.output_dir])
        validate_args(run)
        check_model_inputs(run.model, run.data)
        for path in args.model_dirs:
            if not os.path.isdir(path):
                raise MissingInputError(f"--model_dirs {path} does not exist: give the dirs of saved models")
        return []
    for flag in SCRIPT_SET_FLAGS:
        if sets_flag(run_argv, flag):
            raise InputError(f"{flag} is set by run_sample_difficulty.py for every IMP run: remove it after --")
    argvs = [imp_run_argv(run_argv, s, args.output_dir) for s in args.sparsities]
    for argv, sparsity in zip(argvs, args.sparsities):
        run = parse_args(argv)
        validate_args(run)
        if not any(sets_flag(run_argv, flag) for flag in SCHEDULE_FLAGS):  # the user's schedule: the run checks it
            check_imp_steps(run, sparsity)
    run = parse_args(argvs[0])
    check_model_inputs(run.model, run.data)
    return argvs


def settings_of(args: SampleDifficultyArguments, run_argv: list[str], alpha: float) -> dict[str, Any]:
    """What the difficulty files depend on, recorded in the output dir and compared on a re-run."""
    dirs = [os.path.abspath(d) for d in args.model_dirs] if args.model_dirs is not None else None
    return {
        "run_argv": list(run_argv),
        "sparsities": None if dirs is not None else list(args.sparsities),
        "model_dirs": dirs,
        "alpha": alpha,
        "hard_fraction": args.hard_fraction,
    }


def prepare_difficulty_dir(output_dir: str, settings: dict[str, Any], overwrite: bool) -> None:
    """Refuse an output dir holding files of other settings unless `overwrite` (which deletes the earlier
    difficulty files and, if the runs' arguments changed, the earlier IMP runs); record the settings."""
    check_is_folder(output_dir)
    record = os.path.join(output_dir, SETTINGS_FILE)
    earlier = None
    if os.path.isfile(record):
        with open(record, encoding="utf-8") as f:
            earlier = json.load(f)
    fix = "use another --output_dir, or --overwrite_output_dir true to replace them"
    if not overwrite and earlier is not None and earlier != settings:
        changed = sorted(k for k in {*earlier, *settings} if earlier.get(k) != settings.get(k))
        raise InputError(f"{output_dir} holds sample difficulties made with other {', '.join(changed)}: {fix}.")
    if not overwrite and earlier is None and os.path.isdir(output_dir) and os.listdir(output_dir):
        raise InputError(f"--output_dir {output_dir} is not empty and holds no {SETTINGS_FILE}: {fix}.")
    if overwrite and earlier is not None:
        for name in OUTPUT_FILES:
            if os.path.isfile(os.path.join(output_dir, name)):
                os.remove(os.path.join(output_dir, name))
        if earlier.get("run_argv") != settings["run_argv"]:
            for sparsity in earlier.get("sparsities") or []:
                shutil.rmtree(os.path.join(output_dir, imp_dir_name(sparsity)), ignore_errors=True)
    os.makedirs(output_dir, exist_ok=True)
    write_json(record, settings, indent=2)


def train_imp_models(argvs: list[str], runner: Callable[[list[str]], None]) -> list[str]:
    """Run every IMP run not finished yet (a run dir without all_results.json starts again); return the run dirs."""
    dirs = []
    for argv in argvs:
        out = argv[argv.index("--output_dir") + 1]
        dirs.append(out)
        if is_finished(out):
            logger.info(f"{out} is finished ({RESULTS_NAME}): skipped")
            continue
        logger.info(f"Training the IMP model {out}")
        runner([*argv, "--overwrite_output_dir", "true"])  # the script owns the run dir: clear an unfinished attempt
        if not is_finished(out):
            raise RuntimeError(f"The IMP run {out} ended without {RESULTS_NAME}: see its log")
    return dirs


def read_run_data(argv: list[str]) -> RunData:
    """The training and ID dev sets exactly as the run with `argv` reads them (files, caps, ids, label order),
    tokenised with the run's tokenizer. OOD sets are not tokenised: they are not scored."""
    run = parse_args(argv)
    data = read_data(run_task(run.data), run.model, run.data, run.training, run_transform(run))
    data.ood = []
    tokenize_data(data, run.model, run.data, run.training)
    return data


def score_models(
    model_dirs: list[str], data: RunData, batch_size: int, device: Any, cache_dir: str | None = None
) -> tuple[np.ndarray, np.ndarray, list[dict[str, Any]]]:
    """Losses of every model on the training and dev sets, (examples × models) each, and a record per model
    (its measured sparsity, mean loss and accuracy on both sets)."""
    train_losses, dev_losses, records = [], [], []
    train_labels, dev_labels = np.asarray(data.train_tok["label"]), np.asarray(data.validation_tok["label"])
    for path in model_dirs:
        model, tokenizer, order = load_scoring_model(path, data.task, cache_dir=cache_dir)
        if tokenizer.get_vocab() != data.tokenizer.get_vocab():
            raise InputError(
                f"{path} has another vocabulary than the run's tokenizer: score models trained from the run's "
                "--model_name_or_path (or give the run its --tokenizer_name)."
            )
        sparsity, source = measured_sparsity(model, path)
        common = dict(label_order=order, task_labels=data.task.label_names, batch_size=batch_size, device=device)
        train = example_losses(model, data.train_tok, data.tokenizer, desc=f"train {path}", **common)
        dev = example_losses(model, data.validation_tok, data.tokenizer, desc=f"dev {path}", **common)
        train_losses.append(train.losses)
        dev_losses.append(dev.losses)
        record = {"dir": path, "sparsity": sparsity, "sparsity_source": source}
        records.append({**record, "train": train.summary(train_labels), "validation": dev.summary(dev_labels)})
        logger.info(f"{path}: sparsity {sparsity:.4f}, train {records[-1]['train']}, dev {records[-1]['validation']}")
    return np.stack(train_losses, axis=1), np.stack(dev_losses, axis=1), records


def gold_hard(values: list[Any]) -> np.ndarray:
    """A `hard` column (1/0, true/false, as strings or numbers) as booleans."""
    return np.array([str(v).strip().lower() in ("1", "1.0", "true", "hard") for v in values], dtype=bool)


def split_agreement(variance: np.ndarray, hard: np.ndarray, gold: np.ndarray) -> dict[str, Any]:
    """Agreement of the variance split with a ground-truth one (§4.1's 82.8% on MNLI, Gururangan et al.'s split):
    at --hard_fraction, and with as many hard examples as the ground truth has."""
    at_gold = hard_split(variance, float(gold.mean()))
    return {
        "gold_hard_examples": int(gold.sum()),
        "agreement_with_gold": float((hard == gold).mean()),
        "agreement_at_gold_fraction": float((at_gold == gold).mean()),
    }


def difficulty_rows(ids: list[str], losses: np.ndarray, alpha: float) -> tuple[list[dict[str, Any]], np.ndarray]:
    """One `{"id", "difficulty", "variance", "losses"}` row per example (Eq. 1 over these examples), and v."""
    variance = loss_variance(losses)
    degree = difficulty_degree(variance, alpha)
    rows = [
        {"id": i, "difficulty": float(d), "variance": float(v), "losses": [float(x) for x in row]}
        for i, d, v, row in zip(ids, degree, variance, losses)
    ]
    return rows, variance


def write_outputs(
    output_dir: str, data: RunData, train_losses: np.ndarray, dev_losses: np.ndarray, settings: dict[str, Any]
) -> dict[str, Any]:
    """Write difficulty.jsonl (train) and difficulty_validation.jsonl (dev, with `hard`), each row with the
    `text_digest` of its example; return the split facts."""
    alpha = settings["alpha"]
    train_rows, train_v = difficulty_rows(list(data.train["id"]), train_losses, alpha)
    dev_rows, dev_v = difficulty_rows(list(data.validation["id"]), dev_losses, alpha)
    hard = hard_split(dev_v, settings["hard_fraction"])
    for row, flag in zip(dev_rows, hard):
        row["hard"] = bool(flag)
    for rows, dataset in ((train_rows, data.train), (dev_rows, data.validation)):
        for row, digest in zip(rows, dataset_digests(dataset), strict=True):
            row[DIGEST_KEY] = digest
    write_difficulty(os.path.join(output_dir, DIFFICULTY_FILE), train_rows)
    write_difficulty(os.path.join(output_dir, VALIDATION_FILE), dev_rows)
    facts: dict[str, Any] = {
        "train": {"examples": len(train_rows), "v_min": float(train_v.min()), "v_max": float(train_v.max())},
        "validation": {"examples": len(dev_rows), "v_min": float(dev_v.min()), "v_max": float(dev_v.max())},
    }
    facts["validation"]["hard_examples"] = int(hard.sum())
    if "hard" in data.validation.column_names:
        facts["validation"].update(split_agreement(dev_v, hard, gold_hard(data.validation["hard"])))
    return facts


def compute_difficulty(
    args: SampleDifficultyArguments, run_argv: list[str], runner: Callable[[list[str]], None]
) -> dict[str, Any]:
    """Stage 1 of RMC end to end (see the module docstring); returns the report, also written to
    `<output_dir>/difficulty_report.json`."""
    argvs = check_run_argv(run_argv, args)
    read_argv = argvs[0] if argvs else [*run_argv, "--output_dir", args.output_dir]
    run = parse_args(read_argv)
    alpha = alpha_for(run_task(run.data).name, args.alpha)
    settings = settings_of(args, run_argv, alpha)
    prepare_difficulty_dir(args.output_dir, settings, args.overwrite_output_dir)
    model_dirs = list(args.model_dirs) if args.model_dirs is not None else train_imp_models(argvs, runner)
    data = read_run_data(read_argv)
    device = run.training.device
    train_losses, dev_losses, models = score_models(model_dirs, data, args.batch_size, device, run.model.cache_dir)
    if args.model_dirs is None:
        for record, sparsity in zip(models, args.sparsities):
            record["requested_sparsity"] = sparsity
    report = {
        "settings": settings,
        "task": data.task.name,
        "alpha": alpha,
        "hard_fraction": args.hard_fraction,
        "sparsities": settings["sparsities"],
        "models": models,
        **write_outputs(args.output_dir, data, train_losses, dev_losses, settings),
        "files": {"train": DIFFICULTY_FILE, "validation": VALIDATION_FILE},
    }
    write_json(os.path.join(args.output_dir, REPORT_FILE), report, indent=2)
    logger.info(f"Wrote {DIFFICULTY_FILE}, {VALIDATION_FILE} and {REPORT_FILE} to {args.output_dir}")
    return report
