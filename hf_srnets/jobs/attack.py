"""One `run_attack.py` run from its parsed arguments (`hf_srnets.arguments.attack_arguments`), `run_attack`: the checks
before any work (recipes, resource models, data that is no output), the examples, then, holding the output dir's
lock, the victim and its classifier, each recipe's attack (resumed from its `attack_<recipe>.jsonl`), and the
results: `attack_results.json`, the `attack_<recipe>_*` metrics merged into `all_results.json`, and the card's attack
section (`write_results`)."""

from __future__ import annotations

import inspect
import logging
import os
from typing import Any

from datasets import Dataset

from ..arguments.attack_arguments import RESOURCE_OPTIONS, AttackDataArguments, AttackModelArguments, AttackRunArguments
from ..attack import (
    ATTACK_RECIPES,
    attack_examples,
    build_attack,
    build_classifier,
    dataset_examples,
    format_summary,
    load_victim,
    prefixed_metrics,
    results_path,
    select_indices,
    summarize_records,
)
from ..attack.use_encoder import USE_ENCODER_NAME
from ..compact.loading import check_model_path
from ..data import TaskSpec
from ..data.attack_samples import read_attack_sample
from ..data.splits import read_split
from ..data.tasks import resolve_task
from ..errors import InputError
from ..publish.card import update_card_attack_section
from ..run_files import (
    ATTACK_RESULTS_NAME,
    CARD_NAME,
    RESULTS_NAME,
    read_json_object,
    replaced_file,
    write_json,
)
from ..runner.data import position_limit_of
from ..training.output_dir import acquire_lock
from ..training.precision import warn_if_bf16_is_emulated

logger = logging.getLogger("run_attack")

AttackArguments = tuple[AttackModelArguments, AttackDataArguments, AttackRunArguments]


def check_recipes(run: AttackRunArguments) -> None:
    """Every `--recipes` name is a registered recipe."""
    unknown = [r for r in run.recipes if r not in ATTACK_RECIPES]
    if unknown:
        raise InputError(f"unknown --recipes {unknown}; choose from {sorted(ATTACK_RECIPES)}")


def check_resources(run: AttackRunArguments, cache_dir: str | None) -> None:
    """Before any work: `--sentence_encoder` and `--mlm_model`, when given, are models that exist
    (`check_model_path`; the Universal Sentence Encoder's name passes)."""
    if run.sentence_encoder and run.sentence_encoder != USE_ENCODER_NAME:
        check_model_path(run.sentence_encoder, "--sentence_encoder", cache_dir)
    if run.mlm_model:
        check_model_path(run.mlm_model, "--mlm_model", cache_dir)


def check_max_seq_length(run: AttackRunArguments, victim: Any, name: str) -> None:
    """`--max_seq_length` fits the victim's position limit, as run_glue_sparse.py checks it (a longer input fails
    at the first long text)."""
    limit = position_limit_of(victim.model.config, victim.tokenizer)
    if limit is not None and run.max_seq_length > limit:
        raise InputError(
            f"--max_seq_length {run.max_seq_length} is above the {limit} tokens {name} reads (its position limit): "
            f"use --max_seq_length {limit} or less"
        )


def check_data_is_no_output(data: AttackDataArguments, run: AttackRunArguments) -> None:
    """Before any work: `--attack_file` / `--data_file` must not be a file this run writes into `--output_dir` (a
    recipe's `attack_<recipe>.jsonl`, `attack_results.json`, `all_results.json`, the card), which the run would
    overwrite or append to while reading it."""
    written = [results_path(run.output_dir, recipe) for recipe in run.recipes]
    written += [os.path.join(run.output_dir, name) for name in (ATTACK_RESULTS_NAME, RESULTS_NAME, CARD_NAME)]
    for flag in ("attack_file", "data_file"):
        path = getattr(data, flag)
        same = next((w for w in written if path and os.path.realpath(path) == os.path.realpath(w)), None)
        if same is not None:
            alias = "" if os.path.abspath(path) == os.path.abspath(same) else f" ({same})"
            raise InputError(
                f"--{flag} {path}{alias} is a file this attack writes (its results in --output_dir "
                f"{run.output_dir}): attack the examples from another file, e.g. the original data, or choose "
                "another --output_dir"
            )


def load_attack_data(data: AttackDataArguments, task: TaskSpec, cache_dir: str | None) -> tuple[Dataset, str]:
    """The set to attack (canonical columns) and a description of where it came from (part of the settings)."""
    given = [o for o in ("attack_file", "data_file") if getattr(data, o)]
    if len(given) > 1:
        raise InputError("pass either --attack_file (a TextFooler sample) or --data_file, not both")
    if data.attack_file:
        return read_attack_sample(data.attack_file, task), f"textfooler:{os.path.abspath(data.attack_file)}"
    if data.data_file:
        dataset = read_split(task, task.label_names, name=None, file=data.data_file)
        return dataset, f"file:{os.path.abspath(data.data_file)}"
    source = task.attack_split if data.split == "attack" else getattr(task, data.split)
    if source is None:
        raise InputError(f"task {task.name!r} has no {data.split} split; use --split validation or --data_file")
    dataset = read_split(
        task,
        task.label_names,
        name=f"{task.name} {data.split}",
        source=source,
        data_dir=data.data_dir,
        cache_dir=cache_dir,
    )
    where = os.path.abspath(data.data_dir) if data.data_dir else source.hub_path
    return dataset, f"{task.name}:{data.split}:{where}"


def recipe_resources(recipe: str, run: AttackRunArguments, task: TaskSpec | None = None) -> dict[str, Any]:
    """The resource options the recipe takes (`--word_vectors`, ...; a given one it does not take is warned about),
    and the names of the task's texts (`text_columns`, which decide the texts a recipe keeps unchanged)."""
    given = {k: getattr(run, k) for k in RESOURCE_OPTIONS if getattr(run, k) is not None}
    if "pos_tagger" not in getattr(ATTACK_RECIPES.get(recipe), "uses", ("pos_tagger",)):
        given.pop("pos_tagger")  # always set (default "nltk"): passed only to the recipes with a POS constraint
    params = inspect.signature(ATTACK_RECIPES[recipe]).parameters if recipe in ATTACK_RECIPES else {}
    takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    unused = [k for k in given if k not in params and not takes_all]
    if unused:
        logger.warning(f"recipe {recipe} does not use --{', --'.join(unused)}")
    out = {k: v for k, v in given.items() if k in params or takes_all}
    if task is not None and (takes_all or "text_columns" in params):
        out["text_columns"] = tuple(name for name, _ in task.text_fields)
    return out


def place_resources(recipe: Any, device: str) -> None:
    """Move the recipe's sentence encoder (the one model besides the victim that its searches run) to `device`."""
    encoder = getattr(recipe, "loaded", {}).get("sentence_encoder")
    if hasattr(encoder, "to"):
        encoder.to(device)


def _settings(
    recipe: str, args: AttackArguments, data_desc: str, resources: dict[str, Any], weights: str
) -> dict[str, Any]:
    """What a recipe's JSONL was attacked with: a re-run resumes it only with the same settings."""
    model, data, run = args
    path = model.model_name_or_path
    return {
        "recipe": recipe,
        "model": os.path.abspath(path) if os.path.exists(path) else path,
        "model_weights_sha256": weights,
        "base_model": model.base_model,
        "task": data.task,
        "data": data_desc,
        # the first N rows are a prefix of the first N+k: a larger --num_examples extends the file
        "sample": {"seed": data.seed, "num_examples": data.num_examples} if data.seed is not None else "first",
        "query_budget": run.query_budget,
        "max_seq_length": run.max_seq_length,
        "resources": resources,
        # fp32, the default, is not written: a file attacked without a precision key resumes in fp32
        **({"precision": "bf16"} if run.bf16 else {}),
        # likewise the CPU: a GPU's kernels round differently, so its results are kept apart
        **({"device": "cuda"} if run.device != "cpu" else {}),
    }


def earlier_record(path: str, what: str) -> dict[str, Any] | None:
    """The record an earlier run wrote at `path` (`attack_results.json` with its `results` and `settings`, or
    `all_results.json`), None where there is none; an empty, cut or other-shaped file is an `InputError` naming it,
    raised before any attack (`check_earlier_records`) so no attack's work is lost to it."""
    if not os.path.isfile(path):
        return None
    record = read_json_object(path)
    shaped = record is not None and (
        os.path.basename(path) != ATTACK_RESULTS_NAME
        or all(isinstance(record.get(key), dict) for key in ("results", "settings"))
    )
    if not shaped:
        raise InputError(
            f"{path} ({what} of an earlier run) is empty, cut or not the JSON object hf_srnets writes: restore it, or "
            "delete it to keep only this run's results there, then run the attack again"
        )
    return record


def check_earlier_records(output_dir: str) -> None:
    """Refuse a damaged `attack_results.json` or `all_results.json` in `output_dir` before attacking."""
    earlier_record(os.path.join(output_dir, ATTACK_RESULTS_NAME), "attack results")
    earlier_record(os.path.join(output_dir, RESULTS_NAME), "the run's results")


def write_results(output_dir: str, summaries: dict[str, dict[str, Any]], settings: dict[str, Any]) -> dict:
    """attack_results.json, the attack_* metrics merged into all_results.json, and the card's attack section
    (each updated per recipe: recipes attacked by earlier runs into the same dir stay)."""
    path = os.path.join(output_dir, ATTACK_RESULTS_NAME)
    saved = earlier_record(path, "attack results") or {"results": {}, "settings": {}}
    saved["results"].update(summaries)
    saved["settings"].update(settings)
    write_json(path, saved, indent=2)
    metrics: dict[str, Any] = {}
    for recipe, summary in summaries.items():
        metrics.update(prefixed_metrics(recipe, summary))
    all_path = os.path.join(output_dir, RESULTS_NAME)
    merged = earlier_record(all_path, "the run's results") or {}
    merged.update(metrics)
    write_json(all_path, merged, indent=4, sort_keys=True)
    _update_card(output_dir, saved)
    return metrics


def _update_card(output_dir: str, saved: dict[str, Any]) -> None:
    """The attack section of the model card in `output_dir`, when there is one, from every recipe's results."""
    card = os.path.join(output_dir, CARD_NAME)
    if os.path.isfile(card):
        with open(card, encoding="utf-8") as f:
            text = f.read()
        with replaced_file(card) as f:
            f.write(update_card_attack_section(text, saved["results"], saved["settings"]))


def _examples(data: AttackDataArguments, dataset: Dataset) -> list:
    """The examples to attack; asking for more than the set holds is warned about (all are attacked)."""
    if data.num_examples is not None and data.num_examples > len(dataset):
        logger.warning(
            f"--num_examples {data.num_examples} but the set has only {len(dataset)} rows: attacking all "
            f"{len(dataset)} (N={len(dataset)} in the results)"
        )
    return dataset_examples(dataset, select_indices(len(dataset), data.num_examples, data.seed))


def _victim_classifier(model_args: AttackModelArguments, run: AttackRunArguments, task: TaskSpec) -> tuple[Any, Any]:
    """The victim (checkpoint or mask dir, on `--device`) and the classifier the recipes query."""
    victim = load_victim(
        model_args.model_name_or_path,
        task,
        base_model=model_args.base_model,
        cache_dir=model_args.cache_dir,
        check_fingerprint=model_args.check_fingerprint,
    )
    check_max_seq_length(run, victim, model_args.model_name_or_path)
    victim.model.to(run.device)
    classifier = build_classifier(
        victim,
        task,
        batch_size=run.batch_size,
        max_length=run.max_seq_length,
        cache_size=run.cache_size,
        query_budget=run.query_budget,
        precision="bf16" if run.bf16 else "fp32",
    )
    if run.bf16:
        warn_if_bf16_is_emulated(classifier.device.type)
    return victim, classifier


def _attack_recipe(
    name: str, args: AttackArguments, task: TaskSpec, victim: Any, classifier: Any, examples: list, data_desc: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One recipe over the examples (resuming its JSONL): its summary and its settings."""
    _, data, run = args
    recipe = build_attack(name, **recipe_resources(name, run, task))
    place_resources(recipe, run.device)
    used = recipe.resources_used() if hasattr(recipe, "resources_used") else {}
    settings = _settings(name, args, data_desc, used, victim.fingerprint)
    if data.num_examples is not None:
        settings["num_examples_requested"] = data.num_examples
    records = attack_examples(
        recipe,
        classifier,
        examples,
        results_path(run.output_dir, name),
        settings,
        overwrite=run.overwrite_output_dir,
        disable_tqdm=run.disable_tqdm,
        num_workers=run.num_workers,
    )
    summary = summarize_records(records)
    logger.info(f"{name} on {len(examples)} examples of {data_desc}: {format_summary(summary)}")
    return summary, settings


def _attack_all(args: AttackArguments, task: TaskSpec, examples: list, data_desc: str) -> dict[str, Any]:
    """Every recipe on the victim, then the results written (`write_results`); the attack_* metrics."""
    model_args, _, run = args
    victim, classifier = _victim_classifier(model_args, run, task)
    summaries, settings = {}, {}
    for name in run.recipes:
        summaries[name], settings[name] = _attack_recipe(name, args, task, victim, classifier, examples, data_desc)
    return write_results(run.output_dir, summaries, settings)


def run_attack(model_args: AttackModelArguments, data: AttackDataArguments, run: AttackRunArguments) -> dict[str, Any]:
    """Check the options, read the examples, and, holding the output dir's lock, attack them with every recipe;
    return the attack_* metrics merged into all_results.json."""
    args = (model_args, data, run)
    check_recipes(run)
    check_resources(run, model_args.cache_dir)
    check_data_is_no_output(data, run)
    task = resolve_task(data.task)
    dataset, data_desc = load_attack_data(data, task, model_args.cache_dir)
    examples = _examples(data, dataset)
    lock = acquire_lock(run.output_dir)  # the lock of training runs: one writer per dir
    try:
        check_earlier_records(run.output_dir)
        return _attack_all(args, task, examples, data_desc)
    finally:
        lock.release()
