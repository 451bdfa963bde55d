"""Masks written by hf_srnets before pruning methods became a registry (commit e6ac851) load unchanged.

The fixture (`tests/fixtures/masks_v0`, see its README) was written by the old code: a mask-training result with a
trained classifier and an IMP fixed mask holding trained weights. Loading checks the fingerprint and checksums.
"""

from pathlib import Path

import pytest
import torch
from transformers import AutoModelForSequenceClassification

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import PruningConfig, ThresholdConfig

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "masks_v0"
# masks must match bit for bit, logits only to float noise (4.7e-10 measured for imp): the summation order of CPU
# kernels varies with threads and load, so torch.equal on logits failed on unchanged code. 1e-7 is 200 times that
# noise and below what a wrong merge moves (measured: masks not applied 6e-3, ten kept weights zeroed 1.4e-6).
LOGITS_ATOL = 1e-7


@pytest.fixture(scope="module")
def expected() -> dict:
    return torch.load(FIXTURE / "expected.pt", weights_only=True)


def _load(kind: str) -> SRNetModel:
    base = AutoModelForSequenceClassification.from_pretrained(FIXTURE / "base").eval()
    return SRNetModel.from_pretrained(base, FIXTURE / kind, check_fingerprint=True)


def test_old_configs_have_no_method_and_load_as_threshold():
    for kind in ("threshold", "imp"):
        assert '"pruning_method"' not in (FIXTURE / kind / "srnet_config.json").read_text()
        config = PruningConfig.from_pretrained(FIXTURE / kind)
        assert type(config) is ThresholdConfig and config.pruning_method == "threshold"
        assert config.tensor_checksums, "the fixture records checksums, so loading verifies them"
    assert PruningConfig.from_pretrained(FIXTURE / "threshold").base_fingerprint is not None


@pytest.mark.parametrize("kind", ["threshold", "imp"])
def test_old_masks_load_with_checks_and_reproduce_masks_and_logits(kind, expected):
    srnet = _load(kind)
    masks = srnet.binary_masks()
    assert masks.keys() == expected[kind]["masks"].keys()
    for name, mask in expected[kind]["masks"].items():
        assert torch.equal(masks[name], mask), name
    with torch.no_grad():
        logits = srnet.merge_and_unload().eval()(input_ids=expected["input_ids"]).logits
    torch.testing.assert_close(logits, expected[kind]["logits"], atol=LOGITS_ATOL, rtol=0)


def test_old_threshold_masks_refuse_other_base_weights():
    base = AutoModelForSequenceClassification.from_pretrained(FIXTURE / "base").eval()
    with torch.no_grad():
        base.bert.encoder.layer[0].attention.self.query.weight.add_(1e-3)
    with pytest.raises(ValueError, match="fingerprint"):
        SRNetModel.from_pretrained(base, FIXTURE / "threshold")


def test_old_masks_saved_again_load_as_the_same_model(tmp_path, expected):
    _load("threshold").save_pretrained(tmp_path)
    config = PruningConfig.from_pretrained(tmp_path)
    assert config.pruning_method == "threshold"
    base = AutoModelForSequenceClassification.from_pretrained(FIXTURE / "base").eval()
    again = SRNetModel.from_pretrained(base, tmp_path)  # the trained classifier is saved again, though frozen
    for name, mask in expected["threshold"]["masks"].items():
        assert torch.equal(again.binary_masks()[name], mask), name
    with torch.no_grad():
        logits = again.merge_and_unload().eval()(input_ids=expected["input_ids"]).logits
    torch.testing.assert_close(logits, expected["threshold"]["logits"], atol=LOGITS_ATOL, rtol=0)
