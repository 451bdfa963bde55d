"""`run`: one run of `run_glue_sparse.py` in a prepared output dir, as phases: data, model, trainer, train, evaluate,
save (card, merged checkpoint), train predictions, the results (the last file written: they mark the run finished),
upload. `hf_srnets.commands.glue_sparse.main` parses, validates and prepares the output dir first.

The order of the phases is the order of the operations a run's numbers depend on (seeding, data loading,
tokenising, model loading, training): keep it.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import torch
from transformers import set_seed

from ..arguments.glue_sparse_arguments import RunArguments
from ..data import EXAMPLE_COLUMNS, SplitSource, id_set_name
from ..errors import InputError
from ..evaluation import (
    MetricRow,
    check_reference,
    easy_hard_table,
    f_bias_results,
    f_bias_table,
    metrics_function,
    read_reference_results,
    results_table,
    run_evaluation,
)
from ..evaluation.eval_predictions import write_eval_predictions
from ..pruning.sharding import full_parameters
from ..training.collator import SRNetDataCollator
from ..training.deepspeed import whole_model_loading
from ..training.launch import log_launch
from ..training.precision import check_precision
from ..training.trainer import SRNetTrainer
from .data import RunData, read_data, run_task, run_transform, tokenize_data
from .model import build_model
from .outputs import hub_repo_id, push_outputs, save_outputs, write_results, write_train_predictions

logger = logging.getLogger(__name__)


def flagged_files_read(run_args: RunArguments) -> list[tuple[str, str | None]]:
    """What a run reads, as (the flag that names it, its path): what `--overwrite_output_dir` must never delete
    (the file of every registered per-example column given, a plugin's included)."""
    model_args, data_args = run_args.model, run_args.data
    files = [("--model_name_or_path", model_args.model_name_or_path), ("--tokenizer_name", model_args.tokenizer_name)]
    files += [("--mask_from", model_args.mask_from), ("--train_file", data_args.train_file)]
    files += [("--validation_file", data_args.validation_file)]
    files += [(_column_flag(name), path) for name, path in data_args.example_column_files().items()]
    files += [("--bias_vectors", data_args.bias_vectors), ("--reference_results", data_args.reference_results)]
    files += [("--hard_subset", data_args.hard_subset), ("--data_dir", data_args.data_dir)]
    files += [("--ood_file", spec.partition("=")[2] or None) for spec in data_args.ood_file]  # NAME alone: --data_dir
    return files + [("--extra_train", spec.split("=", 1)[-1]) for spec in data_args.extra_train]


def _column_flag(name: str) -> str:
    """The option that names the file of the registered per-example column `name`."""
    return f"--{EXAMPLE_COLUMNS[name].flag}"


def files_read(run_args: RunArguments) -> list[str | None]:
    """The paths of `flagged_files_read`, in its order."""
    return [path for _, path in flagged_files_read(run_args)]


def run(run_args: RunArguments) -> dict[str, Any]:
    """One run in a prepared output dir: data, model, training, evaluation, outputs."""
    args = run_args.training
    set_seed(args.seed)
    task = run_task(run_args.data)
    # The Trainer would create the repo at start-up and push the whole output dir with its own card;
    # hf_srnets pushes the masks (or the model) and its card once everything is saved locally.
    push_to_hub, args.push_to_hub = args.push_to_hub, False
    transform = run_transform(run_args)
    data = read_data(task, run_args.model, run_args.data, args, transform)
    reference = reference_results(run_args, data)  # checked before training: a bad reference fails fast
    tokenize_data(data, run_args.model, run_args.data, args)
    if transform is not None:  # e.g. cue words the model's tokenizer must tell apart
        transform.check_tokenizer(data.task, data.tokenizer)
    compute_metrics = metrics_function(data.task)
    with whole_model_loading(args):  # ZeRO-3 partitions at the Trainer's start (training.deepspeed)
        model, fresh_head, early_start_info = build_model(run_args, data, compute_metrics)
    trainer = SRNetTrainer(
        model=model,
        args=args,
        train_dataset=data.train_tok if args.do_train else None,
        eval_dataset=data.validation_tok,
        processing_class=data.tokenizer,
        data_collator=SRNetDataCollator(data.tokenizer),
        compute_metrics=compute_metrics,
    )
    check_sharded_outputs(run_args, trainer)
    precision = check_precision(args)
    launch = log_launch(args)
    results = train(trainer, args) if args.do_train else {}
    evaluated, metric_rows = evaluate(trainer, data, run_args, reference)
    results.update(evaluated)
    srnet = trainer.srnet_model
    # under FSDP every process gathers the whole masks (a collective) and the main process writes them
    with full_parameters(srnet) if srnet is not None else contextlib.nullcontext():
        sparsity = srnet.sparsity_report() if srnet is not None else None
        results["sparsity"] = sparsity["sparsity"] if sparsity else 0.0  # of the evaluated model
        if srnet is not None:
            saved = srnet.sparsity_report(srnet.method.saved_masks(srnet))["sparsity"]
            if saved != results["sparsity"]:  # an l0 search saves the ticket at --sparsity, not its Eq. 5 gates
                results["saved_ticket_sparsity"] = saved
        results["train_examples"] = len(data.train)
        results["torch_num_threads"] = torch.get_num_threads()  # bit-identical reruns need the same thread count
        results.update(precision)
        results.update(launch)
        results.update(early_start_info)
        if args.should_save:
            repo_id = hub_repo_id(args) if push_to_hub else None
            save_outputs(
                run_args, trainer, data, results, metric_rows, sparsity=sparsity, fresh_head=fresh_head, repo_id=repo_id
            )
    if run_args.data.write_train_predictions:
        write_train_predictions(run_args, trainer, data)
    if args.should_save:  # the results last: they mark the run finished
        write_results(args.output_dir, results)
    if trainer.is_world_process_zero():
        print_results(run_args, results, metric_rows, id_set_name(data.task))
    if args.should_save:  # last, so a failed upload leaves every local output in place
        push_outputs(run_args, srnet is not None, push_to_hub)
    return results


def check_sharded_outputs(run_args: RunArguments, trainer: SRNetTrainer) -> None:
    """Refuse, before training, the merged or compact checkpoint of a run under FSDP: merging rewrites the sharded
    layers. Such a run saves its masks; merging them is a one-process run after it."""
    model = run_args.model
    if trainer.is_fsdp_enabled and (model.save_merged or model.push_merged or model.save_compact):
        raise InputError(
            "--save_merged, --push_merged and --save_compact are not available under FSDP (the merge rewrites sharded "
            "layers). Train without them (the run saves its masks), then merge in one process: "
            "SRNetModel.from_pretrained(base_model, OUTPUT_DIR).merge_and_unload().save_pretrained(MERGED_DIR) "
            "(hf_srnets.SRNetModel; merge_and_unload(compact=True) for the compact model; docs/scale.md)"
        )


def print_results(run_args: RunArguments, results: dict[str, Any], metric_rows: list[MetricRow], id_name: str) -> None:
    """The results table, then the easy/hard subsets and F_bias when the run has them."""
    rows = [(name, key) for name, key, _ in metric_rows]
    ticket = results.get("saved_ticket_sparsity")
    saved = f", saved ticket {100 * ticket:.1f}%" if ticket is not None else ""
    sparsity = f"sparsity={100 * results['sparsity']:.1f}%{saved}"
    print(f"\nResults ({run_args.model.pruning}, loss={run_args.training.loss}, {sparsity}):")
    print(results_table(results, rows))
    easy_hard = easy_hard_table(results, id_name)
    if easy_hard:
        print(f"\nEasy and hard {id_name} examples ({results.get(f'eval_{id_name}_hard_subset', '')}):")
        print(easy_hard)
    f_bias = f_bias_table(results)
    if f_bias:
        print(f"\nRelative bias F_bias against {run_args.data.reference_results} (Du et al. 2023, §3.4):")
        print(f_bias)


def train(trainer: SRNetTrainer, args: Any) -> dict[str, Any]:
    """Train, save the model and the trainer state; return the training metrics (`train_*`, `train_steps`)."""
    train_result = trainer.train(resume_from_checkpoint=args.resume_from_checkpoint)
    trainer.save_model()
    results = {f"train_{k}" if not k.startswith("train") else k: v for k, v in train_result.metrics.items()}
    results["train_steps"] = train_result.global_step
    trainer.save_state()
    return results


def reference_results(run_args: RunArguments, data: RunData) -> tuple[dict[str, Any], str] | None:
    """`--reference_results`: the reference's results and their file, checked for the keys F_bias reads."""
    if not run_args.data.reference_results:
        return None
    reference, source = read_reference_results(run_args.data.reference_results)
    check_reference(reference, id_set_name(data.task), [s.name for s, _ in data.ood], source)
    return reference, source


def evaluate(
    trainer: SRNetTrainer, data: RunData, run_args: RunArguments, reference: tuple[dict[str, Any], str] | None = None
) -> tuple[dict[str, Any], list[MetricRow]]:
    """The ID dev set and every OOD set, by the task's evaluators (`run_evaluation`), and F_bias against the
    `reference` results (`--reference_results`): results and metric rows."""
    task, id_name = data.task, id_set_name(data.task)
    id_source = task.validation if not run_args.data.validation_file else SplitSource()
    results, rows = run_evaluation(trainer, task, id_name, data.validation_tok, data.ood_tok, id_source)
    if run_args.training.should_save:  # per example, from the logits just computed: tables pair runs by example
        write_eval_predictions(
            run_args.training.output_dir, trainer.eval_outputs, task, id_name, data.validation, data.ood
        )
    if data.hard_source is not None and f"eval_{id_name}_easy_examples" in results:
        results[f"eval_{id_name}_hard_subset"] = data.hard_source
    if reference is not None:
        results.update(f_bias_results(results, reference[0], id_name, [s.name for s, _ in data.ood_tok], reference[1]))
    return results, rows
