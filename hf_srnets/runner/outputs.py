"""The output phase of a run: sparsity report, model card, merged checkpoint, train predictions, the results (last:
they mark the run finished, `run_files.is_finished`), upload."""

from __future__ import annotations

import dataclasses
import logging
import os
from typing import Any

from ..arguments.glue_sparse_arguments import RunArguments
from ..data import EXAMPLE_COLUMNS, TaskSpec, id_set_name, write_predictions
from ..data.label_alignment import label_permutation, to_task_order
from ..data.text_digests import dataset_digests
from ..errors import InputError, naming_path
from ..metrics.classification import softmax
from ..publish.card import render_model_card
from ..publish.card_data import DataSources, describe_splits
from ..publish.card_facts import CardFacts, RunDescription, merged_card_facts, run_card_facts
from ..publish.hub import push_run, save_merged
from ..run_files import (
    CARD_NAME,
    MERGED_DIR,
    RESULTS_NAME,
    SPARSITY_REPORT_NAME,
    TRAIN_PREDICTIONS_NAME,
    replaced_file,
    write_json,
)
from ..training.arguments import training_precision
from ..training.launch import launch_facts
from ..training.output_dir import is_inside, is_run_output
from .data import RunData, run_transform

logger = logging.getLogger(__name__)


def save_outputs(
    run: RunArguments,
    trainer: Any,
    data: RunData,
    results: dict[str, Any],
    metric_rows: list[tuple[str, str, dict[str, Any]]],
    *,
    sparsity: dict[str, Any] | None,
    fresh_head: bool,
    repo_id: str | None,
) -> None:
    """Write sparsity_report.json, the card (README.md) and, if asked, the merged checkpoint; not the results, which
    `write_results` writes once every output is written.

    `sparsity` is the pruned model's `sparsity_report()`; `repo_id` the Hub repo the card is for (None: a card
    for the local output dir)."""
    args, srnet = run.training, trainer.srnet_model
    os.makedirs(args.output_dir, exist_ok=True)
    if sparsity is not None:
        write_json(os.path.join(args.output_dir, SPARSITY_REPORT_NAME), sparsity, indent=2)
    # the card states the data as read (files, subsets) and the effective settings of the saved model
    splits = describe_splits(
        data.task,
        data_sources(run, data.task),
        train_rows=len(data.train),
        train_total=len(data.full_train),
        validation_rows=len(data.validation),
        ood=[(s, len(d)) for s, d in data.ood],
        id_name=id_set_name(data.task),
    )
    facts = run_card_facts(
        describe_run(run),
        task=data.task,
        results=results,
        metric_rows=metric_rows,
        splits=splits,
        bias_desc=data.bias_desc,
        srnet=srnet,
        model=trainer.model,
        repo_id=repo_id,
        random_head=srnet is not None and fresh_head and not srnet.srnet_config.trainable_classifier,
    )
    card = os.path.join(args.output_dir, CARD_NAME)
    with replaced_file(card) as f:  # a full disk: one error line naming the card
        f.write(render_model_card(facts))
    if srnet is not None and (run.model.save_merged or run.model.push_merged or run.model.save_compact):
        with naming_path(os.path.join(args.output_dir, MERGED_DIR)):
            save_merged_model(run, srnet, data.tokenizer, facts)


def write_results(output_dir: str, results: dict[str, Any]) -> None:
    """all_results.json, the last file a run writes: it marks the run finished (`run_files.is_finished`), so a run
    killed while writing its card, merged checkpoint or train predictions is not counted as finished. As
    `Trainer.save_metrics("all", ...)` writes it, but through a temporary file (`write_json`): never a cut file."""
    write_json(os.path.join(output_dir, RESULTS_NAME), results, indent=4, sort_keys=True)


def data_sources(run: RunArguments, task: TaskSpec) -> DataSources:
    """Where the run was told to read its data, and what its `--data_transform` did to it, as the card says."""
    data, transform = run.data, run_transform(run)
    return DataSources(
        train_file=data.train_file,
        validation_file=data.validation_file,
        data_dir=data.data_dir,
        extra_train=tuple(data.extra_train or ()),
        max_train_samples=data.max_train_samples,
        max_eval_samples=data.max_eval_samples,
        max_ood_samples=data.max_ood_samples,
        transform=transform.description(task) if transform is not None else None,
    )


def describe_run(run: RunArguments) -> RunDescription:
    """The run's arguments as the plain values its card states: each `RunDescription` field is the argument of
    the same name (model, training, then data arguments), but the four the card states as used, not as given."""
    model, args = run.model, run.training
    step, step_options = args.step_objective_settings()
    derived = {
        "loss_options": dict(args.loss_settings()),
        "step_objective": step or "none",
        "step_objective_options": dict(step_options),
        "precision": training_precision(args),
        **{k: v for k, v in launch_facts(args).items() if k != "per_device_train_batch_size"},
    }
    given = {}
    for f in dataclasses.fields(RunDescription):
        if f.name not in derived:
            source = next(group for group in (model, args, run.data) if hasattr(group, f.name))
            given[f.name] = getattr(source, f.name)
    return RunDescription(**given, **derived)


def save_merged_model(run: RunArguments, srnet: Any, tokenizer: Any, facts: CardFacts) -> None:
    """`--save_merged`/`--push_merged`/`--save_compact`: OUTPUT_DIR/merged, a plain (with `--save_compact`:
    physically smaller) checkpoint with its own card."""
    args = run.training
    merged_at = merged_repo_id(run) if run.model.push_merged else os.path.join(args.output_dir, MERGED_DIR)

    def card(compact_report: dict[str, Any] | None) -> str:
        return render_model_card(merged_card_facts(facts, merged_at, compact_report))

    save_merged(srnet, args.output_dir, tokenizer, card, compact=run.model.save_compact)


def hub_repo_id(args: Any) -> str:
    """The Hub repo of the run: `--hub_model_id`, else the output dir's name."""
    return args.hub_model_id or os.path.basename(os.path.normpath(args.output_dir))


def check_hub_repo_ids(run: RunArguments) -> None:
    """Before any work: the Hub repo ids the run will push to (`--push_to_hub`: `hub_repo_id`; `--push_merged`:
    `merged_repo_id`) are valid repo ids, so a bad one is refused now, not after training."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    pushes = [("--hub_model_id", hub_repo_id(run.training))] if run.training.push_to_hub else []
    if run.model.push_merged:
        pushes.append(("--hub_merged_model_id", merged_repo_id(run)))
    for flag, repo_id in pushes:
        try:
            validate_repo_id(repo_id)
        except HFValidationError as err:
            source = (
                flag
                if repo_id == _given_id(run, flag)
                else "the default, from --hub_model_id or the --output_dir's name"
            )
            raise InputError(
                f"{repo_id!r} ({source}) is not a valid Hub repo id: {err} Give {flag} NAME or NAMESPACE/NAME, "
                "e.g. your-name/srnet-sst2"
            ) from None


def _given_id(run: RunArguments, flag: str) -> str | None:
    return run.training.hub_model_id if flag == "--hub_model_id" else run.model.hub_merged_model_id


def merged_repo_id(run: RunArguments) -> str:
    """The Hub repo of the merged checkpoint: `--hub_merged_model_id`, else `<run's repo>-merged`."""
    return run.model.hub_merged_model_id or f"{hub_repo_id(run.training)}-merged"


def check_train_predictions_path(run: RunArguments, reads: list[str | None]) -> None:
    """Before any work: `--write_train_predictions PATH` must not replace a file the run reads (`reads`, or one
    inside a folder it reads) or one of its own outputs, nor an existing file, unless that file lies in the
    `--output_dir` that `--overwrite_output_dir` hands over to the run."""
    path = run.data.write_train_predictions
    if not path:
        return
    flag, out = f"--write_train_predictions {path}", run.training.output_dir
    for read in reads:
        if read and os.path.exists(read) and is_inside(path, read):
            raise InputError(
                f"{flag} would overwrite {read}, which this run reads: write the predictions to another file, e.g. "
                f"{os.path.join(out, TRAIN_PREDICTIONS_NAME)}."
            )
    if os.path.isdir(path):
        raise InputError(f"{flag} is a directory: pass a file path, e.g. {os.path.join(path, TRAIN_PREDICTIONS_NAME)}.")
    if os.path.realpath(os.path.dirname(os.path.abspath(path))) == os.path.realpath(out) and is_run_output(
        os.path.basename(path)
    ):
        raise InputError(f"{flag} is a file the run itself writes in --output_dir: choose another name.")
    if os.path.exists(path) and not (run.model.overwrite_output_dir and is_inside(path, out)):
        where = (
            "" if is_inside(path, out) else " (it is outside --output_dir, so --overwrite_output_dir does not apply)"
        )
        raise InputError(
            f"{flag} exists{where}: delete or move it, or choose another path. Inside --output_dir, "
            "--overwrite_output_dir lets the run replace it."
        )


def write_train_predictions(run: RunArguments, trainer: Any, data: RunData) -> None:
    """`--write_train_predictions`: the model's softmax on the train set, in the task's order (p_t for confreg), each
    row with the `text_digest` of its example (a run joining the file onto other data refuses it)."""
    path = run.data.write_train_predictions
    train_tok = data.train_tok
    output = trainer.predict(train_tok.remove_columns([c for c in EXAMPLE_COLUMNS if c in train_tok.column_names]))
    if run.training.should_save:
        probs = to_task_order(softmax(output.predictions), label_permutation(data.task_order, data.task.label_names))
        write_predictions(path, data.train["id"], probs, dataset_digests(data.train))
        logger.info(f"Wrote train-set predictions to {path}")


def push_outputs(run: RunArguments, pruned: bool, push_to_hub: bool) -> None:
    """Upload the run: the mask repo (or the full model when not pruning) and, if asked, the merged checkpoint.

    Every upload is tried; a failure names each upload still to do with its retry command (`hub.push_run`)."""
    args = run.training
    merged = merged_repo_id(run) if run.model.push_merged and pruned else None
    if push_to_hub or merged:
        push_run(
            args.output_dir,
            hub_repo_id(args) if push_to_hub else None,
            merged,
            token=args.hub_token,
            private=args.hub_private_repo,
            pruned=pruned,
        )
