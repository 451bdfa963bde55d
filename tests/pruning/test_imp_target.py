"""IMP settings whose k rounds do not fit in the run are refused before training, not cut short in silence."""

import math

import pytest
import torch
from conftest import tiny_model

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import IMPCallback, ThresholdConfig, imp_rounds

from .test_imp import _train


def _imp_model():
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5), initialize=False)
    srnet.train_weights_with_fixed_masks()
    return srnet


def test_interval_too_long_for_the_target_is_refused():
    # k = 9 rounds, Δt = 0.2: rounds at 0, .2, .4, .6, .8 (and 1.0), the old code ended at 60% without a word
    with pytest.raises(ValueError) as err:
        imp_rounds(0.9, 0.1, 0.2)
    message = str(err.value)
    for needle in ["--sparsity 0.9", "--imp_interval 0.2", "--imp_prune_ratio 0.1", "k = 9", "1.8 > 1"]:
        assert needle in message, needle
    assert "largest sparsity reachable is 0.5" in message and "use --imp_interval 0.111 or less" in message
    with pytest.raises(ValueError, match=r"--pruning imp-rw .* reachable is 0\.6; .* --imp_interval 0\.125 or less"):
        imp_rounds(0.9, 0.1, 0.2, rewind=True)
    with pytest.raises(ValueError, match=r"--imp_interval 0\.2"):
        IMPCallback(_imp_model(), target_sparsity=0.9, prune_ratio=0.1, interval=0.2)


@pytest.mark.parametrize(
    "sparsity, ratio, interval, rewind, rounds",
    [(0.5, 0.1, 0.2, False, 5), (0.6, 0.1, 0.2, True, 6), (0.9, 0.1, 0.1, False, 9), (0.9, 0.1, 0.1, True, 9)],
)
def test_settings_that_fit_exactly_are_accepted(sparsity, ratio, interval, rewind, rounds):
    assert imp_rounds(sparsity, ratio, interval, rewind=rewind) == rounds


@pytest.mark.parametrize("rewind", [False, True])
def test_accepted_boundary_settings_reach_the_target(tmp_path, rewind):
    srnet = _imp_model()
    target = 0.6 if rewind else 0.5  # (k-1)·Δt = 1 for imp-rw, k·Δt = 1 for imp
    _train(tmp_path, srnet, IMPCallback(srnet, target, prune_ratio=0.1, interval=0.2, rewind=rewind), max_steps=10)
    for name, mask in srnet.binary_masks().items():
        assert int((~mask).sum()) == math.floor(target * mask.numel()), name


def test_a_run_too_short_for_the_rounds_is_refused(tmp_path):
    srnet = _imp_model()
    before = {n: m.clone() for n, m in srnet.binary_masks().items()}
    # Δt = 0.1 · 3 steps rounds up to 1 step: 5 rounds need 5 steps, the run has 3
    with pytest.raises(ValueError, match=r"5 training steps, but the run has 3.* --max_steps"):
        _train(tmp_path, srnet, IMPCallback(srnet, target_sparsity=0.5, prune_ratio=0.1, interval=0.1), max_steps=3)
    for name, mask in srnet.binary_masks().items():
        assert torch.equal(mask, before[name]), name  # refused before any pruning


def test_a_run_stopped_before_the_target_says_so(tmp_path, caplog):
    class StoppedAt4(IMPCallback):  # as if another callback (or the user) stopped the run at step 4
        def on_step_end(self, args, state, control, **kwargs):
            super().on_step_end(args, state, control, **kwargs)
            control.should_training_stop = control.should_training_stop or state.global_step == 4
            return control

    srnet = _imp_model()
    with caplog.at_level("WARNING", logger="hf_srnets.pruning.magnitude.controller"):
        trainer = _train(tmp_path, srnet, StoppedAt4(srnet, target_sparsity=0.5, prune_ratio=0.1, interval=0.1))
    assert trainer.state.global_step == 4
    assert "IMP ended after 3 of 5 pruning rounds" in caplog.text and "not the target 50%" in caplog.text
