"""`SRNetModel`: a transformers model with learnable binary masks on θ_pr, laid out like a PEFT model."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import math
import os
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn

from .config import CONFIG_NAME, MASKS_NAME, SRNetMaskConfig
from .layer import MaskedLinear, binarize, exact_thresholds
from .targets import resolve_target_modules

TRAINING_STATE_NAME = "srnet_training_state.safetensors"
_CLASSIFIER_PREFIX = "trainable."

logger = logging.getLogger(__name__)


def _get_submodule_parent(model: nn.Module, name: str) -> tuple[nn.Module, str]:
    parent_name, _, child = name.rpartition(".")
    return (model.get_submodule(parent_name) if parent_name else model), child


def pack_mask(mask: torch.Tensor) -> torch.Tensor:
    """Bit-pack a bool mask into uint8 (8 weights per byte)."""
    return torch.from_numpy(np.packbits(mask.detach().cpu().reshape(-1).numpy().astype(np.bool_)))


def unpack_mask(packed: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    """Inverse of `pack_mask`. Refuses a tensor that is not uint8 or not exactly ⌈n/8⌉ bytes for `shape`.

    (`np.unpackbits` would pad a short tensor with zeros, i.e. silently prune the weights it lacks.)
    """
    n = math.prod(shape)
    if packed.dtype != torch.uint8:
        raise ValueError(f"A packed mask must be uint8, got {packed.dtype}")
    if packed.numel() != math.ceil(n / 8):
        raise ValueError(
            f"A packed mask for shape {tuple(shape)} ({n} weights) has {math.ceil(n / 8)} bytes, got {packed.numel()}"
        )
    bits = np.unpackbits(packed.reshape(-1).numpy(), count=n).astype(np.bool_)
    return torch.from_numpy(bits).reshape(shape)


def tensor_checksum(tensor: torch.Tensor) -> str:
    """sha256 over a tensor's dtype, shape and bytes: what `srnet_config.json` records for each saved tensor."""
    digest = hashlib.sha256(f"{tensor.dtype}{tuple(tensor.shape)}".encode())
    digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def _load_checked_tensors(
    directory: str, config: SRNetMaskConfig, model_id: str | os.PathLike
) -> dict[str, torch.Tensor]:
    """Read `srnet_masks.safetensors` and check it against the config: every mask present, uint8, of the
    right length, and (for files that record them) every tensor's checksum. Raise `ValueError` naming the
    file and the key otherwise."""
    path = os.path.join(directory, MASKS_NAME)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{model_id} has {CONFIG_NAME} but no {MASKS_NAME}: the mask directory is incomplete.")
    try:
        tensors = load_file(path)
    except Exception as err:  # truncated or overwritten file: safetensors cannot parse it
        raise ValueError(f"{path} is damaged and cannot be read ({err}); save or download the masks again.") from err
    for name, shape in config.module_shapes.items():
        if name not in tensors:
            raise ValueError(
                f"{path} has no mask for {name!r} that {CONFIG_NAME} lists: the file is incomplete or belongs to "
                "another run; save or download the masks again."
            )
        packed = tensors[name]
        expected = math.ceil(math.prod(shape) / 8)
        if packed.dtype != torch.uint8 or packed.dim() != 1:
            raise ValueError(
                f"The mask {name!r} in {path} is a {packed.dtype} tensor of shape {tuple(packed.shape)}; "
                f"a bit-packed mask is a 1-d uint8 tensor ({expected} bytes). The file was not written by "
                "SRNetModel.save_pretrained or is damaged."
            )
        if packed.numel() != expected:
            raise ValueError(
                f"The mask {name!r} in {path} has {packed.numel()} bytes, but the layer's shape {tuple(shape)} needs "
                f"{expected}: the file is truncated or damaged; save or download the masks again."
            )
    if not config.tensor_checksums:
        logger.warning(
            f"{path} was written without checksums (an older hf_srnets): the masks are loaded unverified. "
            "Save them again with SRNetModel.save_pretrained to record checksums."
        )
        return tensors
    for key, checksum in config.tensor_checksums.items():
        if key not in tensors:
            raise ValueError(f"{path} lacks the tensor {key!r} that {CONFIG_NAME} records: the file is incomplete.")
        if tensor_checksum(tensors[key]) != checksum:
            raise ValueError(
                f"The tensor {key!r} in {path} does not match the checksum in {CONFIG_NAME}: the file is damaged "
                "(or was changed after saving). Save or download the masks again."
            )
    unrecorded = sorted(set(tensors) - set(config.tensor_checksums))
    if unrecorded:
        raise ValueError(
            f"{path} holds tensors that {CONFIG_NAME} does not record, e.g. {unrecorded[0]!r}: "
            "the two files do not belong together."
        )
    return tensors


def weights_fingerprint(model: nn.Module, names: list[str]) -> str:
    """sha256 over the named linear layers' weights (float32, C order): identifies the base weights."""
    digest = hashlib.sha256()
    for name in sorted(names):
        module = model.get_submodule(name)
        weight = module.base_layer.weight if isinstance(module, MaskedLinear) else module.weight
        digest.update(name.encode())
        digest.update(weight.detach().float().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:16]


class SRNetModel(nn.Module):
    """A sequence-classification model whose θ_pr linear layers are wrapped in `MaskedLinear`.

    All base weights are frozen; only the mask scores train (plus the classifier when
    `config.trainable_classifier`). Attribute access falls through to the wrapped model, as in PEFT.

    Example:
        >>> model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=3)
        >>> srnet = SRNetModel(model, SRNetMaskConfig(sparsity=0.5))
        >>> srnet.save_pretrained("masks/")          # config + bit-packed masks only
        >>> plain = srnet.merge_and_unload()          # pruned weights set to exactly 0
    """

    def __init__(self, model: nn.Module, config: SRNetMaskConfig, *, initialize: bool = True) -> None:
        super().__init__()
        self.base_model = model
        self.srnet_config = config
        model_type = getattr(getattr(model, "config", None), "model_type", None)
        config.model_type = config.model_type or model_type
        if config.base_model_name_or_path is None:
            config.base_model_name_or_path = getattr(getattr(model, "config", None), "_name_or_path", None) or None
        layer_targets, cls_targets = resolve_target_modules(
            model, model_type, config.target_modules, config.mask_classifier, config.classifier_modules
        )
        self.layer_targets = layer_targets
        self.classifier_targets = cls_targets
        targets = layer_targets + (cls_targets if config.mask_classifier else [])
        for param in model.parameters():
            param.requires_grad_(False)
        for name in targets:
            parent, child = _get_submodule_parent(model, name)
            setattr(parent, child, MaskedLinear(getattr(parent, child)))
        if config.trainable_classifier:
            for name in cls_targets:
                for param in model.get_submodule(name).parameters():
                    param.requires_grad_(True)
        config.module_shapes = {n: list(model.get_submodule(n).weight.shape) for n in targets}
        if initialize:
            self.initialize_masks()

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

    def masked_layers(self) -> dict[str, MaskedLinear]:
        """Module name (relative to the base model) -> `MaskedLinear`, in model order."""
        return {n: m for n, m in self.base_model.named_modules() if isinstance(m, MaskedLinear)}

    def masked_layers_scores(self) -> list[nn.Parameter]:
        return [layer.mask_scores for layer in self.masked_layers().values()]

    def fingerprint_modules(self) -> list[str]:
        """Masked layers whose base weights identify the base model (a trained classifier is saved instead)."""
        saved = set(self.classifier_targets) if self.srnet_config.trainable_classifier else set()
        return [name for name in self.masked_layers() if name not in saved]

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.base_model(*args, **kwargs)

    # -- mask search -------------------------------------------------------------------------------------
    @torch.no_grad()
    def initialize_masks(self) -> None:
        """Appendix Eq. 1 (hard) or Eq. 2 (soft) at the schedule's starting sparsity."""
        cfg = self.srnet_config
        for layer in self.masked_layers().values():
            layer.init_scores(cfg.mask_init, cfg.start_sparsity, cfg.alpha, cfg.init_threshold)
        if cfg.mask_init == "soft" and cfg.sparsity_scope == "global":
            self.update_thresholds(cfg.start_sparsity)
        self.srnet_config.base_fingerprint = weights_fingerprint(self.base_model, self.fingerprint_modules())

    @torch.no_grad()
    def update_thresholds(self, sparsity: float) -> None:
        """Recompute φ so that exactly ⌊s·n⌋ weights are pruned per matrix (local) or over all (global)."""
        if not 0.0 <= sparsity < 1.0:
            raise ValueError(f"sparsity must be in [0, 1), got {sparsity}")
        layers = list(self.masked_layers().values())
        if self.srnet_config.sparsity_scope == "global":
            total = sum(layer.mask_scores.numel() for layer in layers)
            results = exact_thresholds([layer.mask_scores for layer in layers], math.floor(sparsity * total))
        else:
            results = [
                exact_thresholds([layer.mask_scores], math.floor(sparsity * layer.mask_scores.numel()))[0]
                for layer in layers
            ]
        for layer, (phi, tie_index, has_tie) in zip(layers, results):
            layer.set_threshold(phi, tie_index, has_tie)

    # -- fixed masks with trainable weights (IMP, and fine-tuning a subnetwork in isolation) -------------------
    @torch.no_grad()
    def set_masks(self, masks: dict[str, torch.Tensor]) -> None:
        """Fix the binary masks: scores become 1 (kept) / 0 (pruned) with φ = 0.5."""
        for name, layer in self.masked_layers().items():
            layer.mask_scores.copy_(masks[name].to(layer.mask_scores.dtype))
            layer.set_threshold(0.5, 0, False)

    def train_weights_with_fixed_masks(self) -> None:
        """Freeze the masks and train every weight of the model instead; pruned weights are zeroed (and stay 0
        as long as `zero_pruned_weights` runs after each optimiser step, which `FixedMaskCallback` does)."""
        for param in self.base_model.parameters():
            param.requires_grad_(True)
        for layer in self.masked_layers().values():
            layer.mask_scores.requires_grad_(False)
        self.zero_pruned_weights()

    @torch.no_grad()
    def zero_pruned_weights(self) -> None:
        for layer in self.masked_layers().values():
            layer.base_layer.weight.mul_(layer.binary_mask().to(layer.base_layer.weight.dtype))

    @torch.no_grad()
    def magnitude_prune(self, sparsity: float) -> None:
        """Prune, per matrix, the smallest remaining |W| until exactly ⌊s·n⌋ weights are 0 (Algorithm 1, line 8).

        Already pruned weights stay pruned (they rank first); ties are broken by position.
        """
        masks = {}
        for name, layer in self.masked_layers().items():
            kept = layer.binary_mask()
            magnitude = torch.where(kept, layer.base_layer.weight.abs().float(), -1.0)
            num_zeros = math.floor(sparsity * magnitude.numel())
            ((phi, tie_index, has_tie),) = exact_thresholds([magnitude], num_zeros)
            masks[name] = binarize(magnitude, torch.tensor(phi), torch.tensor(tie_index), has_tie)
        self.set_masks(masks)
        self.zero_pruned_weights()

    @torch.no_grad()
    def binary_masks(self) -> dict[str, torch.Tensor]:
        return {name: layer.binary_mask() for name, layer in self.masked_layers().items()}

    @torch.no_grad()
    def sparsity_report(self) -> dict[str, Any]:
        """Sparsity over all masked weights (the paper's reference count, §4.1.4) and per matrix."""
        per_module: dict[str, float] = {}
        zeros = total = 0
        for name, mask in self.binary_masks().items():
            n, z = mask.numel(), int((~mask).sum())
            per_module[name] = z / n
            zeros += z
            total += n
        return {
            "sparsity": zeros / total if total else 0.0,
            "num_prunable": total,
            "num_pruned": zeros,
            "per_module": per_module,
        }

    # -- export ----------------------------------------------------------------------------------------
    @torch.no_grad()
    def merge_and_unload(self) -> nn.Module:
        """Return the wrapped model with plain `nn.Linear` layers whose weights are m ⊙ W (pruned = 0).

        One-way: the returned model no longer knows its scores. The SRNetModel must not be used after.
        """
        for name, layer in self.masked_layers().items():
            parent, child = _get_submodule_parent(self.base_model, name)
            plain = layer.base_layer
            plain.weight = nn.Parameter(layer.merged_weight(), requires_grad=False)
            setattr(parent, child, plain)
        for param in self.base_model.parameters():
            param.requires_grad_(True)
        return self.base_model

    def _trainable_base_tensors(self) -> dict[str, torch.Tensor]:
        """Weights outside the masks that train (the classifier, when `trainable_classifier`)."""
        out: dict[str, torch.Tensor] = {}
        for name, param in self.base_model.named_parameters():
            if param.requires_grad and not name.endswith("mask_scores"):
                out[_CLASSIFIER_PREFIX + name] = param.detach().cpu().contiguous()
        return out

    def save_pretrained(self, save_directory: str | os.PathLike, **_: Any) -> None:
        """Write `srnet_config.json` and `srnet_masks.safetensors` (bit-packed masks), never base weights.

        When the classifier trained (`trainable_classifier`), its weights are saved too, since the masks
        alone would not reproduce the model.
        """
        os.makedirs(save_directory, exist_ok=True)
        tensors = {name: pack_mask(mask) for name, mask in self.binary_masks().items()}
        tensors.update(self._trainable_base_tensors())
        checksums = {key: tensor_checksum(tensor) for key, tensor in sorted(tensors.items())}
        dataclasses.replace(self.srnet_config, tensor_checksums=checksums).save_pretrained(save_directory)
        # one metadata key only: safetensors writes the metadata map in a random order, so a second key would make
        # two saves of the same masks differ byte for byte (the shapes are in srnet_config.json)
        save_file(tensors, os.path.join(save_directory, MASKS_NAME), metadata={"format": "pt"})

    def trainable_state_dict(self) -> dict[str, torch.Tensor]:
        """Scores, thresholds and trainable classifier weights: what a checkpoint needs to resume."""
        state = {}
        for name, tensor in self.base_model.state_dict(keep_vars=True).items():
            if any(name.endswith(s) for s in ("mask_scores", "threshold", "tie_index", "has_tie")) or (
                isinstance(tensor, nn.Parameter) and tensor.requires_grad
            ):
                state[name] = tensor.detach().cpu().contiguous()
        return state

    def save_training_state(self, directory: str | os.PathLike) -> None:
        save_file(self.trainable_state_dict(), os.path.join(directory, TRAINING_STATE_NAME))

    def load_training_state(self, directory: str | os.PathLike) -> None:
        state = load_file(os.path.join(directory, TRAINING_STATE_NAME))
        missing = set(self.trainable_state_dict()) - set(state)
        if missing:
            raise ValueError(f"{directory} lacks {len(missing)} SRNet tensors, e.g. {sorted(missing)[0]}")
        self.base_model.load_state_dict(state, strict=False)

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
        directory = _resolve_directory(model_id, revision=revision, token=token, cache_dir=cache_dir)
        config = SRNetMaskConfig.from_pretrained(directory)
        model_type = getattr(getattr(model, "config", None), "model_type", None)
        if config.model_type and model_type and config.model_type != model_type:
            raise ValueError(
                f"The masks in {model_id} were saved for a {config.model_type!r} model, "
                f"but the base model is {model_type!r}. Load the base model they were searched on "
                f"({config.base_model_name_or_path})."
            )
        for name, shape in config.module_shapes.items():
            try:
                module = model.get_submodule(name)
            except AttributeError:
                raise ValueError(
                    f"The masks in {model_id} need a module {name!r} that the base model does not have; "
                    f"they were saved for {config.base_model_name_or_path}."
                ) from None
            if list(module.weight.shape) != list(shape):
                raise ValueError(
                    f"Shape mismatch for {name}: masks in {model_id} are {tuple(shape)}, the base model's weight "
                    f"is {tuple(module.weight.shape)}. They were saved for {config.base_model_name_or_path}."
                )
        saved_shapes = dict(config.module_shapes)
        srnet = cls(model, config, initialize=False)
        if set(srnet.srnet_config.module_shapes) != set(saved_shapes):
            raise ValueError(
                f"The masks in {model_id} cover {len(saved_shapes)} layers, but this model resolves "
                f"{len(srnet.srnet_config.module_shapes)} targets: was it saved with other target_modules?"
            )
        if check_fingerprint and config.base_fingerprint:
            found = weights_fingerprint(srnet.base_model, srnet.fingerprint_modules())
            if found != config.base_fingerprint:
                raise ValueError(
                    f"The base weights differ from those the masks in {model_id} were searched on "
                    f"(fingerprint {found} != {config.base_fingerprint}; base {config.base_model_name_or_path}). "
                    "Pass check_fingerprint=False to apply the masks to these weights anyway."
                )
        tensors = _load_checked_tensors(directory, config, model_id)
        expected = srnet._trainable_base_tensors() if config.trainable_classifier else {}
        for key, current in expected.items():
            saved = tensors.get(key)
            if saved is None or saved.shape != current.shape or saved.dtype != current.dtype:
                found = "missing" if saved is None else f"a {saved.dtype} tensor of shape {tuple(saved.shape)}"
                raise ValueError(
                    f"The trained classifier tensor {key!r} in {os.path.join(directory, MASKS_NAME)} is {found}; "
                    f"the model needs a {current.dtype} tensor of shape {tuple(current.shape)}."
                )
        with torch.no_grad():
            srnet.set_masks({name: unpack_mask(tensors[name], tuple(saved_shapes[name])) for name in saved_shapes})
            trainable = {
                k[len(_CLASSIFIER_PREFIX) :]: v for k, v in tensors.items() if k.startswith(_CLASSIFIER_PREFIX)
            }
            if trainable:
                srnet.base_model.load_state_dict(trainable, strict=False)
        srnet.srnet_config.base_fingerprint = config.base_fingerprint
        if not is_trainable:
            for param in srnet.parameters():
                param.requires_grad_(False)
        return srnet

    def push_to_hub(self, repo_id: str, *, private: bool | None = None, token: str | None = None) -> str:
        """Upload the mask config and the bit-packed masks (not the base weights) to a Hub model repo.

        Raises `hf_srnets.hub.HubUploadError` (with a retry hint) when the upload fails.
        """
        import tempfile

        from ..hub import make_config_portable, upload_folder

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


def _resolve_directory(
    model_id: str | os.PathLike, revision: str | None, token: str | None, cache_dir: str | None = None
) -> str:
    """A local directory as is; otherwise a Hub snapshot (downloaded, or from the local cache when offline)."""
    if os.path.isdir(model_id):
        return str(model_id)
    from huggingface_hub import snapshot_download

    kwargs = {
        "revision": revision,
        "token": token,
        "cache_dir": cache_dir,
        "allow_patterns": ["*.json", "*.safetensors", "*.md"],
    }
    try:
        return snapshot_download(str(model_id), **kwargs)
    except Exception as err:  # offline, missing repo, auth: fall back to a cached snapshot if there is one
        try:
            return snapshot_download(str(model_id), local_files_only=True, **kwargs)
        except Exception:
            raise OSError(
                f"{model_id!r} is not a local directory, could not be downloaded from the Hub ({err}) and is not in "
                "the local Hub cache. Check the path, or the repo id and your connection/token."
            ) from err
