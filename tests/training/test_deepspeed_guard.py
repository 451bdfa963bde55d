"""`training.deepspeed.check_deepspeed_masks`: the one combination DeepSpeed ZeRO would get wrong is refused when the
Trainer starts, with the fix: a method with a penalty on its mask parameters (L0) at stage 3, where those parameters
are empty outside the forward pass; every method runs at stage 2, and every method without a penalty at stage 3
(their two-process runs: tests/training/test_deepspeed.py)."""

from __future__ import annotations

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


def _method(name: str):
    return SRNetModel(tiny_model("bert"), CONFIGS[name]).method


def test_a_penalty_on_the_masks_is_refused_at_zero_3():
    with pytest.raises(InputError, match=r"ZeRO stage 3 and --pruning l0: its penalty.*deepspeed_zero2.yaml.*fsdp"):
        check_deepspeed_masks(_method("l0"), 3)


@pytest.mark.parametrize(
    "name, stage", [(name, stage) for name in sorted(CONFIGS) for stage in (1, 2, 3) if (name, stage) != ("l0", 3)]
)
def test_the_others_start(name, stage):
    check_deepspeed_masks(_method(name), stage)  # no error
