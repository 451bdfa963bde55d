"""Join the per-example columns the loss reads to the training set by id: p_b (bias model), fitted if needed, and
every other registered column (p_t, d_i, a plugin's: `hf_srnets.data.example_columns`) from its file with its reader.

p_b comes from `--bias_predictions FILE` or, without it, from the bias model fitted here: `--bias_model`, else
the task's paper bias model (`TaskSpec.bias_model`: word overlap for MNLI/QQP, claim-only for FEVER). A fitted
p_b is cached in `<output_dir>/bias_model/<key>/`, the key hashing the data, vectors, seed, labels and code it
depends on (`hf_srnets.bias.fit_or_load`), so a reused output folder never reuses p_b fitted on other data. The
joins by id, extra rows included, are `hf_srnets.data.joins`; this module picks the run's sources from its options.

Extra training rows (`--extra_train NAME=PATH`, OOD-informed search, Win-win §4.5) carry `source_name` NAME and
`source_id`, their id in their own file. Their p_b:

* fitted here: the bias model is fitted on the task's own training rows only (it models the ID dataset's
  shortcut) and predicts each extra set, so PoE/reweighting down-weight the extra rows the ID shortcut already
  explains and keep the ones that contradict it (the point of adding e.g. HANS training pairs);
* with `--bias_predictions DIR/bias_train.jsonl`: joined from `DIR/bias_<NAME>.jsonl` by `source_id` (what
  `run_bias_model.py --ood_file NAME=PATH --output_dir DIR` writes), or from FILE itself if it has the rows'
  full ids (`NAME:<id>`).

Every file joined records the text each value was made on (`text_digest`, `hf_srnets.data.text_digests`): a row whose
text differs is refused, so a file made on another data file with the same ids (MNLI's `idx`) is never joined; a
file of an older version joins by id, with a warning. A fitted p_b's cache entry is keyed by its data: its digests
are checked when it has them, and an older entry is not warned about.
"""

from __future__ import annotations

import dataclasses
import logging
import os

from datasets import Dataset

from ..arguments.model_data_arguments import DataArguments
from ..bias.fit_or_load import fit_or_load_bias_predictions, fitted_bias_description
from ..bias.pipeline import choose_bias_model
from ..data.columns import BIAS_COLUMN, add_probability_column, read_predictions
from ..data.example_columns import BIAS, EXAMPLE_COLUMNS, ExampleColumn
from ..data.joins import TRAIN_SOURCE, extra_names, extra_sets, join_probabilities, row_sources
from ..data.tasks import TaskSpec
from ..data.text_digests import read_text_digests
from ..errors import InputError
from ..losses import LOSSES
from ..run_files import BIAS_MODEL_DIR, bias_predictions_name
from ..training.arguments import SRNetTrainingArguments

logger = logging.getLogger(__name__)

EXTRA_SPLIT_PREFIX = "extra_"  # fitted p_b of extra set NAME is the split `extra_NAME` of the cache entry


def _fix(column: ExampleColumn) -> str:
    """How to mend a file made on other data, ending the refusal of `text_digests.check_texts`."""
    return f"{column.hint} from this run's training data"


def _user_extra_predictions(
    path: str, names: list[str], own: dict[str, list[float]], train_ids: set[str], num_labels: int
) -> dict[str, tuple[dict[str, list[float]], str]]:
    """`bias_<NAME>.jsonl` next to the user's p_b file, for each extra set whose rows the file itself lacks."""
    out: dict[str, tuple[dict[str, list[float]], str]] = {}
    folder = os.path.dirname(os.path.abspath(path))
    for name in names:
        if any(i in own for i in train_ids if i.startswith((f"{name}:", f"{name}#"))):
            continue  # the file covers this set under its full ids
        candidate = os.path.join(folder, bias_predictions_name(name))
        if not os.path.isfile(candidate):
            raise InputError(
                f"--extra_train {name}: --bias_predictions {path} has no p_b for its rows and there is no "
                f"{candidate}. Write it with run_bias_model.py --ood_file {name}=PATH --output_dir {folder} "
                f"(the bias model trained on the task's data predicts the extra set), or drop "
                "--bias_predictions to fit the bias model in this run (it predicts the extra rows too)."
            )
        logger.info(f"p_b of the extra training set {name}: {candidate}, joined by each row's id in its own file")
        out[name] = (read_predictions(candidate, num_labels), candidate)
    return out


def _attach_given_bias(
    train: Dataset, task: TaskSpec, path: str, names: list[str], sources: list[str], source_ids: list[str], subset: bool
) -> tuple[Dataset, str]:
    """Join the user's p_b (`--bias_predictions`), and the p_b files of the extra sets next to it (module doc)."""
    own = read_predictions(path, task.num_labels)
    has_extra = any(s != TRAIN_SOURCE for s in sources)
    train_ids = {str(i) for i in train.select_columns(["id"]).to_dict()["id"]}
    present = [n for n in names if n in set(sources)]
    extra = _user_extra_predictions(path, present, own, train_ids, task.num_labels) if has_extra else {}
    bias_desc = f"predictions from `{os.path.basename(path)}`" + (
        f" (extra training sets from {', '.join(f'`{os.path.basename(p)}`' for _, p in extra.values())})"
        if extra
        else ""
    )
    train = _join_bias(train, sources, source_ids, own, path, extra, allow_extra=subset, given=True)
    return train, bias_desc


def _join_bias(
    train: Dataset,
    sources: list[str],
    source_ids: list[str],
    own: dict[str, list[float]],
    path: str,
    extra: dict[str, tuple[dict[str, list[float]], str]],
    *,
    allow_extra: bool,
    given: bool,
) -> Dataset:
    """`join_probabilities` of p_b, each file's rows checked against the text digests it records. A file of an
    older version records none: the user's (`given`) is joined by id with a warning, a fitted bias model's cache
    entry without one (it is keyed by the data anyway)."""
    recorded = {source: read_text_digests(source) for source in [path, *(p for _, p in extra.values())]}
    digests = recorded if given else {source: d for source, d in recorded.items() if d}
    fix = {"fix": _fix(BIAS)} if given else {}
    return join_probabilities(
        train, BIAS_COLUMN, sources, source_ids, own, path, extra, allow_extra=allow_extra, digests=digests, **fix
    )


def _attach_fitted_bias(
    train: Dataset,
    full_train: Dataset,
    task: TaskSpec,
    data_args: DataArguments,
    args: SRNetTrainingArguments,
    eval_splits: dict[str, Dataset],
    sources: list[str],
    source_ids: list[str],
) -> tuple[Dataset, str]:
    """Join p_b of the bias model fitted on `full_train` (or loaded from its cache entry) to `train`."""
    bias_model = choose_bias_model(task, full_train, data_args.bias_model)
    if bias_model != task.bias_model:
        task = dataclasses.replace(task, bias_model=bias_model)
    if not data_args.bias_model:
        logger.info(
            f"--loss {args.loss} needs p_b and no --bias_predictions was given: fitting the task's "
            f"{bias_model} bias model (Win-win appendix B.3.1) on the training set"
        )
    extras = extra_sets(train, sources, source_ids)
    splits = {**eval_splits, **{f"{EXTRA_SPLIT_PREFIX}{n}": d for n, d in extras.items()}}
    if extras:
        logger.info(
            f"The bias model is fitted on the task's {len(full_train)} training rows only and predicts "
            f"the extra training set(s) {', '.join(extras)}: their p_b says how much the ID shortcut "
            "explains each extra row"
        )
    cache_root = os.path.join(args.output_dir, BIAS_MODEL_DIR)
    files, report, fitted = fit_or_load_bias_predictions(
        task, full_train, splits, cache_root=cache_root, vectors=data_args.bias_vectors, seed=args.seed
    )
    own = read_predictions(files["train"], task.num_labels)
    extra_files = {n: files[f"{EXTRA_SPLIT_PREFIX}{n}"] for n in extras}
    extra = {n: (read_predictions(f, task.num_labels), f) for n, f in extra_files.items()}
    train = _join_bias(train, sources, source_ids, own, files["train"], extra, allow_extra=True, given=False)
    return train, fitted_bias_description(bias_model, report, len(full_train), fitted, list(extras))


def attach_probabilities(
    train: Dataset,
    full_train: Dataset,
    task: TaskSpec,
    data_args: DataArguments,
    args: SRNetTrainingArguments,
    eval_splits: dict[str, Dataset],
) -> tuple[Dataset, str | None]:
    """Join the columns the loss requires to `train` by id; return it and a description of the bias model (for the
    model card).

    `train` may be the first `--max_train_samples` rows of `full_train` plus `--extra_train` sets: prediction
    files may then cover the full training set. Each registered column but p_b is read from its file
    (`DataArguments.example_column_files`) with the column's reader. Without `--bias_predictions`, the bias model
    (`--bias_model`, else the task's) is fitted on the full training set and predicts `eval_splits` (for its
    report) and the extra sets (module doc), or loaded from the cache entry of the same data.
    """
    needs = LOSSES[args.loss].requires
    subset = data_args.max_train_samples is not None and data_args.max_train_samples < len(full_train)
    names = extra_names(data_args.extra_train)
    sources, source_ids = row_sources(train, names)
    bias_desc = None
    if BIAS_COLUMN in needs:
        path = data_args.bias_predictions
        if path:
            train, bias_desc = _attach_given_bias(train, task, path, names, sources, source_ids, subset)
        else:
            train, bias_desc = _attach_fitted_bias(
                train, full_train, task, data_args, args, eval_splits, sources, source_ids
            )
    files = data_args.example_column_files()
    for name, column in EXAMPLE_COLUMNS.items():
        if name == BIAS_COLUMN or name not in needs:
            continue
        if name not in files:
            raise InputError(column.missing_file_message(args.loss))
        path = files[name]
        values = column.read(path, task.num_labels)
        digests = column.read_digests(path) if column.read_digests is not None else None
        train = add_probability_column(
            train, values, name, source=path, allow_extra=subset, digests=digests, fix=_fix(column)
        )
    return train, bias_desc
