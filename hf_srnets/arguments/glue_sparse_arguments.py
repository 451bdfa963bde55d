"""The options of `run_glue_sparse.py`: one parser over the model, data, pruning and training dataclasses.

The pruning options are the fields of `PruningConfig` (common to every method) and the own fields of each
registered method's `config_class`, read from the registry when the parser is built, so a method registered at any
time (a test, a plugin) gets its flags; the same holds for a loss's `options_class` (`--distil_lambda`,
`--focal_gamma`), a step objective's (`--adv_steps`) and the file flag of a per-example column a plugin registered
(`hf_srnets.arguments.column_options`). `--pruning` picks the method (`resolve_pruning`: `mask`, `imp`, `imp-rw` or a
method name) and its config is built from the options given. An option given that the run would not use is an
error naming it (`refuse_unused_options`): another method's, loss's or step objective's option, a plugin column's
file that the loss does not read, any pruning option with `--pruning none` (with or without `--mask_from`, whose
masks keep their own settings), and an option that the method's other settings leave unused (`--block_size` without
`--mask_granularity block`, `--sparsity` with `--pruning random`, ...), which the method's config names
(`PruningConfig.unused_options`).
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from dataclasses import dataclass
from typing import Any

from ..data.tasks import id_set_name, registered_set, resolve_task
from ..data.transforms import DATA_TRANSFORMS, get_data_transform
from ..errors import InputError
from ..losses import LOSSES
from ..objectives import OBJECTIVES
from ..pruning import PRUNING_METHODS, PruningConfig, PruningMethod, pruning_choices, resolve_pruning
from ..resources.auto_loading import auto_from_pretrained
from ..training.arguments import SRNetTrainingArguments
from ..training.precision import cpu_bf16_overrides
from .column_options import check_column_files, column_options_class, plugin_column_files, refuse_unread_columns
from .model_data_arguments import DataArguments, ModelArguments, check_vectors_apply
from .parser import SRNetArgumentParser, cli_field_names

logger = logging.getLogger(__name__)


@dataclass
class RunArguments:
    """A run's arguments: `pruning` is the selected method's config (None for `--pruning none`), `objective` the
    options of the `--step_objective` (None without one, or for one without options), `loss_options`
    the options of `--loss` (None for a loss without options), `transform_options` those of `--data_transform` (None
    without one) and `given` the options given explicitly (config file and command line), by field name."""

    model: ModelArguments
    data: DataArguments
    pruning: PruningConfig | None
    training: SRNetTrainingArguments
    given: dict[str, Any] = dataclasses.field(default_factory=dict)
    objective: Any | None = None
    loss_options: Any | None = None
    transform_options: Any | None = None

    @property
    def method(self) -> type[PruningMethod] | None:
        """The pruning method of the run, None without pruning."""
        return None if self.model.pruning == "none" else resolve_pruning(self.model.pruning)[0]


def objective_options_classes() -> dict[str, type]:
    """Each registered step objective with options -> its `options_class`."""
    return {name: cls.options_class for name, cls in OBJECTIVES.items() if cls.options_class is not None}


def transform_options_classes() -> dict[str, type]:
    """Each registered data transform with options -> its `options_class`."""
    return {name: cls.options_class for name, cls in DATA_TRANSFORMS.items() if cls.options_class is not None}


def loss_options_classes() -> dict[str, type]:
    """Each registered loss with options -> its `options_class` (several losses may share one, or a field)."""
    return {name: cls.options_class for name, cls in LOSSES.items() if cls.options_class is not None}


def loss_option_owners() -> dict[str, list[str]]:
    """Each loss option (a field of an `options_class`) -> the losses that have it, sorted."""
    owners: dict[str, list[str]] = {}
    for name, options_class in sorted(loss_options_classes().items()):
        for option in sorted(cli_field_names(options_class)):
            owners.setdefault(option, []).append(name)
    return owners


def build_parser() -> SRNetArgumentParser:
    """The parser of every option, pruning methods', losses', step objectives' and plugin columns' from the
    registries as they are now (an option several dataclasses share is declared once)."""
    configs = [method.config_class for method in PRUNING_METHODS.values()]
    losses = list(dict.fromkeys(loss_options_classes().values()))
    objectives = list(objective_options_classes().values())
    columns = [c for c in [column_options_class()] if c is not None]
    transforms = list(dict.fromkeys(transform_options_classes().values()))
    return SRNetArgumentParser(
        [ModelArguments, DataArguments, *columns, *transforms, PruningConfig, *configs, SRNetTrainingArguments,
         *losses, *objectives]
    )  # fmt: skip


SCORE_OPTIONS = ("mask_learning_rate", "mask_weight_decay")  # training options of the methods that train scores


def method_options() -> dict[str, list[str]]:
    """Each option that only some methods have (a method config's own field, in declaration order) -> the methods
    that have it; `mask_learning_rate` and `mask_weight_decay` belong to the methods that train scores."""
    common = cli_field_names(PruningConfig)
    owners: dict[str, list[str]] = {}
    for name, method in PRUNING_METHODS.items():
        for field in dataclasses.fields(method.config_class):
            if field.name in cli_field_names(method.config_class) - common:
                owners.setdefault(field.name, []).append(name)
    scorers = sorted(name for name, method in PRUNING_METHODS.items() if method.trains_scores)
    if scorers:
        owners.update({option: scorers for option in SCORE_OPTIONS})
    return owners


def build_training_arguments(parser: SRNetArgumentParser, given: dict[str, Any]) -> SRNetTrainingArguments:
    """`SRNetTrainingArguments` from the given options; a combination `TrainingArguments` refuses (its `ValueError`,
    e.g. `--bf16 true --fp16 true`) is an `InputError` naming the options."""
    if given.get("bf16") and given.get("fp16"):
        raise InputError(
            "--bf16 and --fp16 are both true, but a run has one mixed precision: keep --bf16 true (a GPU with bf16, "
            "or the CPU) or --fp16 true (other GPUs), not both"
        )
    try:
        return parser.build(SRNetTrainingArguments, given, **cpu_bf16_overrides(given))
    except InputError:
        raise
    except ValueError as err:
        reason = " ".join(str(err).split())
        raise InputError(
            f"the training options do not go together: {reason} (transformers' TrainingArguments): change the "
            "--options it names"
        ) from None


def parse_args(argv: list[str] | None = None) -> RunArguments:
    """Parse flags; a leading `.json`/`.yaml` file gives options and later flags override them."""
    parser = build_parser()
    given = parser.given_options(list(sys.argv[1:] if argv is None else argv))
    model = parser.build(ModelArguments, given)
    data = parser.build(DataArguments, given, column_files=plugin_column_files(given))
    training = build_training_arguments(parser, given)
    pruning = None
    if model.pruning != "none":
        method, overrides = resolve_pruning(model.pruning)
        pruning = parser.build(method.config_class, given, **overrides)
    objective = objective_options(parser, training, given)
    transform = transform_options(parser, data, given)
    losses = loss_options(parser, training, given)
    return RunArguments(model, data, pruning, training, given, objective, losses, transform)


def transform_options(parser: SRNetArgumentParser, data: DataArguments, given: dict[str, Any]) -> Any | None:
    """The `--data_transform`'s options from their flags (None without a transform, or for one without options);
    another transform's flags, or any without `--data_transform`, are refused."""
    owners = {o: name for name, cls in transform_options_classes().items() for o in cli_field_names(cls)}
    foreign = sorted(o for o, name in owners.items() if given.get(o) is not None and name != data.data_transform)
    if foreign:
        name, now = owners[foreign[0]], data.data_transform
        context = "without --data_transform" if now is None else f"with --data_transform {now}"
        raise InputError(
            f"{', '.join(f'--{o}' for o in foreign)} configure --data_transform {name} and would do nothing "
            f"{context}: add --data_transform {name}, or drop them."
        )
    if data.data_transform is None:
        return None
    transform = get_data_transform(data.data_transform)  # an unknown name: one line listing them
    options_class = type(transform).options_class
    return None if options_class is None else parser.build(options_class, given)


def loss_options(parser: SRNetArgumentParser, training: SRNetTrainingArguments, given: dict[str, Any]) -> Any:
    """The `--loss`'s options, from its own flags (or `--loss_options`), also set as `training.loss_options` for
    the trainer; None for a loss without options."""
    options_class = loss_options_classes().get(training.loss)
    return _plugin_options(parser, given, options_class, training, "loss_options", f"--loss {training.loss}")


def objective_options(parser: SRNetArgumentParser, training: SRNetTrainingArguments, given: dict[str, Any]) -> Any:
    """The `--step_objective`'s options, from its own flags (or `--step_objective_options`), also set as
    `training.step_objective_options` for the trainer; None without a step objective that has options."""
    options_class = objective_options_classes().get(training.step_objective)
    what = f"--step_objective {training.step_objective}"
    return _plugin_options(parser, given, options_class, training, "step_objective_options", what)


def _plugin_options(
    parser: SRNetArgumentParser,
    given: dict[str, Any],
    options_class: type | None,
    training: SRNetTrainingArguments,
    field: str,
    what: str,
) -> Any:
    """A registered plugin's `options_class` instance, from its own flags or from the JSON field `field` of the
    training arguments (not both), written back to `field` as a mapping for the trainer; None without options."""
    if options_class is None:
        return None
    flags = sorted(name for name in cli_field_names(options_class) if given.get(name) is not None)
    as_json = getattr(training, field)
    if as_json and flags:
        raise InputError(
            f"{', '.join(f'--{f}' for f in flags)} and --{field} both set {what}'s options: give them one way"
        )
    if as_json:
        return options_class(**as_json)
    options = parser.build(options_class, given)
    setattr(training, field, dataclasses.asdict(options))
    return options


def refuse_other_objectives_options(run: RunArguments) -> None:
    """Raise `InputError` for step-objective options given without selecting their objective."""
    for name, options_class in objective_options_classes().items():
        if name == run.training.step_objective:
            continue
        flags = sorted(o for o in cli_field_names(options_class) if _given(run, o))
        if flags:
            raise InputError(
                f"{', '.join(f'--{f}' for f in flags)} configure --step_objective {name} and would do nothing "
                f"with --step_objective {run.training.step_objective}: add --step_objective {name}, or drop them."
            )


def refuse_other_losses_options(run: RunArguments) -> None:
    """Raise `InputError` for loss options given that the selected `--loss` does not have."""
    loss = run.training.loss
    owners = loss_option_owners()
    foreign = [o for o in owners if _given(run, o) and loss not in owners[o]]
    if not foreign:
        return
    losses = sorted({name for o in foreign for name in owners[o]})
    flags, verb = ", ".join(f"--{o}" for o in foreign), "configures" if len(foreign) == 1 else "configure"
    them = "it" if len(foreign) == 1 else "them"
    raise InputError(
        f"{flags} {verb} --loss {' / '.join(losses)} and would do nothing with --loss {loss}: use --loss "
        f"{' or '.join(losses)}, or drop {them}."
    )


def refuse_other_methods_options(run: RunArguments) -> None:
    """Raise `InputError` for options given that only other methods than the selected one have."""
    method = run.method
    own = cli_field_names(method.config_class) if method is not None else set()
    if method is not None and method.trains_scores:
        own.update(SCORE_OPTIONS)
    owners = method_options()
    foreign = [o for o in owners if _given(run, o) and o not in own]
    if not foreign:
        return
    methods = sorted({m for o in foreign for m in owners[o]})
    titles = {PRUNING_METHODS[m].title for m in methods}
    what = titles.pop() if len(methods) == 1 and None not in titles else f"--pruning {' / '.join(methods)}"
    raise InputError(
        f"{', '.join(f'--{o}' for o in foreign)} configure {what} and would do nothing with --pruning "
        f"{run.model.pruning}: use --pruning {' or '.join(methods)}, or drop them."
    )


def _given(run: RunArguments, option: str) -> bool:
    """Whether `option` was set explicitly (config file or command line) to a value (`null` in a file is unset)."""
    return run.given.get(option) is not None


def _unused_common_options(run: RunArguments) -> tuple[list[str], str]:
    """With `--pruning none`: the common pruning options given, and why they do nothing."""
    options = sorted(o for o in cli_field_names(PruningConfig) if _given(run, o))
    if run.model.mask_from:
        why = (
            f"--pruning none --mask_from {run.model.mask_from} retrains the masks saved there as they are (their "
            "sparsity, targets and granularity are read from that folder)"
        )
    else:
        why = "--pruning none fine-tunes the whole model without masks"
    return options, why


def refuse_unused_options(run: RunArguments) -> None:
    """Raise `InputError` naming each pruning option given that the run would not use, and why; another method's
    options first (`refuse_other_methods_options`), another step objective's (`refuse_other_objectives_options`),
    another loss's (`refuse_other_losses_options`) and a plugin column's file the loss does not read
    (`refuse_unread_columns`)."""
    refuse_other_methods_options(run)
    refuse_other_objectives_options(run)
    refuse_other_losses_options(run)
    refuse_unread_columns(run.training.loss, run.given)
    if run.pruning is None:
        options, why = _unused_common_options(run)
        if options:
            them = "it" if len(options) == 1 else "them"
            raise InputError(
                f"{', '.join(f'--{o}' for o in options)} would do nothing: {why}. Drop {them}, or search masks "
                f"with --pruning {' / '.join(pruning_choices())}."
            )
        return
    fields = cli_field_names(type(run.pruning))
    for option, why in run.pruning.unused_options().items():  # the config knows its settings: see its docstring
        if option in fields and _given(run, option):
            raise InputError(f"--{option} would do nothing with --pruning {run.model.pruning}: {why}. Drop it.")


def validate_args(run: RunArguments) -> None:
    """The checks that need several dataclasses together; turns training on for a search (`--do_train`)."""
    model, data, args = run.model, run.data, run.training
    if model.early_start_patience is not None and not (args.eval_strategy == "steps" and args.eval_steps):
        raise InputError(
            "--early_start_patience needs --eval_strategy steps --eval_steps N (the patience counts evaluations)"
        )
    if model.mask_from and model.pruning != "none":
        raise InputError("--mask_from fine-tunes a fixed subnetwork: use it with --pruning none")
    refuse_unused_options(run)
    validate_compact(run)
    if run.pruning is not None:
        validate_method(run)
    check_column_files(args.loss, data)
    refuse_unused_bias_options(data)
    for spec in data.ood_file:
        if "=" not in spec:  # NAME alone: a set registered for the task, e.g. mnli_hard_matched
            registered_set(resolve_task(data.task, data.task_labels), spec)
    check_unique_set_names(data)


def check_unique_set_names(data: DataArguments) -> None:
    """Every evaluated set names its metrics (`eval_<name>_*`) and its predictions file (`eval_predictions/<name>
    .jsonl`): an `--ood_file` named as the ID dev set, or as a set the `--data_transform` makes, would overwrite
    them silently (issue 70). One line naming the clash and the fix, before any work."""
    task = resolve_task(data.task, data.task_labels)
    made = DATA_TRANSFORMS[data.data_transform].set_names if data.data_transform in DATA_TRANSFORMS else {}
    taken = {id_set_name(task): "the name of the ID dev set"}
    taken.update(dict.fromkeys(made, f"the name of a set --data_transform {data.data_transform} makes"))
    for spec in data.ood_file:
        name, _, path = spec.partition("=")
        if name in taken:
            raise InputError(
                f"--ood_file {spec}: {name!r} is {taken[name]}; this set would overwrite its results (eval_{name}_*) "
                f"and eval_predictions/{name}.jsonl: give it another name, e.g. --ood_file {name}_ood={path or 'PATH'}"
            )


def refuse_unused_bias_options(data: DataArguments) -> None:
    """An unknown `--bias_model` (one line listing the kinds), and `InputError` for the bias-model options the run
    would not use: `--bias_model` and `--bias_vectors` with `--bias_predictions` (p_b is read, nothing is fitted),
    `--bias_vectors` with a bias model fitted without word vectors."""
    check_vectors_apply("--bias_vectors", data.bias_vectors, data.bias_model)
    if data.bias_predictions:
        options = {"--bias_model": data.bias_model, "--bias_vectors": data.bias_vectors}
        given = [flag for flag, value in options.items() if value is not None]
        if given:
            raise InputError(
                f"{' and '.join(given)} would do nothing with --bias_predictions {data.bias_predictions}: p_b is read "
                f"from that file and no bias model is fitted. Drop {' and '.join(given)}, or drop --bias_predictions "
                "to fit the bias model in the run."
            )


def validate_compact(run: RunArguments) -> None:
    """`--prune_heads`, `--student_layers` and `--student_ffn_size` (hf_srnets.compact): change the architecture,
    so no masks on top."""
    model = run.model
    if not 0.0 <= model.prune_heads < 1.0:
        raise InputError(
            f"--prune_heads must be in [0, 1) (the fraction of attention heads removed), got {model.prune_heads}"
        )
    if model.head_importance_samples is not None and model.head_importance_samples < 1:
        raise InputError(f"--head_importance_samples must be >= 1, got {model.head_importance_samples}")
    for flag, given in (
        ("--prune_heads", model.prune_heads > 0),
        ("--student_layers", model.student_layers is not None),
        ("--student_ffn_size", model.student_ffn_size is not None),
    ):
        if given and (model.pruning != "none" or model.mask_from):
            raise InputError(
                f"{flag} changes the model's shape, so masks saved for --model_name_or_path would not fit it: use it "
                "with --pruning none (and no --mask_from), then search masks on the saved model in a second run"
            )
    if model.save_compact and model.pruning == "none" and not model.mask_from:
        raise InputError(
            "--save_compact removes the units and heads that masks pruned entirely, but --pruning none has no masks: "
            "search with e.g. --pruning mask --mask_granularity hybrid (or ffn, head), or drop --save_compact"
        )
    if model.student_layers is not None:
        total = _num_layers(model)
        if model.student_layers < 1 or (total is not None and model.student_layers >= total):
            upper = f" and below the model's {total} layers" if total is not None else ""
            raise InputError(f"--student_layers must be >= 1{upper}, got {model.student_layers}")
    if model.student_ffn_size is not None and model.student_ffn_size < 1:
        raise InputError(f"--student_ffn_size must be >= 1 (FFN units kept per layer), got {model.student_ffn_size}")


def _num_layers(model: ModelArguments) -> int | None:
    """The model's number of layers from its config, None when the config cannot be read here (checked on load)."""
    from transformers import AutoConfig

    try:
        config = auto_from_pretrained(AutoConfig, model.model_name_or_path, cache_dir=model.cache_dir)
    except (OSError, ValueError):
        return None
    return getattr(config, "num_hidden_layers", None)


def validate_method(run: RunArguments) -> None:
    """A pruning method: the method's own checks (`prepare_config` leaves the config as parsed) and training on."""
    method, args = run.method, run.training
    # the run-dependent checks (IMP rounds) before any data is read; the run prepares its own config later
    method.prepare_config(run.pruning, args, fresh_head=False)
    if not args.do_train:
        # a search: evaluating the initial mask and writing a card as if it had run is wrong
        logger.info(f"--pruning {run.model.pruning} searches a subnetwork: training is on (--do_train)")
        args.do_train = True
