"""`wanda`: one-shot pruning by |W|·‖X‖ (Sun et al. 2024), per output row or N:M, no retraining."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import torch
from transformers import TrainerCallback

from ...errors import InputError
from ...run_files import SRNET_CONFIG_NAME
from ..base import CardContext, PruningMethod, register_pruning_method
from ..masked_linear import MaskedLinear
from ..masked_model import MaskedModel
from ..nm import check_nm_shape, nm_mask
from ..oneshot import OneShotCallback, keep_all
from ..sharding import all_reduce_sum, full_parameters, process_share
from .calibration import InputNorms, calibration_inputs
from .config import WandaConfig, parse_nm
from .importance import row_mask, wanda_scores

logger = logging.getLogger(__name__)


def wanda_masks(srnet: MaskedModel, batches: Iterable[Any], config: WandaConfig) -> dict[str, torch.Tensor]:
    """Keep-masks of every masked layer from the input norms of `config.calibration_samples` training examples.

    Fewer training examples than asked calibrate on all of them, with a warning, and the model's config
    (`srnet.srnet_config`, its own copy) records the number used as `calibration_samples`: the card and the saved
    config say what the masks came from, not what was asked. `config` stays as given."""
    layers = keep_all(srnet)
    device = next(srnet.base_model.parameters()).device
    seen = 0
    # hook the masked layers themselves: their forward multiplies base_layer.weight by the mask without calling
    # base_layer, so a hook on base_layer never fires (all norms 0, every row pruned by position)
    with InputNorms(layers) as norms:
        # several processes (DDP, FSDP): each its share of the examples from its own batches, statistics summed
        for inputs in calibration_inputs(batches, process_share(config.calibration_samples), device):
            norms.attention_mask = inputs.get("attention_mask")
            srnet(**inputs)  # the model itself, not its base model: under FSDP its forward gathers the parameters
            seen += len(next(iter(inputs.values())))
    norms.sum_over_processes()
    seen = int(all_reduce_sum(torch.tensor(seen)))
    if seen == 0:
        raise InputError("--pruning wanda found no training examples to calibrate on: give --train_file data.")
    if seen < config.calibration_samples:
        logger.warning(
            f"--calibration_samples {config.calibration_samples} is more than the {seen} training examples: "
            f"calibrated on all {seen}, and the card and {SRNET_CONFIG_NAME} record {seen}"
        )
        srnet.srnet_config.calibration_samples = seen  # a WandaConfig: the model's own copy (`PruningMethod.config`)
    nm = nm_pattern(config)
    masks = {}
    with full_parameters(srnet):
        for name, norm in norms.norms().items():
            scores = wanda_scores(layers[name].base_layer.weight, norm)
            if nm is not None:
                check_nm_shape(tuple(scores.shape), nm[1], name)
            masks[name] = nm_mask(scores, *nm) if nm else row_mask(scores, config.sparsity)
    return masks


def nm_pattern(config: WandaConfig) -> tuple[int, int] | None:
    """(N, M) at `--mask_granularity nm` (or its older spelling `--wanda_nm N:M`), else None."""
    if config.mask_granularity == "nm":
        return config.nm_n, config.nm_m
    return parse_nm(config.wanda_nm) if config.wanda_nm else None


@register_pruning_method
class WandaPruning(PruningMethod):
    """One-shot: S_ij = |W_ij|·‖X_j‖ on calibration batches of the training file; per output row the ⌊s·n_in⌋
    lowest scores are pruned (or N:M); the weights stay θ_0 (`OneShotCallback`)."""

    name = "wanda"
    config_class = WandaConfig
    layer_class = MaskedLinear
    trains_scores = False
    granularities = ("element", "nm")
    citations = ("sun2024wanda",)

    @classmethod
    def prepare_config(cls, config: WandaConfig, training_args: Any, *, fresh_head: bool) -> WandaConfig:
        """N:M sets the sparsity to (M−N)/M; nothing trains, so the classifier must not be new."""
        if fresh_head:
            raise InputError(
                "--pruning wanda prunes a fine-tuned classifier once, with no training, but this checkpoint's "
                "classifier is newly initialised: give a fine-tuned --model_name_or_path (a teacher run's output)."
            )
        derived: dict[str, Any] = {"trainable_classifier": False}
        if config.wanda_nm:  # the older spelling of --mask_granularity nm
            n, m = parse_nm(config.wanda_nm)
            derived.update(mask_granularity="nm", nm_n=n, nm_m=m, sparsity=(m - n) / m)
        return config.resolved(**derived)

    def initialize(self, srnet: MaskedModel) -> None:
        srnet.train_weights_with_fixed_masks()

    def callbacks(self, srnet: MaskedModel) -> list[TrainerCallback]:
        if not srnet.is_search:  # loaded masks: fine-tune the subnetwork with them fixed
            return super().callbacks(srnet)
        return [OneShotCallback(srnet, lambda model, batches: wanda_masks(model, batches, self.config))]

    @classmethod
    def search_description(cls, config: WandaConfig, context: CardContext) -> str:
        nm = nm_pattern(config)
        how = (
            f"the {nm[0]} largest scores of every {nm[1]} inputs kept"
            if nm
            else f"the {config.sparsity:.0%} lowest scores of each output row pruned"
        )
        return (
            f"one-shot Wanda (Sun et al. 2024): scores |W_ij|·‖X_j‖₂ over the tokens of {config.calibration_samples} "
            f"training examples, {how}; no weight retrained"
        )
