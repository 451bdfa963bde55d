"""What every pruning method shares: its config's common fields, the method interface and the registry.

A pruning method is a `PruningMethod` subclass registered with `@register_pruning_method`: a `name` (what
`--pruning` and `srnet_config.json` call it), a `config_class` (a `PruningConfig` subclass whose own fields are
the method's options), a `layer_class` (a `MaskedLayer` wrapping each frozen `nn.Linear` of θ_pr, Win-win §3.1)
and the hooks `SRNetModel` and `SRNetTrainer` call, which receive the model as a `MaskedModel`: initial masks, score
parameters, callbacks (the per-step controller), the target sparsity at a step and the first step at which the best
checkpoint may be chosen.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar

import torch
from torch import nn
from transformers import TrainerCallback

from ..errors import InputError, MissingInputError, check_field_types, check_subclass_argument
from ..registry import register
from ..run_files import MASKS_NAME, SRNET_CONFIG_NAME, write_json
from .fixed_mask import FixedMaskCallback
from .masked_model import MaskedModel
from .nm import check_nm
from .units import UnitScores, unit_masked_linear
from .wrapped import MaskedLayer

CONFIG_NAME = SRNET_CONFIG_NAME  # the mask config of a saved SRNet; MASKS_NAME: its masks (names in run_files)
# keys of MASKS_NAME besides the packed masks (named by module): weights trained with the masks (a classifier, or
# every weight under fixed masks) and a layer's float search state (the l0 method's log α): <prefix><name>
TRAINABLE_PREFIX = "trainable."
SEARCH_PREFIX = "search."
SRNET_TYPE = "SRNET_MASK"
# `mask_granularity` values (hf_srnets.pruning.units) and what one mask bit prunes: the field's type and help
GRANULARITY_UNITS = {
    "element": "one weight, the paper",
    "block": "b×b tiles, --block_size",
    "ffn": "FFN units only",
    "head": "attention heads only",
    "hybrid": "FFN units and heads",
    "neuron": "= hybrid, its older name",
    "nm": "N of every M consecutive weights, --nm_n/--nm_m",
}
GRANULARITIES = tuple(GRANULARITY_UNITS)
UNIT_GRANULARITIES = ("block", "ffn", "head", "hybrid", "neuron")  # a mask unit of several weights, one score
DEFAULT_METHOD = "threshold"  # files written before `pruning_method` was recorded are mask-training results

logger = logging.getLogger(__name__)
ConfigT = TypeVar("ConfigT", bound="PruningConfig")  # a config class: `resolved` returns a config of the same class

PRUNING_METHODS: dict[str, type[PruningMethod]] = {}
# `--pruning` spellings that name a method with some options set: name -> (method, config overrides)
# other `--pruning` names of registered methods, from their `aliases`: `imp-rw` -> ("magnitude", {"rewind": True})
PRUNING_ALIASES: dict[str, tuple[str, dict[str, Any]]] = {}


@dataclass
class PruningConfig:
    """What to prune, how sparse, and what the masks belong to: the fields every method's config has.

    Parameters that control *which* weights are pruned:
        target_modules: Names (exact module paths or name suffixes) or one regular expression (a string)
            selecting the `nn.Linear` layers to mask. `None` resolves the paper's θ_pr from the
            architecture: W_Q, W_K, W_V, W_AO, W_in, W_out of every Transformer layer (§3.1).
        mask_classifier: Also mask the classifier weight W_cls (part of θ_pr in the paper).
        classifier_modules: Names of the classifier's linear layers. `None` resolves them by architecture.
        trainable_classifier: Train the classifier weights together with the masks. `None`: only if the
            classifier is newly initialised (resolved in the copy `PruningMethod.prepare_config` returns;
            `SRNetModel` reads `None` as False).
        sparsity: Target sparsity s, the fraction of each masked matrix set to zero, in [0, 1).
        sparsity_scope: `"local"` (each matrix has sparsity s, the paper's setting) or `"global"`.
        mask_granularity: What one mask unit is (`hf_srnets.pruning.units`): `"element"` (a weight, the paper),
            `"block"` (a `block_size`×`block_size` tile of a matrix), `"ffn"` (FFN intermediate units only: a row of
            W_in and the column of W_out; attention stays dense), `"head"` (attention heads only: their rows of
            W_Q, W_K, W_V and columns of W_AO; the FFN stays dense), `"hybrid"` (both, Lagunas et al. 2021's
            hybrid pruning) or `"neuron"` (the older name of `"hybrid"`, kept as an alias).
            ⌊s·n⌋ units are pruned per matrix (block) or per layer (FFN units and heads separately), or over all
            units of a kind with global scope (the budget then goes where the scores put it). Only the methods whose
            `granularities` list it accept it; the classifier is masked at element granularity only.
        block_size: b, the side of a block (divides both dimensions of every masked matrix).

    Recorded with the masks (filled in by `SRNetModel` in its own copy, `srnet_config`, `metadata={"cli": False}`):
        pruning_method: the registered method that made them (absent in old files: `"threshold"`).
        base_model_name_or_path / model_type / module_shapes / base_fingerprint: what the masks belong to.
        tensor_checksums: sha256 of every tensor in `srnet_masks.safetensors` (dtype, shape and bytes), written by
            `save_pretrained` and checked by `from_pretrained`. Empty in files written before hf_srnets checked
            them: such masks load unverified.
        mask_encoding: how each mask is coded in `srnet_masks.safetensors` (`hf_srnets.pruning.mask_codec`, written by
            `save_pretrained`: `"gap-lzma-v1"`, near-entropy size). Absent in older files: bit-packed, 1 bit per weight.
    """

    _argument_group_name: ClassVar[str] = "Pruning: every method (--pruning)"  # the heading of its options in --help

    target_modules: list[str] | str | None = field(
        default=None,
        metadata={"help": "Regex of linear layers to mask; default: the paper's θ_pr per architecture."},
    )
    mask_classifier: bool = field(default=True, metadata={"help": "Mask the classifier weight W_cls too."})
    classifier_modules: list[str] | None = field(
        default=None, metadata={"cli": False, "help": "Names of the classifier's linear layers; default: by model."}
    )
    trainable_classifier: bool | None = field(
        default=None,
        metadata={"help": "Train the classifier with the masks; default: only if it is newly initialised."},
    )
    sparsity: float = field(
        default=0.5,
        metadata={"help": "Target sparsity s of each prunable matrix (l0: the sparsity of the ticket it saves)."},
    )
    sparsity_scope: Literal["local", "global"] = field(
        default="local", metadata={"help": "local (per matrix, the paper) or global."}
    )
    mask_granularity: Literal[GRANULARITIES] = field(
        default="element",
        metadata={
            "help": "What one mask bit prunes: "
            + ", ".join(f"{name} ({unit})" for name, unit in GRANULARITY_UNITS.items())
            + ". Unit granularities: the classifier stays unmasked. Each method takes those it declares; another is "
            "refused, naming the methods that take it."
        },
    )
    block_size: int = field(
        default=32, metadata={"help": "b of --mask_granularity block: the side of the square tiles (divides W's dims)."}
    )
    nm_n: int = field(default=2, metadata={"help": "N of --mask_granularity nm: weights kept in every group of M."})
    nm_m: int = field(
        default=4, metadata={"help": "M of --mask_granularity nm: consecutive input weights per group (2:4: NVIDIA)."}
    )
    pruning_method: str | None = field(default=None, metadata={"cli": False, "help": "The registered pruning method."})
    base_model_name_or_path: str | None = field(
        default=None, metadata={"cli": False, "help": "The weights the masks were searched on."}
    )
    model_type: str | None = field(default=None, metadata={"cli": False, "help": "The architecture of the base model."})
    srnet_type: str = field(default=SRNET_TYPE, metadata={"cli": False, "help": "Marks an hf_srnets mask config."})
    module_shapes: dict[str, list[int]] = field(
        default_factory=dict, metadata={"cli": False, "help": "Masked module -> weight shape."}
    )
    base_fingerprint: str | None = field(
        default=None, metadata={"cli": False, "help": "sha256 prefix of the base weights."}
    )
    tensor_checksums: dict[str, str] = field(
        default_factory=dict, metadata={"cli": False, "help": "sha256 of each saved tensor."}
    )
    mask_encoding: str | None = field(
        default=None,
        metadata={"cli": False, "help": f"How {MASKS_NAME} codes the masks; absent (None): bit-packed."},
    )

    @property
    def trains_weights(self) -> bool:
        """Whether the search trains the model's weights with the masks (a method's option, e.g. mask training's
        `train_weights`); False: the weights stay frozen and the masks alone rebuild the model from its base."""
        return False

    @property
    def weights_learning_rate(self) -> float | None:
        """The weights' own learning rate when they train with the masks (`None`: `--learning_rate`)."""
        return None

    @property
    def structured(self) -> bool:
        """Whether a mask unit is more than one weight with one score (`mask_granularity` block, ffn, head,
        hybrid/neuron); `element` and `nm` have one score per weight."""
        return self.mask_granularity in UNIT_GRANULARITIES

    def unit_settings(self) -> dict[str, Any]:
        """`mask_granularity` (and `block_size` for blocks, N and M for nm) of structured masks; nothing for element
        masks."""
        if self.mask_granularity == "nm":
            return {"mask_granularity": "nm", "nm_n": self.nm_n, "nm_m": self.nm_m}
        if not self.structured:
            return {}
        block = {"block_size": self.block_size} if self.mask_granularity == "block" else {}
        return {"mask_granularity": self.mask_granularity, **block}

    def unused_options(self) -> dict[str, str]:
        """The options these settings leave unused -> why each does nothing (`--block_size` without
        `--mask_granularity block`, ...). The command line refuses each one given, with its reason, so a method's
        config extends this with its own conditional options (calling `super().unused_options()` first)."""
        unused = {}
        if self.mask_granularity != "block":
            unused["block_size"] = "it is the tile side of --mask_granularity block"
        if self.mask_granularity != "nm":
            unused.update(dict.fromkeys(("nm_n", "nm_m"), "they set the pattern of --mask_granularity nm"))
        if self.structured:
            unused["mask_classifier"] = "the classifier is masked at --mask_granularity element only"
        return unused

    def search_settings(self) -> dict[str, Any]:
        """What the search does, as a resumed run must find it: the method and every option a user sets (the fields
        the command line gives, `metadata={"cli": False}` aside: those record what the masks belong to)."""
        chosen = [f.name for f in dataclasses.fields(self) if f.init and f.metadata.get("cli", True)]
        return {"pruning_method": self.pruning_method, **{name: getattr(self, name) for name in chosen}}

    def settings_differences(self, saved: PruningConfig) -> list[str]:
        """`name: saved -> this` for each search setting in which `saved` (e.g. a checkpoint's config) differs from
        this config; JSON-equal values (a tuple and a list) are the same."""
        mine, theirs = self.search_settings(), saved.search_settings()

        def same(a: Any, b: Any) -> bool:
            return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)

        return [
            f"{name}: {theirs.get(name)!r} -> {value!r}"
            for name, value in mine.items()
            if not same(theirs.get(name), value)
        ]

    def __post_init__(self) -> None:
        check_field_types(self)
        if self.pruning_method is None:
            self.pruning_method = method_name_of(type(self))
        self.validate()

    def validate(self) -> None:
        """Raise `ValueError` naming the bad field and the accepted values."""
        if not 0.0 <= self.sparsity < 1.0:
            raise InputError(f"sparsity must be in [0, 1), got {self.sparsity}: pass e.g. --sparsity 0.5 for 50%.")
        if self.sparsity_scope not in ("local", "global"):
            raise InputError(f"sparsity_scope must be 'local' or 'global', got {self.sparsity_scope!r}.")
        self._validate_granularity()
        if self.srnet_type != SRNET_TYPE:
            raise ValueError(f"Not an SRNet mask config (srnet_type={self.srnet_type!r}).")
        method = get_pruning_method(self.pruning_method)
        if not isinstance(self, method.config_class):
            raise ValueError(
                f"pruning_method={self.pruning_method!r} needs a {method.config_class.__name__}, "
                f"got a {type(self).__name__}."
            )

    def _validate_granularity(self) -> None:
        """`mask_granularity` is known and supported by the method; `block_size` is a positive integer."""
        if self.mask_granularity not in GRANULARITIES:
            raise InputError(
                f"mask_granularity must be one of {list(GRANULARITIES)}, got {self.mask_granularity!r}: "
                "pass e.g. --mask_granularity neuron."
            )
        if isinstance(self.block_size, bool) or not isinstance(self.block_size, int) or self.block_size < 1:
            raise InputError(f"block_size must be a positive integer, got {self.block_size!r}: e.g. --block_size 32.")
        if self.mask_granularity == "nm":
            check_nm(self.nm_n, self.nm_m, self.sparsity)
            if self.sparsity_scope != "local":
                raise InputError("--mask_granularity nm selects within each group of M weights: drop --sparsity_scope.")
        method = PRUNING_METHODS.get(self.pruning_method)  # an unknown method is refused below, by name
        if method is not None and self.mask_granularity not in method.granularities:
            supporting = sorted(name for name, m in PRUNING_METHODS.items() if self.mask_granularity in m.granularities)
            raise InputError(
                f"--mask_granularity {self.mask_granularity} is not supported by --pruning {self.pruning_method} "
                f"(it supports {list(method.granularities)}); use --pruning {' or '.join(supporting)}, or "
                "--mask_granularity element."
            )

    def resolved(self: ConfigT, **values: Any) -> ConfigT:
        """A copy of this config with `values` set, validated, sharing no list or dict with it: what a method or
        `SRNetModel` derives goes into the copy, so the config a user gave keeps saying what was asked."""
        return dataclasses.replace(copy.deepcopy(self), **values)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PruningConfig:
        """The config of the method `data["pruning_method"]` names (`"threshold"` when absent, as in old files)."""
        data = {"pruning_method": DEFAULT_METHOD, **data}
        config_class = get_pruning_method(data["pruning_method"]).config_class
        if not issubclass(config_class, cls):
            raise ValueError(f"{cls.__name__} cannot hold a {data['pruning_method']!r} config.")
        known = {f.name for f in dataclasses.fields(config_class)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InputError(f"Unknown SRNet config fields {unknown}; was this file written by a newer hf_srnets?")
        return config_class(**data)

    def save_pretrained(self, save_directory: str | os.PathLike) -> None:
        os.makedirs(save_directory, exist_ok=True)
        write_json(os.path.join(save_directory, CONFIG_NAME), self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_pretrained(cls, directory: str | os.PathLike) -> PruningConfig:
        path = os.path.join(directory, CONFIG_NAME)
        if not os.path.isfile(path):
            raise MissingInputError(f"No {CONFIG_NAME} in {directory}: is this an hf_srnets mask directory?")
        with open(path, encoding="utf-8") as f:
            return cls.from_dict(json.load(f))


def _same_path(path: str | None) -> str:
    return path or ""


@dataclass(frozen=True)
class CardContext:
    """What a method's model-card text may use besides its config.

    Attributes:
        mask_learning_rate: The rate the mask parameters trained with (`--mask_learning_rate`, else
            `--learning_rate`).
        mask_weight_decay: The weight decay of the mask parameters (`--mask_weight_decay`).
        select_best_after: The fraction of training after which a checkpoint could be chosen as best.
        portable: How a public card names a local path (a Hub id, or a name without local directories).
    """

    mask_learning_rate: float | None = None
    mask_weight_decay: float = 0.0
    select_best_after: float = 0.0
    portable: Callable[[str | None], str] = _same_path


class PruningMethod:
    """A pruning method: how the masks of an `SRNetModel` start, which tensors train, and what runs per step.

    Subclasses set the class attributes and override the hooks they need; `srnet` is the `SRNetModel` the
    method belongs to, seen through `MaskedModel` (the only members a method and its callbacks may use). The
    defaults describe fixed masks: nothing to initialise, no scores, a constant target sparsity, and
    `FixedMaskCallback` when the weights train under the masks. The model card asks the method for its settings
    (`card_settings`), the search in words (`search_description`) and what its saved search state is
    (`search_state_words`).
    """

    name: ClassVar[str]
    config_class: ClassVar[type[PruningConfig]]
    layer_class: ClassVar[type[MaskedLayer]]
    # other `--pruning` names, each with the config values it sets (`imp-rw`: magnitude pruning, rewind=True);
    # a subclass does not inherit them (`own_aliases`)
    aliases: ClassVar[dict[str, dict[str, Any]]] = {}
    # what error messages call the method (`mask training`); None: `--pruning <name>`
    title: ClassVar[str | None] = None
    trains_scores: ClassVar[bool] = False  # whether `--mask_learning_rate` means something for the method
    citations: ClassVar[tuple[str, ...]] = ()  # BibTeX keys (hf_srnets.resources.citations.BIBTEX) a card cites for it
    granularities: ClassVar[tuple[str, ...]] = ("element",)  # the `mask_granularity` values the method supports
    # how a card names the float state a search saves beside its masks (`SRNetModel.search_state_tensors`)
    search_state_words: ClassVar[str] = "the float search state of every masked layer"

    def __init__(self, config: PruningConfig) -> None:
        # `SRNetModel` gives its own copy, `srnet_config` (never the user's object): what the hooks derive while the
        # model runs (the random baseline's sparsity, the calibration examples found) is recorded there and saved
        self.config = config

    @classmethod
    def prepare_config(cls, config: PruningConfig, training_args: Any, *, fresh_head: bool) -> PruningConfig:
        """The config a run uses: a copy of `config` (`PruningConfig.resolved`; `config` stays as the user gave it)
        with the run-dependent defaults filled in; raise `InputError` for settings the method cannot run.

        Default: the classifier trains iff it is newly initialised (`trainable_classifier=None`).
        """
        if config.trainable_classifier is None:
            return config.resolved(trainable_classifier=fresh_head)
        if fresh_head and not config.trainable_classifier:
            logger.warning("The classifier is newly initialised but --trainable_classifier false: it stays random.")
        return config.resolved()

    def make_layer(self, base_layer: nn.Linear) -> MaskedLayer:
        """The method's layer over a frozen `base_layer` (default: `layer_class(base_layer)`; l0 passes its
        temperature and initial gate)."""
        return self.layer_class(base_layer)

    def make_unit_layer(self, base_layer: nn.Linear, units: Any, member: Any, owner: bool) -> MaskedLayer:
        """The method's layer over one matrix of a unit group at a unit granularity (`units`: the group's shared
        `UnitScores`, `member`: the matrix's `UnitMember`); default: `units.unit_masked_linear`'s
        `UnitMaskedLinear`."""
        return unit_masked_linear(base_layer, units, member, owner)

    def make_unit_scores(self, kind: str, shape: tuple[int, ...], device: torch.device | None) -> nn.Module:
        """The scores one unit group shares (`make_unit_layer`'s `units`); default: a `UnitScores` (one real score
        a unit under an exact-count threshold)."""
        return UnitScores(kind, shape, device=device)

    def before_forward(self, srnet: MaskedModel) -> None:
        """Called by `SRNetModel.forward` before each forward pass (l0 at a unit granularity: draw new gates)."""

    def saved_masks(self, srnet: MaskedModel) -> dict[str, torch.Tensor]:
        """The binary masks `save_pretrained` packs and `--mask_from` retrains: the current masks by default; l0
        saves the ticket at `--sparsity` ranked from log α."""
        return srnet.binary_masks()

    def initialize(self, srnet: MaskedModel) -> None:
        """Set the masks a new search starts from (not called when masks are loaded)."""

    def score_parameters(self, srnet: MaskedModel) -> list[nn.Parameter]:
        """The mask parameters that train with `mask_learning_rate` and no weight decay."""
        return srnet.masked_layers_scores()

    def score_learning_rates(self, srnet: MaskedModel) -> list[tuple[list[nn.Parameter], float]]:
        """Score parameters that train at a rate of their own instead of `mask_learning_rate` (their own optimiser
        group, no weight decay): none by default; l0's Lagrange multipliers with `--l0_lagrangian_learning_rate`."""
        return []

    def callbacks(self, srnet: MaskedModel) -> list[TrainerCallback]:
        """The method's controller for `SRNetTrainer`; fixed masks with training weights keep pruned weights 0."""
        return [FixedMaskCallback(srnet)] if srnet.fixed_masks else []

    def regularization(self, srnet: MaskedModel, step: int, max_steps: int) -> torch.Tensor | None:
        """A penalty added to the training loss at `step` (logged as `loss_penalty`), or None (the default)."""
        return None

    def log_metrics(self, srnet: MaskedModel) -> dict[str, float]:
        """Method-specific training metrics logged with the training loss (e.g. the l0 gates' statistics)."""
        return {}

    def target_sparsity(self, step: int, max_steps: int) -> float:
        """The sparsity the masks should have at `step` of `max_steps` (logged as `target_sparsity`)."""
        return self.config.sparsity

    def selection_start_step(self, max_steps: int) -> int:
        """First step at which a checkpoint may be selected as best (e.g. once a schedule reaches s)."""
        return 0

    @classmethod
    def card_settings(cls, config: PruningConfig, context: CardContext) -> dict[str, Any]:
        """The method's rows of the card's settings table, from the effective config: by default the sparsity,
        the unit of structured masks and every option of the method's own config class."""
        own = [f.name for f in dataclasses.fields(config) if f.name not in COMMON_FIELDS]
        return {"sparsity": config.sparsity, **config.unit_settings(), **{name: getattr(config, name) for name in own}}

    @classmethod
    def search_description(cls, config: PruningConfig, context: CardContext) -> str | None:
        """The search in words for the card's summary, or None (the card then names the method only)."""
        return None


# the fields every method's config has (`PruningConfig`); a method's own options are the others
COMMON_FIELDS = frozenset(f.name for f in dataclasses.fields(PruningConfig))


def register_pruning_method(method: type[PruningMethod]) -> type[PruningMethod]:
    """Class decorator: make `method` available by `method.name` (to `--pruning`, configs and `SRNetModel`)."""
    check_subclass_argument(method, PruningMethod, "register_pruning_method")
    for attribute in ("name", "config_class", "layer_class"):
        if not hasattr(method, attribute):
            raise TypeError(f"{method.__name__} needs a class attribute {attribute!r} to be a pruning method.")
    if not issubclass(method.config_class, PruningConfig):
        raise TypeError(f"{method.__name__}.config_class must subclass PruningConfig.")
    layer = method.layer_class
    if not (isinstance(layer, type) and issubclass(layer, MaskedLayer)):
        raise TypeError(
            f"{method.__name__}.layer_class is {getattr(layer, '__name__', layer)!r}, not a MaskedLayer: subclass "
            "hf_srnets.pruning.MaskedLayer (it wraps the frozen nn.Linear and defines binary_mask and set_fixed_mask)."
        )
    # every --pruning value taken -> what holds it; all the method's names are checked before any is registered
    holders: dict[str, object] = {"none": "no pruning, --pruning none", **PRUNING_METHODS}
    holders.update({alias: PRUNING_METHODS[name] for alias, (name, _) in PRUNING_ALIASES.items()})
    for name in [method.name, *own_aliases(method)]:
        register(holders, name, method, "pruning method")
    register(PRUNING_METHODS, method.name, method, "pruning method")
    PRUNING_ALIASES.update({alias: (method.name, overrides) for alias, overrides in own_aliases(method).items()})
    return method


def own_aliases(method: type[PruningMethod]) -> dict[str, dict[str, Any]]:
    """The aliases `method` declares itself (a subclass of a registered method keeps only its name)."""
    return method.__dict__.get("aliases", {})


def unregister_pruning_method(name: str) -> None:
    """Remove a registered method and its aliases (tests register toy methods)."""
    method = PRUNING_METHODS.pop(name)
    for alias in own_aliases(method):
        PRUNING_ALIASES.pop(alias, None)


def get_pruning_method(name: str | None) -> type[PruningMethod]:
    if name not in PRUNING_METHODS:
        raise InputError(f"Unknown pruning method {name!r}; registered: {sorted(PRUNING_METHODS)}.")
    return PRUNING_METHODS[name]


def method_name_of(config_class: type[PruningConfig]) -> str:
    """The registered method whose config class is exactly `config_class`."""
    for name, method in PRUNING_METHODS.items():
        if method.config_class is config_class:
            return name
    raise ValueError(f"No registered pruning method uses {config_class.__name__}; register the method first.")


def pruning_choices() -> list[str]:
    """What `--pruning` accepts besides `none`: registered methods and their aliases."""
    return sorted(PRUNING_METHODS) + sorted(PRUNING_ALIASES)


def resolve_pruning(name: str) -> tuple[type[PruningMethod], dict[str, Any]]:
    """The method and the config overrides a `--pruning` value stands for (`imp-rw` -> magnitude, rewind=True)."""
    if name in PRUNING_ALIASES:
        method, overrides = PRUNING_ALIASES[name]
        return get_pruning_method(method), dict(overrides)
    if name in PRUNING_METHODS:
        return PRUNING_METHODS[name], {}
    raise InputError(f"--pruning must be none or one of {pruning_choices()}, got {name!r}")
