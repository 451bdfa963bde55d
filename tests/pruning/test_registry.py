"""The pruning registry: `--pruning` names and aliases, configs that dispatch on `pruning_method`, run defaults."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from conftest import tiny_model

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import (
    FixedMaskCallback,
    IMPCallback,
    MagnitudeConfig,
    MagnitudePruning,
    MaskThresholdCallback,
    PruningConfig,
    ThresholdConfig,
    ThresholdPruning,
    resolve_pruning,
)


def test_pruning_names_and_aliases_resolve():
    assert resolve_pruning("mask") == (ThresholdPruning, {})
    assert resolve_pruning("threshold") == (ThresholdPruning, {})
    assert resolve_pruning("imp") == (MagnitudePruning, {"rewind": False})
    assert resolve_pruning("imp-rw") == (MagnitudePruning, {"rewind": True})
    with pytest.raises(ValueError, match="imp-rw"):
        resolve_pruning("none")
    assert ThresholdPruning.trains_scores and not MagnitudePruning.trains_scores


def test_config_files_dispatch_on_the_method(tmp_path):
    MagnitudeConfig(sparsity=0.3, imp_prune_ratio=0.1, rewind=True).save_pretrained(tmp_path / "imp")
    loaded = PruningConfig.from_pretrained(tmp_path / "imp")
    assert type(loaded) is MagnitudeConfig and loaded.rewind and loaded.pruning_method == "magnitude"
    old = ThresholdConfig(sparsity=0.4).to_dict()
    del old["pruning_method"]  # files written before the registry
    assert type(PruningConfig.from_dict(old)) is ThresholdConfig
    with pytest.raises(ValueError, match="cannot hold"):
        ThresholdConfig.from_dict(MagnitudeConfig().to_dict())
    with pytest.raises(ValueError, match="Unknown pruning method"):
        PruningConfig.from_dict({**old, "pruning_method": "nope"})
    with pytest.raises(ValueError, match="needs a MagnitudeConfig"):
        ThresholdConfig(pruning_method="magnitude")


def test_prepare_config_fills_run_defaults(caplog):
    steps = SimpleNamespace(eval_strategy="steps", eval_steps=25)
    given = ThresholdConfig(sparsity=0.9, initial_sparsity=0.7)
    config = ThresholdPruning.prepare_config(given, steps, fresh_head=True)
    assert config.threshold_update_interval == 25 and config.sparsity_schedule == "cubic"
    assert config.trainable_classifier is True
    assert given == ThresholdConfig(sparsity=0.9, initial_sparsity=0.7)  # a copy is filled in, not the user's
    config = ThresholdConfig(trainable_classifier=False)
    with caplog.at_level("WARNING"):
        config = ThresholdPruning.prepare_config(
            config, SimpleNamespace(eval_strategy="no", eval_steps=None), fresh_head=True
        )
    assert config.threshold_update_interval == 1000 and config.sparsity_schedule == "constant"
    assert config.trainable_classifier is False and "stays random" in caplog.text
    imp = MagnitudePruning.prepare_config(MagnitudeConfig(sparsity=0.5), steps, fresh_head=True)
    assert imp.trainable_classifier is False  # every weight trains under IMP
    with pytest.raises(ValueError, match="imp_interval"):
        MagnitudePruning.prepare_config(MagnitudeConfig(sparsity=0.5, imp_interval=0.3), steps, fresh_head=False)


def test_each_method_gives_its_controller():
    search = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5, threshold_update_interval=2))
    assert [type(c) for c in search.trainer_callbacks()] == [MaskThresholdCallback]
    imp = SRNetModel(tiny_model("bert"), MagnitudeConfig(sparsity=0.5))
    assert [type(c) for c in imp.trainer_callbacks()] == [IMPCallback]
    assert imp.sparsity_report()["sparsity"] == 0.0 and imp.srnet_config.base_fingerprint is None
    params = dict(imp.base_model.named_parameters())
    assert all(p.requires_grad != name.endswith("mask_scores") for name, p in params.items())
    search.train_weights_with_fixed_masks()  # fine-tuning a found subnetwork
    assert [type(c) for c in search.trainer_callbacks()] == [FixedMaskCallback]
    assert SRNetModel(tiny_model("bert"), ThresholdConfig(), initialize=False).method.target_sparsity(3, 10) == 0.5
