"""A subnetwork fine-tuned in isolation (`--pruning none --mask_from`, LTH / RobustT / Rand of Robust Tickets) saves
every weight it trained; loading it on the pre-trained base must give the trained model, whatever the base's
masked-layer weights are, while a mask-only directory still refuses other base weights."""

from __future__ import annotations

import pytest
import torch
from conftest import tiny_model

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import ThresholdConfig


def fine_tuned_in_isolation(tmp_path):
    """A found subnetwork whose weights trained with the masks fixed; the run records the fingerprint of the weights
    it starts from, which (as after an IMP-rw search, whose pruned weights are saved as 0) need not be the base's."""
    searched = SRNetModel(tiny_model("bert", seed=0), ThresholdConfig(sparsity=0.5))
    searched.train_weights_with_fixed_masks()
    with torch.no_grad():
        for param in searched.base_model.parameters():
            if param.requires_grad:
                param.add_(0.01 * torch.randn_like(param))  # "trained"
    searched.record_fingerprint()
    searched.save_pretrained(tmp_path / "isolated")
    return searched


def test_weights_saved_in_full_load_on_the_base_and_give_the_trained_model(tmp_path):
    trained = fine_tuned_in_isolation(tmp_path)
    loaded = SRNetModel.from_pretrained(tiny_model("bert", seed=0), tmp_path / "isolated")  # fingerprint checked
    batch = {"input_ids": torch.tensor([[2, 7, 9, 4, 3]]), "attention_mask": torch.ones(1, 5, dtype=torch.long)}
    trained.eval()
    with torch.no_grad():
        torch.testing.assert_close(loaded(**batch).logits, trained(**batch).logits, rtol=0, atol=1e-6)


def test_masks_without_their_weights_still_refuse_other_base_weights(tmp_path):
    searched = SRNetModel(tiny_model("bert", seed=0), ThresholdConfig(sparsity=0.5))
    searched.save_pretrained(tmp_path / "masks")
    with pytest.raises(ValueError, match="base weights differ"):
        SRNetModel.from_pretrained(tiny_model("bert", seed=1), tmp_path / "masks")
