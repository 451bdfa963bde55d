"""SRNetTrainer adds the pruning method's controller itself, once, and gives the method's scores their own group."""

from __future__ import annotations

import pytest
from conftest import tiny_model

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import FixedMaskCallback, IMPCallback, MagnitudeConfig, MaskThresholdCallback, ThresholdConfig
from hf_srnets.training.trainer import SRNetTrainer

from .helpers import cpu_args


def _of(trainer: SRNetTrainer, kind: type) -> list:
    return [c for c in trainer.callback_handler.callbacks if isinstance(c, kind)]


@pytest.mark.parametrize("passed", [False, True])
def test_imp_controller_is_added_once(tmp_path, passed):
    srnet = SRNetModel(tiny_model("bert"), MagnitudeConfig(sparsity=0.5))
    given = [IMPCallback(srnet, 0.5)] if passed else []
    trainer = SRNetTrainer(model=srnet, args=cpu_args(tmp_path), callbacks=given)
    assert len(_of(trainer, FixedMaskCallback)) == 1 and len(_of(trainer, IMPCallback)) == 1
    assert not _of(trainer, MaskThresholdCallback)


def test_fixed_mask_and_threshold_controllers(tmp_path):
    search = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5, threshold_update_interval=2))
    trainer = SRNetTrainer(model=search, args=cpu_args(tmp_path, mask_learning_rate=0.1, weight_decay=0.01))
    assert len(_of(trainer, MaskThresholdCallback)) == 1 and not _of(trainer, FixedMaskCallback)
    optimizer = trainer.create_optimizer()
    scores = search.masked_layers_scores()
    assert [id(p) for p in optimizer.param_groups[0]["params"]] == [id(p) for p in scores]
    assert optimizer.param_groups[0]["lr"] == 0.1 and optimizer.param_groups[0]["weight_decay"] == 0.0
    subnetwork = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5))
    subnetwork.train_weights_with_fixed_masks()
    trainer = SRNetTrainer(model=subnetwork, args=cpu_args(tmp_path), callbacks=[FixedMaskCallback(subnetwork)])
    assert len(_of(trainer, FixedMaskCallback)) == 1 and not _of(trainer, MaskThresholdCallback)
    score_ids = {id(p) for p in subnetwork.masked_layers_scores()}
    groups = trainer.create_optimizer().param_groups
    assert not any(id(p) in score_ids for group in groups for p in group["params"])  # masks fixed: weights train
