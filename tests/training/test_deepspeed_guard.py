"""`training.deepspeed`: masks DeepSpeed ZeRO would get wrong are refused when the Trainer starts, with the fix: every
method at ZeRO-3 (its parameters are empty outside the forward), and at any stage the methods that write weights
between steps (ZeRO's fp32 copy would overwrite them); mask training and L0 at ZeRO-1/2 start, with a warning."""

from __future__ import annotations

import logging

import pytest
from conftest import tiny_model

from hf_srnets.errors import InputError
from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import L0Config, MagnitudeConfig, OneShotMagnitudeConfig, ThresholdConfig, WandaConfig
from hf_srnets.training.deepspeed import check_deepspeed_masks

CONFIGS = {
    "mask": ThresholdConfig(sparsity=0.5),
    "l0": L0Config(sparsity=0.5),
    "imp": MagnitudeConfig(sparsity=0.3),
    "magnitude-oneshot": OneShotMagnitudeConfig(sparsity=0.5),
    "wanda": WandaConfig(sparsity=0.5),
}


def _callbacks(method: str) -> list:
    return SRNetModel(tiny_model("bert"), CONFIGS[method]).trainer_callbacks()


@pytest.mark.parametrize("method", sorted(CONFIGS))
def test_zero_3_is_refused_for_every_method(method):
    with pytest.raises(InputError, match=r"ZeRO stage 3.*empty outside the forward.*--fsdp full_shard"):
        check_deepspeed_masks(_callbacks(method), 3)


@pytest.mark.parametrize("method, writer", [("imp", "IMPCallback"), ("magnitude-oneshot", "OneShotCallback"),
                                            ("wanda", "OneShotCallback")])  # fmt: skip
@pytest.mark.parametrize("stage", [1, 2])
def test_methods_writing_weights_are_refused_at_every_stage(method, writer, stage):
    with pytest.raises(InputError, match=rf"ZeRO stage {stage}.*{writer}.*fp32 copy.*accelerate_configs/fsdp.yaml"):
        check_deepspeed_masks(_callbacks(method), stage)


@pytest.mark.parametrize("method", ["mask", "l0"])
def test_searches_that_write_no_weight_start_at_zero_2_with_a_warning(method, caplog):
    with caplog.at_level(logging.WARNING, logger="hf_srnets.training.deepspeed"):
        check_deepspeed_masks(_callbacks(method), 2)
    assert "ZeRO stage 2) with masks is untested" in caplog.text
