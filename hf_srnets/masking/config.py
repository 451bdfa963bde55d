"""Configuration of the SRNet masking adapter (Win-win §3.2.2, appendix A.1.2 and Table 4)."""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from typing import Any, Literal

CONFIG_NAME = "srnet_config.json"
MASKS_NAME = "srnet_masks.safetensors"
SRNET_TYPE = "SRNET_MASK"


@dataclass
class SRNetMaskConfig:
    """What to mask and how to search the mask.

    Parameters that control *which* weights are pruned:
        target_modules: Names (exact module paths or name suffixes) or one regular expression (a string)
            selecting the `nn.Linear` layers to mask. `None` resolves the paper's θ_pr from the
            architecture: W_Q, W_K, W_V, W_AO, W_in, W_out of every Transformer layer (§3.1).
        mask_classifier: Also mask the classifier weight W_cls (part of θ_pr in the paper).
        classifier_modules: Names of the classifier's linear layers. `None` resolves them by architecture.
        trainable_classifier: Train the classifier weights together with the mask scores. Needed when the
            classifier is newly initialised (mask search on a pre-trained checkpoint, paradigm (c)).

    Parameters that control the mask search (Algorithm 2, Table 4):
        sparsity: Target sparsity s, the fraction of each masked matrix set to zero, in [0, 1).
        initial_sparsity: Starting sparsity s_i of the cubic schedule; `None` keeps s fixed throughout.
        sparsity_schedule: `"constant"` (the paper's default) or `"cubic"` (Zhu & Gupta 2018; §5.2).
        schedule_start / schedule_end: Fractions of t_max where the cubic ramp starts and reaches s.
        mask_init: `"hard"` (appendix Eq. 1) or `"soft"` (appendix Eq. 2).
        alpha: α of Eq. 1; kept scores start at α·φ.
        init_threshold: φ at start for the hard init (0.01 in Table 4).
        threshold_update_interval: Δt_φ, steps between threshold updates (Table 4: the eval interval).
        sparsity_scope: `"local"` (each matrix has sparsity s, the paper's setting) or `"global"`
            (s over all masked weights together).

    Recorded with the masks (filled in by `SRNetModel`):
        base_model_name_or_path / model_type / module_shapes / base_fingerprint: what the masks belong to.
        tensor_checksums: sha256 of every tensor in `srnet_masks.safetensors` (dtype, shape and bytes), written by
            `save_pretrained` and checked by `from_pretrained`. Empty in files written before hf_srnets checked
            them: such masks load unverified.
    """

    target_modules: list[str] | str | None = None
    mask_classifier: bool = True
    classifier_modules: list[str] | None = None
    trainable_classifier: bool = False
    sparsity: float = 0.5
    initial_sparsity: float | None = None
    sparsity_schedule: Literal["constant", "cubic"] = "constant"
    schedule_start: float = 0.0
    schedule_end: float = 0.8
    mask_init: Literal["hard", "soft"] = "hard"
    alpha: float = 2.0
    init_threshold: float = 0.01
    threshold_update_interval: int = 1000
    sparsity_scope: Literal["local", "global"] = "local"
    base_model_name_or_path: str | None = None
    model_type: str | None = None
    srnet_type: str = SRNET_TYPE
    module_shapes: dict[str, list[int]] = field(default_factory=dict)
    base_fingerprint: str | None = None
    tensor_checksums: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise `ValueError` naming the bad field and the accepted values."""
        if not 0.0 <= self.sparsity < 1.0:
            raise ValueError(f"sparsity must be in [0, 1), got {self.sparsity}: pass e.g. --sparsity 0.5 for 50%.")
        if self.initial_sparsity is not None and not 0.0 <= self.initial_sparsity <= self.sparsity:
            raise ValueError(f"initial_sparsity must be in [0, sparsity={self.sparsity}], got {self.initial_sparsity}.")
        if self.sparsity_schedule not in ("constant", "cubic"):
            raise ValueError(f"sparsity_schedule must be 'constant' or 'cubic', got {self.sparsity_schedule!r}.")
        if self.sparsity_schedule == "cubic" and self.initial_sparsity is None:
            raise ValueError("The cubic sparsity schedule needs initial_sparsity (s_i), e.g. 0.7 for 0.7 -> 0.9.")
        if not 0.0 <= self.schedule_start < self.schedule_end <= 1.0:
            raise ValueError(
                "schedule_start and schedule_end are fractions of the training steps with "
                f"0 <= start < end <= 1, got {self.schedule_start} and {self.schedule_end}."
            )
        if self.mask_init not in ("hard", "soft"):
            raise ValueError(f"mask_init must be 'hard' or 'soft', got {self.mask_init!r}.")
        if self.alpha < 1.0:
            raise ValueError(f"alpha must be >= 1 (appendix Eq. 1), got {self.alpha}.")
        if self.init_threshold <= 0:
            raise ValueError(f"init_threshold must be > 0, got {self.init_threshold}.")
        if self.threshold_update_interval < 1:
            raise ValueError(f"threshold_update_interval must be >= 1, got {self.threshold_update_interval}.")
        if self.sparsity_scope not in ("local", "global"):
            raise ValueError(f"sparsity_scope must be 'local' or 'global', got {self.sparsity_scope!r}.")
        if self.srnet_type != SRNET_TYPE:
            raise ValueError(f"Not an SRNet mask config (srnet_type={self.srnet_type!r}).")

    @property
    def start_sparsity(self) -> float:
        """Sparsity at step 0: s_i for the cubic schedule, s otherwise."""
        if self.sparsity_schedule == "cubic" and self.initial_sparsity is not None:
            return self.initial_sparsity
        return self.sparsity

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SRNetMaskConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"Unknown SRNet config fields {unknown}; was this file written by a newer hf_srnets?")
        return cls(**data)

    def save_pretrained(self, save_directory: str | os.PathLike) -> None:
        os.makedirs(save_directory, exist_ok=True)
        with open(os.path.join(save_directory, CONFIG_NAME), "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=2, sort_keys=True)
            f.write("\n")

    @classmethod
    def from_pretrained(cls, directory: str | os.PathLike) -> SRNetMaskConfig:
        path = os.path.join(directory, CONFIG_NAME)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"No {CONFIG_NAME} in {directory}: is this an hf_srnets mask directory?")
        with open(path, encoding="utf-8") as f:
            return cls.from_dict(json.load(f))
