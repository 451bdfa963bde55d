"""`SRNetModel`: a transformers model whose θ_pr linear layers carry binary masks, laid out like a PEFT model.

The model injects the pruning method's layers, merges and unloads, saves, loads and pushes the masks, and checks
that they belong to the base weights (fingerprint, checksums). What the masks start as, which tensors train and
what runs per step come from the method (`hf_srnets.pruning`), named by `config.pruning_method`.
"""

from __future__ import annotations

import logging
import os
import tempfile
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from torch import nn
from transformers import TrainerCallback

from ..compact import compact_model
from ..errors import (
    InputError,
    InputTypeError,
    check_bool_argument,
    check_model_argument,
    check_path_argument,
    short_repr,
)
from ..metrics.sparsity import sparsity_report
from ..pruning import MASKS_NAME, MaskedLayer, PruningConfig, get_pruning_method
from ..pruning.base import SEARCH_PREFIX, TRAINABLE_PREFIX
from ..pruning.mask_files import (
    decode_masks,
    load_checked_tensors,
    read_checked_config,
    resolve_directory,
    save_mask_files,
    weights_fingerprint,
)
from ..pruning.masked_model import MaskedModel
from ..pruning.units import UnitMaskedLinear, inject_unit_layers, set_unit_masks, unit_groups
from ..run_files import SRNET_CONFIG_NAME, TRAINING_STATE_NAME
from .hub_upload import make_config_portable, upload_folder
from .targets import resolve_target_modules

logger = logging.getLogger(__name__)


def _get_submodule_parent(model: nn.Module, name: str) -> tuple[nn.Module, str]:
    parent_name, _, child = name.rpartition(".")
    return (model.get_submodule(parent_name) if parent_name else model), child


class SRNetModel(nn.Module):
    """A sequence-classification model whose θ_pr linear layers are wrapped in the pruning method's layer.

    All base weights are frozen; only the mask scores train (plus the classifier when
    `config.trainable_classifier`), unless the method trains the weights under fixed masks (IMP). Attribute
    access falls through to the wrapped model, as in PEFT.

    `config` stays as given: the model holds its own copy, `srnet_config` (`PruningConfig.resolved`), in which it
    records what the masks belong to (model type, base model, module shapes, fingerprint) and its method what it
    derives while it runs; `save_pretrained` writes that copy.

    Example:
        >>> model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=3)
        >>> srnet = SRNetModel(model, ThresholdConfig(sparsity=0.5))
        >>> srnet.save_pretrained("masks/")          # config + entropy-coded masks only
        >>> plain = srnet.merge_and_unload()          # pruned weights set to exactly 0
    """

    def __init__(self, model: nn.Module, config: PruningConfig, *, initialize: bool = True) -> None:
        check_model_argument(model, "SRNetModel")
        if not isinstance(config, PruningConfig):
            raise InputTypeError(
                f"SRNetModel: config must be a PruningConfig (e.g. ThresholdConfig(sparsity=0.5)), got "
                f"{type(config).__name__} {short_repr(config)}: build the method's config from it, e.g. "
                "ThresholdConfig(**values)"
            )
        super().__init__()
        self.base_model = model
        model_type = getattr(getattr(model, "config", None), "model_type", None)
        config = self.srnet_config = _own_config(config, model)  # from here on the model's copy, not the user's
        self.method = get_pruning_method(config.pruning_method)(config)
        self.is_search = initialize  # a new search (masks from the method), not masks loaded from a file
        self.fixed_masks = False  # set by `train_weights_with_fixed_masks`
        self.merged = False  # set by `merge_and_unload`: the masks are folded into the weights, the layers gone
        self.loaded_trained: frozenset[str] = frozenset()  # weights `from_pretrained` loaded from the mask files
        self.layer_targets, self.classifier_targets = resolve_target_modules(
            model, model_type, config.target_modules, config.mask_classifier, config.classifier_modules
        )
        mask_classifier = config.mask_classifier and not config.structured
        if config.mask_classifier and not mask_classifier:
            logger.info(
                f"mask_granularity={config.mask_granularity}: the classifier has no {config.mask_granularity} units "
                "and stays unmasked (dense); only the encoder's matrices are masked."
            )
        targets = self.layer_targets + (self.classifier_targets if mask_classifier else [])
        targets = self._inject(targets)
        config.module_shapes = {n: list(model.get_submodule(n).weight.shape) for n in targets}  # the model's copy
        if initialize:
            self.initialize_masks()

    def _inject(self, targets: list[str]) -> list[str]:
        """Freeze the model, wrap each target in the method's layer (at a structured `mask_granularity`: the
        `UnitMaskedLinear` of its units; `head` leaves FFN targets dense), unfreeze a trainable classifier.
        Returns the wrapped module names, in model order."""
        for param in self.base_model.parameters():
            param.requires_grad_(False)
        config = self.srnet_config
        if config.structured:
            groups = unit_groups(self.base_model, targets, config.mask_granularity, config.block_size)
            make = self.method.make_unit_layer, self.method.make_unit_scores
            wrapped = set(inject_unit_layers(self.base_model, groups, *make))
            targets = [name for name in targets if name in wrapped]
        else:
            for name in targets:
                parent, child = _get_submodule_parent(self.base_model, name)
                setattr(parent, child, self.method.make_layer(getattr(parent, child)))
        if self.srnet_config.trainable_classifier:
            for name in self.classifier_targets:
                for param in self.base_model.get_submodule(name).parameters():
                    param.requires_grad_(True)
        return targets

    # -- structure -------------------------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "base_model":
                raise
            return getattr(self.base_model, name)

    def get_base_model(self) -> nn.Module:
        return self.base_model

    def masked_layers(self) -> dict[str, MaskedLayer]:
        """Module name (relative to the base model) -> the method's masked layer, in model order (at a structured
        `mask_granularity`, the `UnitMaskedLinear` layers)."""
        layer_class = UnitMaskedLinear if self.srnet_config.structured else self.method.layer_class
        return {n: m for n, m in self.base_model.named_modules() if isinstance(m, layer_class)}

    def masked_layers_scores(self) -> list[nn.Parameter]:
        """Each layer's scores, once: matrices sharing units (an FFN unit's W_in and W_out, a head's Q, K, V, W_AO)
        share one score tensor."""
        scores: dict[int, nn.Parameter] = {}
        for layer in self.masked_layers().values():
            scores.setdefault(id(layer.mask_scores), layer.mask_scores)
        return list(scores.values())

    def score_parameters(self) -> list[nn.Parameter]:
        """The method's mask parameters (their own optimiser group: `mask_learning_rate`, no weight decay)."""
        return self.method.score_parameters(self)

    def trainer_callbacks(self) -> list[TrainerCallback]:
        """The method's controller for `SRNetTrainer` (threshold updates, IMP rounds, zeroing pruned weights)."""
        return self.method.callbacks(self)

    def fingerprint_modules(self) -> list[str]:
        """Masked layers whose base weights identify the base model (a trained classifier is saved instead)."""
        saved = set(self.classifier_targets) if self.srnet_config.trainable_classifier else set()
        return [name for name in self.masked_layers() if name not in saved]

    def record_fingerprint(self) -> None:
        """Record the base weights the masks belong to (`from_pretrained` checks them)."""
        self.srnet_config.base_fingerprint = weights_fingerprint(self.base_model, self.fingerprint_modules())

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        self.method.before_forward(self)
        return self.base_model(*args, **kwargs)

    # -- mask search (the method's) ---------------------------------------------------------------------------
    @torch.no_grad()
    def initialize_masks(self) -> None:
        """The method's starting masks, e.g. appendix Eq. 1 (hard) or Eq. 2 (soft) for mask training."""
        self.method.initialize(self)

    # -- fixed masks with trainable weights (IMP, and fine-tuning a subnetwork in isolation) -------------------
    @torch.no_grad()
    def set_masks(self, masks: dict[str, torch.Tensor]) -> None:
        """Fix the binary masks (scores 1 kept / 0 pruned with φ = 0.5 for `MaskedLinear`).

        At a structured `mask_granularity` the element masks give the unit masks; a mask not constant over a unit,
        or two matrices disagreeing on a shared unit, raises `ValueError` naming the module.
        """
        if self.srnet_config.structured:
            set_unit_masks(self.masked_layers(), masks)
            return
        for name, layer in self.masked_layers().items():
            layer.set_fixed_mask(masks[name])

    def train_weights_with_fixed_masks(self) -> None:
        """Freeze the masks and train every weight of the model instead; pruned weights are zeroed (and stay 0
        as long as `zero_pruned_weights` runs after each optimiser step, which `FixedMaskCallback` does: the
        trainer adds it). For a method that saves a ticket other than its current masks (l0), that ticket."""
        self.set_masks(self.method.saved_masks(self))
        for param in self.base_model.parameters():
            param.requires_grad_(True)
        for layer in self.masked_layers().values():
            layer.mask_scores.requires_grad_(False)
        self.fixed_masks = True
        self.zero_pruned_weights()

    @torch.no_grad()
    def zero_pruned_weights(self) -> None:
        """W ← m ⊙ W in every masked layer: pruned weights become exactly 0."""
        for layer in self.masked_layers().values():
            layer.base_layer.weight.mul_(layer.binary_mask().to(layer.base_layer.weight.dtype))

    @torch.no_grad()
    def binary_masks(self) -> dict[str, torch.Tensor]:
        """Module name -> the layer's current binary mask (bool, True = kept)."""
        return {name: layer.binary_mask() for name, layer in self.masked_layers().items()}

    @torch.no_grad()
    def sparsity_report(self, masks: dict[str, torch.Tensor] | None = None) -> dict[str, Any]:
        """Sparsity over all masked weights (the paper's reference count, §4.1.4) and per matrix, of the current
        masks or of `masks` (e.g. `method.saved_masks(srnet)`, the ticket an l0 search saves)."""
        return sparsity_report(self.binary_masks() if masks is None else masks)

    # -- export ----------------------------------------------------------------------------------------
    @torch.no_grad()
    def merge_and_unload(self, compact: bool = False) -> nn.Module:
        """Return the wrapped model with plain `nn.Linear` layers whose weights are m ⊙ W (pruned = 0).

        With `compact=True`, FFN units and attention heads whose masks removed them entirely (`--mask_granularity
        neuron` or `head`) are then removed physically (`hf_srnets.compact.compact_model`): smaller dense matrices,
        the same logits. The report of what was removed is kept as `self.compact_report`. A compact model with one
        FFN width per layer and all heads saves as a stock transformers checkpoint; otherwise load it with
        `hf_srnets.load_pretrained_model`.

        One-way: the returned model no longer knows its scores. The SRNetModel must not be used after: merging or
        saving it again is refused (`check_not_merged`).
        """
        check_bool_argument(compact, "SRNetModel.merge_and_unload", "compact")
        self.check_not_merged("merge_and_unload()")
        self.merged = True
        for name, layer in self.masked_layers().items():
            parent, child = _get_submodule_parent(self.base_model, name)
            plain = layer.base_layer
            plain.weight = nn.Parameter(layer.merged_weight(), requires_grad=False)
            setattr(parent, child, plain)
        for param in self.base_model.parameters():
            param.requires_grad_(True)
        if compact:
            self.compact_report = compact_model(self.base_model)
        return self.base_model

    def check_not_merged(self, call: str) -> None:
        """Refuse `call` on an SRNetModel whose masks `merge_and_unload` has folded into the weights (it would save
        no masks, and every base weight as a trained one)."""
        if self.merged:
            raise InputError(
                f"{call}: this SRNetModel was merged (merge_and_unload() is one-way: its masked layers are gone). "
                "Save or push the masks before merging, or use the model merge_and_unload() returned (its own "
                "save_pretrained/push_to_hub)"
            )

    def trained_base_tensors(self) -> dict[str, torch.Tensor]:
        """Weights outside the masks that train (all under IMP) or trained (the classifier when
        `trainable_classifier`, every weight when the search trained them, `srnet_config.trains_weights`; also once
        frozen, e.g. after `from_pretrained`)."""
        trained = {
            f"{module}.{name}"
            for module in (self.classifier_targets if self.srnet_config.trainable_classifier else [])
            for name, _ in self.base_model.get_submodule(module).named_parameters()
        }
        scores = {id(param) for param in self.score_parameters()}  # l0's Lagrange multipliers too: search state
        all_trained = self.srnet_config.trains_weights  # a search that trained every weight, also once frozen
        trained |= self.loaded_trained  # reloaded (IMP's weights): a save again must carry them, frozen or not
        out: dict[str, torch.Tensor] = {}
        for name, param in self.base_model.named_parameters():
            is_score = name.endswith("mask_scores") or id(param) in scores
            if (param.requires_grad or name in trained or all_trained) and not is_score:
                out[TRAINABLE_PREFIX + name] = param.detach().cpu().contiguous()
        return out

    def save_pretrained(self, save_directory: str | os.PathLike, **_: Any) -> None:
        """Write `srnet_config.json` and `srnet_masks.safetensors` (masks coded near their entropy,
        `hf_srnets.pruning.mask_codec`; `mask_encoding` records it), never base weights.

        When the classifier trained (`trainable_classifier`), its weights are saved too, since the masks
        alone would not reproduce the model. A searching l0 model also saves its float log α
        (`search.<module>.log_alpha`) next to the packed ticket.
        """
        check_path_argument(save_directory, "SRNetModel.save_pretrained", "save_directory", "pass the masks' folder")
        self.check_not_merged("save_pretrained()")
        masks = self.method.saved_masks(self)  # l0: the ticket at `sparsity`, ranked by log α
        extra = {**self.trained_base_tensors(), **self.search_state_tensors()}
        save_mask_files(save_directory, self.srnet_config, masks, extra)

    def search_state_tensors(self) -> dict[str, torch.Tensor]:
        """The float state of layers that have one (`MaskedLayer.search_state()`: the l0 layers' log α while
        searching; nothing for the others)."""
        out: dict[str, torch.Tensor] = {}
        for name, layer in self.masked_layers().items():
            out.update({f"{SEARCH_PREFIX}{name}.{key}": tensor for key, tensor in layer.search_state().items()})
        return out

    def trainable_state_dict(self) -> dict[str, torch.Tensor]:
        """Trainable tensors and the search state masked layers declare (`MaskedLayer.checkpoint_tensors`, e.g. the
        scores and thresholds of mask training): what a checkpoint needs to resume."""
        declared = {
            f"{layer_name}.{tensor}"
            for layer_name, layer in self.masked_layers().items()
            for tensor in layer.checkpoint_tensors
        }
        state = {}
        for name, tensor in self.base_model.state_dict(keep_vars=True).items():
            if name in declared or (isinstance(tensor, nn.Parameter) and tensor.requires_grad):
                state[name] = tensor.detach().cpu().contiguous()
        return state

    def save_training_state(self, directory: str | os.PathLike) -> None:
        save_file(self.trainable_state_dict(), os.path.join(directory, TRAINING_STATE_NAME))

    def load_training_state(self, directory: str | os.PathLike) -> None:
        """Restore the search state a checkpoint saved (scores, thresholds, ...); a checkpoint of a search with other
        settings (another sparsity, granularity, method option) is refused naming each difference."""
        self.check_same_search(directory)
        state = load_file(os.path.join(directory, TRAINING_STATE_NAME))
        missing = set(self.trainable_state_dict()) - set(state)
        if missing:
            raise InputError(f"{directory} lacks {len(missing)} SRNet tensors, e.g. {sorted(missing)[0]}")
        self.base_model.load_state_dict(state, strict=False)

    def check_same_search(self, directory: str | os.PathLike) -> None:
        """Raise `InputError` if the masks config saved in `directory` (a checkpoint) describes another search."""
        if not os.path.isfile(os.path.join(directory, SRNET_CONFIG_NAME)):
            return  # a checkpoint written before checkpoints held the config: nothing to compare
        differences = self.srnet_config.settings_differences(PruningConfig.from_pretrained(directory))
        if differences:
            raise InputError(
                f"--resume_from_checkpoint {directory} was saved by a search with other settings "
                f"({'; '.join(differences)}, checkpoint -> this run): resuming would mix the two. Resume with the "
                "checkpoint's settings, or start the new search in another --output_dir."
            )

    @classmethod
    def from_pretrained(
        cls,
        model: nn.Module,
        model_id: str | os.PathLike,
        *,
        is_trainable: bool = False,
        check_fingerprint: bool = True,
        revision: str | None = None,
        token: str | None = None,
        cache_dir: str | None = None,
    ) -> SRNetModel:
        """Apply masks saved by `save_pretrained` (a local dir or a Hub repo id) to `model`.

        Refuses masks saved for another architecture or other shapes. With `check_fingerprint`, also
        refuses base weights that differ from those the masks were searched on; pass
        `check_fingerprint=False` to apply a mask to other weights on purpose (e.g. a mask from a fine-tuned
        model applied to the pre-trained weights, paradigm (b)).
        """
        check_model_argument(model, "SRNetModel.from_pretrained")
        if not isinstance(model_id, (str, os.PathLike)):
            raise InputTypeError(
                f"SRNetModel.from_pretrained: model_id must be the mask directory (a path or Hub id), got "
                f"{type(model_id).__name__} {short_repr(model_id)}: call SRNetModel.from_pretrained(model, mask_dir)"
            )
        directory = resolve_directory(model_id, revision=revision, token=token, cache_dir=cache_dir)
        config = read_checked_config(directory)
        _check_architecture(model, config, model_id)
        saved_shapes = dict(config.module_shapes)
        srnet = cls(model, config, initialize=False)
        if set(srnet.srnet_config.module_shapes) != set(saved_shapes):
            raise InputError(
                f"The masks in {model_id} cover {len(saved_shapes)} layers, but this model resolves "
                f"{len(srnet.srnet_config.module_shapes)} targets: was it saved with other target_modules?"
            )
        tensors = load_checked_tensors(directory, config, model_id)
        if check_fingerprint and config.base_fingerprint and not srnet._replaces_fingerprinted_weights(tensors):
            srnet._check_fingerprint(config, model_id)
        if config.trainable_classifier:
            srnet._check_trainable_tensors(tensors, os.path.join(directory, MASKS_NAME))
        srnet._apply_saved(tensors, decode_masks(tensors, config, os.path.join(directory, MASKS_NAME)))
        srnet.srnet_config.base_fingerprint = config.base_fingerprint
        if not is_trainable:
            for param in srnet.parameters():
                param.requires_grad_(False)
        return srnet

    def _replaces_fingerprinted_weights(self, tensors: dict[str, torch.Tensor]) -> bool:
        """Whether the saved tensors hold the weights of every fingerprinted layer (a subnetwork fine-tuned in
        isolation, IMP): the base then gives only the architecture and the rest, so its weights are not checked."""
        names = self.fingerprint_modules()
        return bool(names) and all(f"{TRAINABLE_PREFIX}{name}.base_layer.weight" in tensors for name in names)

    def _check_fingerprint(self, config: PruningConfig, model_id: str | os.PathLike) -> None:
        found = weights_fingerprint(self.base_model, self.fingerprint_modules())
        if found != config.base_fingerprint:
            raise InputError(
                f"The base weights differ from those the masks in {model_id} were searched on "
                f"(fingerprint {found} != {config.base_fingerprint}; base {config.base_model_name_or_path}). "
                "Pass check_fingerprint=False to apply the masks to these weights anyway."
            )

    def _check_trainable_tensors(self, tensors: dict[str, torch.Tensor], path: str) -> None:
        """The saved trained classifier has every tensor the model needs, with the model's shapes and dtypes."""
        for key, current in self.trained_base_tensors().items():
            saved = tensors.get(key)
            if saved is None or saved.shape != current.shape or saved.dtype != current.dtype:
                found = "missing" if saved is None else f"a {saved.dtype} tensor of shape {tuple(saved.shape)}"
                raise InputError(
                    f"The trained classifier tensor {key!r} in {path} is {found}; "
                    f"the model needs a {current.dtype} tensor of shape {tuple(current.shape)}."
                )

    @torch.no_grad()
    def _apply_saved(self, tensors: dict[str, torch.Tensor], masks: dict[str, torch.Tensor]) -> None:
        """Set the saved (decoded) masks, then load the saved trained weights (`trainable.` tensors)."""
        self.set_masks(masks)
        trainable = {k[len(TRAINABLE_PREFIX) :]: v for k, v in tensors.items() if k.startswith(TRAINABLE_PREFIX)}
        if trainable:
            self.base_model.load_state_dict(trainable, strict=False)
            self.loaded_trained = frozenset(trainable)
        self._load_search_state(tensors)

    def _load_search_state(self, tensors: dict[str, torch.Tensor]) -> None:
        """Give layers their saved `search.` state back (l0: log α, back in search mode); all or none of them."""
        states: dict[str, dict[str, torch.Tensor]] = {}
        for key, tensor in tensors.items():
            if key.startswith(SEARCH_PREFIX):
                module, _, name = key[len(SEARCH_PREFIX) :].rpartition(".")
                states.setdefault(module, {})[name] = tensor
        if not states:
            return
        layers = self.masked_layers()
        unknown = sorted(set(states) - set(layers))
        missing = sorted(set(layers) - set(states))
        if unknown or missing or not all(layer.has_search_state for layer in layers.values()):
            what = f"for {unknown[0]!r}, not a masked layer" if unknown else f"but none for {(missing or ['?'])[0]!r}"
            raise InputError(f"The saved search state has tensors {what}: the mask files are inconsistent.")
        for name, layer in layers.items():
            layer.load_search_state(states[name])

    def push_to_hub(self, repo_id: str, *, private: bool | None = None, token: str | None = None) -> str:
        """Upload the mask config and the bit-packed masks (not the base weights) to a Hub model repo.

        Raises `hf_srnets.publish.hub.HubUploadError` (with a retry hint) when the upload fails.
        """
        self.check_not_merged("push_to_hub()")
        with tempfile.TemporaryDirectory() as tmp:
            self.save_pretrained(tmp)
            make_config_portable(tmp)  # no local paths in the uploaded config
            return upload_folder(
                tmp,
                repo_id,
                token=token,
                private=private,
                commit_message="Upload SRNet masks",
                retry=f"srnet.push_to_hub({repo_id!r}) once the Hub is reachable",
            )

    def print_trainable_parameters(self) -> str:
        trainable = sum(p.numel() for p in self.parameters() if p.requires_grad)
        total = sum(p.numel() for p in self.parameters())
        return f"trainable params: {trainable:,} || all params: {total:,} || trainable%: {100 * trainable / total:.4f}"


def _own_config(config: PruningConfig, model: nn.Module) -> PruningConfig:
    """The model's copy of `config` (the user's stays as given), with the base model's type and, unless given, its
    name or path."""
    model_config = getattr(model, "config", None)
    derived: dict[str, Any] = {"model_type": config.model_type or getattr(model_config, "model_type", None)}
    if config.base_model_name_or_path is None:
        derived["base_model_name_or_path"] = getattr(model_config, "_name_or_path", None) or None
    return config.resolved(**derived)


def _check_architecture(model: nn.Module, config: PruningConfig, model_id: str | os.PathLike) -> None:
    """Refuse masks saved for another model type, or for modules the model lacks or has in other shapes."""
    model_type = getattr(getattr(model, "config", None), "model_type", None)
    if config.model_type and model_type and config.model_type != model_type:
        raise InputError(
            f"The masks in {model_id} were saved for a {config.model_type!r} model, "
            f"but the base model is {model_type!r}. Load the base model they were searched on "
            f"({config.base_model_name_or_path})."
        )
    for name, shape in config.module_shapes.items():
        try:
            module = model.get_submodule(name)
        except AttributeError:
            raise InputError(
                f"The masks in {model_id} need a module {name!r} that the base model does not have; "
                f"they were saved for {config.base_model_name_or_path}."
            ) from None
        if list(module.weight.shape) != list(shape):
            raise InputError(
                f"Shape mismatch for {name}: masks in {model_id} are {tuple(shape)}, the base model's weight "
                f"is {tuple(module.weight.shape)}. They were saved for {config.base_model_name_or_path}."
            )


# Python 3.12 checks a runtime protocol's members with inspect.getattr_static, which does not see a submodule
# (`base_model` lives in nn.Module's `_modules`), so `isinstance(srnet, MaskedModel)` was False there (the H100
# check's Python 3.12.3; 3.11 uses hasattr). Registered, it is True on every Python;
# tests/pruning/test_masked_model.py checks every member, its type and its signature.
MaskedModel.register(SRNetModel)
