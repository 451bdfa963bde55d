"""--mask_granularity nm: exactly N of every M consecutive input weights kept, at init, in training and after a
save; the 2:4 export refused where it cannot run (always on CPU)."""

from __future__ import annotations

import pytest
import torch
from training.helpers import cpu_args, synthetic_nli, tiny_tokenizer

from hf_srnets.compact import to_semi_structured
from hf_srnets.errors import InputError
from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import MagnitudeConfig, ThresholdConfig
from hf_srnets.pruning.masked_linear import MaskedLinear
from hf_srnets.pruning.nm import is_nm, nm_mask
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer
from pruning.test_granularity import bert4, inputs


def _nm(**kwargs) -> SRNetModel:
    return SRNetModel(bert4(), ThresholdConfig(mask_granularity="nm", sparsity=0.5, **kwargs))


def test_top_n_of_every_m_by_hand():
    scores = torch.tensor([[0.1, 0.4, 0.3, 0.2, 5.0, 5.0, 5.0, 5.0], [1.0, -1.0, 2.0, 0.0, 0.0, 3.0, 1.0, 2.0]])
    expected = torch.tensor([[0, 1, 1, 0, 0, 0, 1, 1], [1, 0, 1, 0, 0, 1, 0, 1]], dtype=torch.bool)
    assert torch.equal(nm_mask(scores, 2, 4), expected)  # ties: the earlier position is pruned first
    assert torch.equal(nm_mask(scores, 1, 4), torch.tensor([[0, 1, 0, 0, 0, 0, 0, 1], [0, 0, 1, 0, 0, 1, 0, 0]]) == 1)
    assert is_nm(expected, 2, 4) and not is_nm(torch.ones(2, 8), 2, 4)


@pytest.mark.parametrize("init", ["hard", "soft"])
def test_init_keeps_the_two_largest_weights_of_every_four(init):
    model = _nm(mask_init=init)
    masks = model.binary_masks()
    assert "classifier" in masks  # element-level scores: the classifier is masked too
    for name, mask in masks.items():
        assert is_nm(mask, 2, 4), name
    weight = model.masked_layers()["bert.encoder.layer.0.output.dense"].base_layer.weight.abs()
    mask = masks["bert.encoder.layer.0.output.dense"]
    for row in range(0, weight.shape[0], 7):
        for start in range(0, weight.shape[1], 4):
            group = weight[row, start : start + 4].tolist()
            top = sorted(range(4), key=lambda i: group[i])[2:]  # the two largest |W| (no ties in random weights)
            assert [bool(mask[row, start + i]) for i in range(4)] == [i in top for i in range(4)]


def test_training_keeps_the_pattern_and_a_save_round_trip_keeps_the_masks(tmp_path):
    model = _nm(mask_init="soft", threshold_update_interval=1)
    before = model.binary_masks()
    tokenizer = tiny_tokenizer(tmp_path)
    SRNetTrainer(
        model=model,
        args=cpu_args(tmp_path / "out", max_steps=4, mask_learning_rate=0.5),
        train_dataset=synthetic_nli(tokenizer, n=32),
        data_collator=SRNetDataCollator(tokenizer),
        processing_class=tokenizer,
    ).train()
    after = model.binary_masks()
    assert all(is_nm(mask, 2, 4) for mask in after.values())
    assert any(not torch.equal(before[n], after[n]) for n in after)  # the scores moved the choice within groups
    assert model.sparsity_report()["sparsity"] == pytest.approx(0.5)
    model.save_pretrained(tmp_path / "masks")
    loaded = SRNetModel.from_pretrained(bert4(), tmp_path / "masks")
    assert all(torch.equal(loaded.binary_masks()[n], m) for n, m in after.items())
    with torch.no_grad():
        torch.testing.assert_close(loaded.eval()(**inputs()).logits, model.eval()(**inputs()).logits, rtol=0, atol=0)
        merged = loaded.merge_and_unload()
    assert is_nm(merged.bert.encoder.layer[1].intermediate.dense.weight, 2, 4)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: ThresholdConfig(mask_granularity="nm", sparsity=0.7), r"a sparsity of 0.5, .* pass --sparsity 0.5"),
        (lambda: ThresholdConfig(mask_granularity="nm", sparsity=0.25, nm_n=3), None),
        (lambda: ThresholdConfig(mask_granularity="nm", nm_n=4, nm_m=4), "1 <= N < M"),
        (lambda: ThresholdConfig(mask_granularity="nm", sparsity=0.5, initial_sparsity=0.2), "drop --initial_sparsity"),
        (lambda: ThresholdConfig(mask_granularity="nm", sparsity_scope="global"), "drop --sparsity_scope"),
        (lambda: MagnitudeConfig(mask_granularity="nm"), "is not supported by --pruning magnitude"),
    ],
)
def test_bad_patterns_are_refused_with_the_fix(make, message):
    if message is None:
        assert make().unit_settings() == {"mask_granularity": "nm", "nm_n": 3, "nm_m": 4}
        return
    with pytest.raises(InputError, match=message):
        make()


def test_a_matrix_whose_inputs_do_not_fill_groups_is_refused():
    with pytest.raises(InputError, match=r"groups 8 consecutive input weights, but .* has 33 inputs"):
        MaskedLinear(torch.nn.Linear(33, 4), nm=(2, 8))


def test_semi_structured_export_is_refused_on_cpu_with_the_reason():
    """The refusal follows the model's device, so it holds on a GPU machine too (the model here is on the CPU)."""
    model = _nm(mask_init="soft").merge_and_unload()
    with pytest.raises(InputError) as err:
        to_semi_structured(model)
    assert str(err.value) == (
        "to_sparse_semi_structured cannot run here: 2:4 sparse kernels run on NVIDIA GPUs only and the model is on "
        "cpu: keep the merged dense checkpoint (or a compact structured one) on this device."
    )
    assert "\n" not in str(err.value)
