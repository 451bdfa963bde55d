"""What a run's model card says about it: the data it read, its effective settings, and a load snippet that runs.

The card states what was run, not what the flags or the task's defaults suggest:

* Data (`card_data.describe_splits`): each split's actual origin and how many rows were used.
* Settings (`card_training_args`, `schedule_description`): read from the mask config the run used (the
  effective Δt_φ, schedule, classifier training), not from the raw flags, whose `None` means "a default".
* Loading (`card_usage.usage_snippet`): the weights the masks were searched on
  (`srnet_config.base_model_name_or_path`, which is `<output_dir>/early_start` after an early start), the run's
  labels (a pre-trained base gets a new head of the right size and names), and no local absolute paths in a card
  meant for the Hub.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from typing import Any

from ..data.tasks import TaskSpec, id_set_name
from ..pruning import PruningConfig, PruningMethod, resolve_pruning
from ..pruning.base import CardContext
from ..resources.model_location import is_local_path
from ..run_files import MODEL_CONFIG_NAME, SRNET_CONFIG_NAME
from .card_data import SplitUse, training_datasets
from .card_usage import compact_usage, is_hub_snapshot, merged_usage, portable, usage_snippet


@dataclass(frozen=True)
class RunDescription:
    """What a run was, as its card states it: the run's arguments as plain values.

    Attributes:
        model_name_or_path: The model the run started from (a Hub id or a local dir).
        output_dir: Where the run saved its model or masks.
        do_train: Whether it trained (an evaluation-only run saves no model).
        pruning: `--pruning` as given (`none`, a registered method or an alias such as `mask`).
        mask_from: The masks whose subnetwork the run fine-tuned in isolation (`--mask_from`), or None.
        early_start_patience: `--early_start_patience`, or None.
        loss: The training loss, and `loss_options` its settings as used (all of them, defaults filled).
        step_objective: The step objective (`none` for plain training) and `step_objective_options` its settings.
        learning_rate, per_device_train_batch_size, seed, num_train_epochs, max_steps: The Trainer's settings.
        mask_learning_rate: `--mask_learning_rate` (None: the mask parameters used `learning_rate`).
        mask_weight_decay, select_best_after: The settings of the mask parameters and of best-model selection.
        precision: `bf16`, `fp16` or `fp32`.
        world_size, distributed_type, gradient_accumulation_steps, global_train_batch_size: The processes the launch
            gave the run, their distributed type and the examples of one update (`training.launch.launch_facts`).
        max_seq_length: The truncation length in tokens.
        reference_results: `--reference_results` (the run F_bias compares with), or None.
    """

    model_name_or_path: str
    output_dir: str
    do_train: bool = True
    pruning: str = "none"
    mask_from: str | None = None
    early_start_patience: int | None = None
    loss: str = "ce"
    loss_options: dict[str, Any] = field(default_factory=dict)
    step_objective: str = "none"
    step_objective_options: dict[str, Any] = field(default_factory=dict)
    learning_rate: float = 5e-5
    per_device_train_batch_size: int = 8
    seed: int = 42
    num_train_epochs: float = 3.0
    max_steps: int = -1
    mask_learning_rate: float | None = None
    mask_weight_decay: float = 0.0
    select_best_after: float = 0.0
    precision: str = "fp32"
    world_size: int = 1
    distributed_type: str = "NO"
    gradient_accumulation_steps: int = 1
    global_train_batch_size: int | None = None
    max_seq_length: int = 128
    reference_results: str | None = None

    def card_context(self) -> CardContext:
        """What the pruning method's card text may use (`PruningMethod.card_settings`, `search_description`)."""
        return CardContext(
            mask_learning_rate=self.mask_learning_rate or self.learning_rate,
            mask_weight_decay=self.mask_weight_decay,
            select_best_after=self.select_best_after,
            portable=portable,
        )


@dataclass
class CardFacts:
    """Everything a model card states about a run: `render_model_card` fills the template from these.

    Attributes:
        title: The card's heading and its model-index name (the Hub repo's or the output dir's name).
        task: The task's registry name (a metadata tag, and the ID set's name when `id_name` is None).
        task_display: How the summary names the task; None: `task`.
        base_model: The Hub id of the base model (metadata `base_model`); None for a local model.
        base_name: How the summary names the base model; None: `base_model`.
        base_note: Which base weights the masks apply to, when the name alone does not say; None: nothing to add.
        holds: What the mask repo holds, in words; None: the card says so for masks only.
        pruning: `--pruning` as given; `none` for a dense model.
        schedule: The search in words (`schedule_description`), or None.
        loss: The training loss.
        step_objective: The step objective; `none` for plain training.
        bias_model: The bias model in words, or None.
        sparsity_report: `SRNetModel.sparsity_report` of the saved masks; None when not pruned.
        citations: BibTeX keys the pruning method asks the card to cite.
        results: The run's metrics (`all_results.json`).
        id_name: The ID evaluation set's name in the result keys; None: `task`.
        reference_results: How the card names the reference run of F_bias, or None.
        metric_rows: (set name, result key, model-index dataset) of each row of the results table.
        splits: The data as read (`describe_splits`); None: not recorded, and each metric row's dataset is entered
            in the model index as given.
        datasets: Hub ids of the training data (metadata `datasets`).
        usage: Code that loads the model.
        training_args: The settings table, setting -> value.
        merged: The card is that of the merged checkpoint.
        compact: What `--save_compact` removed (`compact_model`'s report); None for a dense-sized checkpoint.
        trained: Whether the run trained (False: an evaluation-only run, whose card says it trained nothing).
    """

    title: str
    task: str
    task_display: str | None = None
    base_model: str | None = None
    base_name: str | None = None
    base_note: str | None = None
    holds: str | None = None
    pruning: str = "none"
    schedule: str | None = None
    loss: str = "ce"
    step_objective: str = "none"
    bias_model: str | None = None
    sparsity_report: dict[str, Any] | None = None
    citations: tuple[str, ...] = ()
    results: dict[str, Any] = field(default_factory=dict)
    id_name: str | None = None
    reference_results: str | None = None
    metric_rows: list[tuple[str, str, Any]] = field(default_factory=list)
    splits: list[SplitUse] | None = None
    datasets: list[str] = field(default_factory=list)
    usage: str = ""
    training_args: dict[str, Any] = field(default_factory=dict)
    merged: bool = False
    compact: dict[str, Any] | None = None
    trained: bool = True


def search_method(pruning: str) -> type[PruningMethod] | None:
    """The registered pruning method a run's `--pruning` names (`mask` -> `threshold`, `imp`/`imp-rw` ->
    `magnitude`), or None for `none` (also with `--mask_from`, which fine-tunes a found subnetwork)."""
    return None if pruning == "none" else resolve_pruning(pruning)[0]


def schedule_description(run: RunDescription, mask_config: PruningConfig | None = None) -> str | None:
    """The search in words, from the effective pruning config (`srnet.srnet_config`) of the run."""
    if run.mask_from:
        masks = portable(run.mask_from)
        return f"weights fine-tuned in isolation under the fixed masks of `{masks}` (paradigm b)"
    method, cfg = search_method(run.pruning), mask_config
    if cfg is None:
        return None
    described = method.search_description(cfg, run.card_context()) if method is not None else None
    units = UNIT_WORDS.get(cfg.mask_granularity, "")
    where = "per layer" if cfg.sparsity_scope == "local" else "over all layers"
    return described + units.format(block=cfg.block_size, where=where) if described and units else described


# how a structured search's unit reads on the card (`--mask_granularity`); element masks add nothing
UNIT_WORDS = {
    "block": "; the masks keep or prune {block}×{block} tiles (--mask_granularity block)",
    **{
        name: "; the masks keep or prune whole FFN units and attention heads, ⌊s·n⌋ of each {where} "
        f"(--mask_granularity {name})"
        for name in ("hybrid", "neuron")
    },
    "nm": "; the masks keep N of every M consecutive input weights (--mask_granularity nm, N:M semi-structured)",
    "ffn": "; the masks keep or prune whole FFN units, ⌊s·n⌋ {where}, attention stays dense (--mask_granularity ffn)",
    "head": "; the masks keep or prune whole attention heads, ⌊s·H⌋ {where}, the FFN stays dense "
    "(--mask_granularity head)",
}


def card_training_args(
    run: RunDescription,
    num_train: int,
    mask_config: PruningConfig | None = None,
    train_steps: int | None = None,
) -> dict[str, Any]:
    """The settings of the run as used, then the pruning method's own (`PruningMethod.card_settings`, read from
    the effective config)."""
    out: dict[str, Any] = {
        "pruning": run.pruning,
        "loss": run.loss,
        **run.loss_options,  # the loss's settings as used (focal's γ, PoE's ...): a card states what trained
        "training examples": num_train,
        "learning_rate": run.learning_rate,
        "per_device_train_batch_size": run.per_device_train_batch_size,
        "processes": f"{run.world_size} ({run.distributed_type})",
        "seed": run.seed,
        "max_seq_length": run.max_seq_length,
        "precision": run.precision,
    }
    if run.global_train_batch_size is not None:  # examples per update, over processes and accumulation steps
        out["global batch"] = run.global_train_batch_size
    if run.max_steps is not None and run.max_steps > 0:
        out["max_steps"] = run.max_steps
    else:
        out["num_train_epochs"] = run.num_train_epochs
    if train_steps is not None:
        out["training steps"] = train_steps
    if run.early_start_patience is not None:
        out["early_start_patience"] = run.early_start_patience
    if run.step_objective != "none":  # the step objective and its settings (FreeLB's K, η, ε₀, bound, norm)
        out.update({"step_objective": run.step_objective, **run.step_objective_options})
    method = search_method(run.pruning)
    if method is not None and mask_config is not None:
        out.update(method.card_settings(mask_config, run.card_context()))
    return out


def _inside(path: str, directory: str) -> bool:
    path, directory = os.path.realpath(path), os.path.realpath(directory)
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _is_hub_id(name: str | None) -> bool:
    return bool(name) and not is_local_path(str(name))


def base_weights(base: str, *, output_dir: str, for_hub: bool, pretrained: str | None = None) -> tuple[str, str | None]:
    """How a card names the weights the masks apply to: (name for the snippet, note or None).

    In a card for the Hub a local dir becomes a portable name and the note says which weights are meant; a base
    inside the run's output dir (the early-start checkpoint) is not in the mask repo, so the note says so.
    """
    if _is_hub_id(base):
        return base, None
    origin = f" fine-tuned from `{portable(pretrained)}`" if pretrained and pretrained != base else ""
    if _inside(base, output_dir):
        where = os.path.relpath(os.path.realpath(base), os.path.realpath(output_dir))
        note = (
            f"the masks apply to the run's `{where}/` checkpoint{origin} (not part of the mask repo); "
            "the merged checkpoint needs no base"
        )
        return (portable(base) if for_hub else base), note
    if not for_hub:
        return base, None
    name = portable(base)
    if is_hub_snapshot(base):
        return name, None
    return name, (
        f"`{name}` was a local checkpoint: load the same weights ({SRNET_CONFIG_NAME} records their fingerprint, "
        "which SRNetModel.from_pretrained checks)"
    )


def _card_id2label(srnet: Any, model: Any) -> dict[int, str] | None:
    """The run's labels, from the model the masks wrap (or the plain model)."""
    config = getattr(getattr(srnet, "base_model", model), "config", None) or getattr(model, "config", None)
    return dict(getattr(config, "id2label", None) or {}) or None


def _mask_repo_holds(srnet: Any, random_head: bool) -> str:
    """What a mask repo holds: the masks only, with the classifier, or with every weight trained under them
    (`srnet.fixed_masks`: the weights trained under fixed masks rather than the masks over frozen weights)."""
    cfg = srnet.srnet_config
    searched = not srnet.fixed_masks
    trained = srnet.trained_base_tensors()
    classifier_only = searched and cfg is not None and cfg.trainable_classifier
    masks = "the entropy-coded masks"
    if srnet.search_state_tensors():
        masks += f" (the ticket), {srnet.method.search_state_words}"
    if searched and not trained:
        holds = f"the mask config and {masks} only; every weight comes from the base model"
    elif classifier_only:
        holds = (
            f"the mask config, {masks} and the classifier trained with them; every other weight comes from the "
            "base model"
        )
    else:
        holds = (
            f"the mask config, {masks} and the weights trained under them (all of the model's weights); the base "
            "model gives the architecture"
        )
    if random_head:
        holds += (
            ". **Warning:** the classifier was newly initialised and not trained (--trainable_classifier false), "
            "so it is not saved: every load draws another random classifier, and the results above cannot be "
            "reproduced from these files"
        )
    return holds


def _records_pruned_heads(path: str) -> bool:
    """Whether the local checkpoint at `path` is head-pruned (`srnet_pruned_heads` in its config.json)."""
    config = os.path.join(path, MODEL_CONFIG_NAME)
    if not os.path.isfile(config):
        return False
    with open(config, encoding="utf-8") as f:
        return bool(json.load(f).get("srnet_pruned_heads"))


def _card_loading(
    run: RunDescription, srnet: Any, id2label: dict[int, str] | None, repo_id: str | None, random_head: bool
) -> tuple[str, str | None, str | None, str]:
    """How the card loads the run's model: (base model name, note on the base, what the repo holds, snippet)."""
    location = repo_id or run.output_dir
    pretrained = run.model_name_or_path
    if srnet is None:
        base = portable(pretrained) if repo_id else pretrained
        # an evaluation-only run saves no model: the card loads the model it evaluated
        loaded = run.output_dir if run.do_train else pretrained
        head_pruned = _records_pruned_heads(loaded)
        snippet = usage_snippet(location if run.do_train else base, pruned=False, head_pruned=head_pruned)
        return base, None, None, snippet
    cfg = srnet.srnet_config
    searched_on = (cfg.base_model_name_or_path if cfg is not None else None) or pretrained
    base, base_note = base_weights(
        searched_on, output_dir=run.output_dir, for_hub=repo_id is not None, pretrained=pretrained
    )
    usage = usage_snippet(location, pruned=True, base=base, id2label=id2label, base_note=base_note)
    return base, base_note, _mask_repo_holds(srnet, random_head), usage


def run_card_facts(
    run: RunDescription,
    *,
    task: TaskSpec,
    results: dict[str, Any],
    metric_rows: list[tuple[str, str, Any]],
    splits: list[SplitUse],
    bias_desc: str | None,
    srnet: Any,
    model: Any,
    repo_id: str | None,
    random_head: bool = False,
) -> CardFacts:
    """The facts of a finished run's card.

    `random_head`: the classifier was newly initialised and neither trained nor saved (`--trainable_classifier
    false` on a pre-trained model); the card then warns that loading draws another random head.

    `srnet` is the run's `SRNetModel` (None when unpruned), `model` the trained model (for its labels). `repo_id`
    is the Hub repo the card is for; None writes a card for the local output dir (its paths as given).
    """
    cfg = srnet.srnet_config if srnet is not None else None
    pretrained = run.model_name_or_path
    base, base_note, holds, usage = _card_loading(run, srnet, _card_id2label(srnet, model), repo_id, random_head)
    hub_base = pretrained if _is_hub_id(pretrained) else None
    return CardFacts(
        title=repo_id.split("/")[-1] if repo_id else os.path.basename(os.path.normpath(run.output_dir)),
        task=task.name,
        task_display=task.display_name or task.name,
        base_model=hub_base,
        base_name=base if srnet is not None else (hub_base or portable(pretrained)),
        base_note=base_note,
        holds=holds,
        pruning=run.pruning,
        schedule=schedule_description(run, cfg),
        loss=run.loss,
        step_objective=run.step_objective,
        bias_model=bias_desc,
        # the masks the run saves: for a method that saves a ticket (l0), that ticket, not the masks it evaluates with
        sparsity_report=srnet.sparsity_report(srnet.method.saved_masks(srnet)) if srnet is not None else None,
        citations=tuple(srnet.method.citations) if srnet is not None else (),
        results=results,
        id_name=id_set_name(task),
        reference_results=reference_name(run.reference_results, for_hub=repo_id is not None),
        metric_rows=metric_rows,
        splits=splits,
        datasets=training_datasets(splits, task),
        usage=usage,
        training_args=card_training_args(run, results.get("train_examples", 0), cfg, results.get("train_steps")),
        trained=run.do_train,
    )


def reference_name(path: str | None, *, for_hub: bool) -> str | None:
    """How a card names `--reference_results`: as given, or in a card for the Hub the portable name of the
    reference run's dir (no local absolute paths)."""
    if not path:
        return None
    if not for_hub:
        return path
    run_dir = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    return portable(run_dir)


def merged_card_facts(facts: CardFacts, location: str, compact_report: dict[str, Any] | None = None) -> CardFacts:
    """The card of the merged checkpoint at `location` (a local dir or Hub repo id) from the run's card facts;
    `compact_report` (from `--save_compact`) says what was removed physically and how the checkpoint loads."""
    needs_loader = bool(compact_report) and _compact_needs_loader(compact_report)
    return dataclasses.replace(
        facts,
        merged=True,
        compact=compact_report,
        holds=None,
        base_note=None,
        base_name=portable(facts.base_name) or facts.base_name,
        usage=compact_usage(location) if needs_loader else merged_usage(location),
    )


def _compact_needs_loader(report: dict[str, Any]) -> bool:
    """Whether the compact checkpoint records removed heads or per-layer FFN widths in its config (`save_merged`
    fills `stock_checkpoint`), so that it loads with `hf_srnets.load_pretrained_model` only."""
    return not report.get("stock_checkpoint", False)
