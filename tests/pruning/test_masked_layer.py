"""`MaskedLayer`: the base class every masked layer subclasses, its required members and its defaults.

The defaults stand for what `SRNetModel` did for a layer lacking an optional hook: no search state to save, saved
search state refused on load, nothing to restore from a checkpoint besides trainable tensors.
"""

from __future__ import annotations

import pytest
import torch
from conftest import tiny_model
from torch import nn

from hf_srnets.errors import InputError
from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import PRUNING_METHODS, L0Config, MaskedLayer, ThresholdConfig
from hf_srnets.pruning.base import SEARCH_PREFIX
from hf_srnets.pruning.units import UnitMaskedLinear


class KeepFirstRow(MaskedLayer):
    """The smallest complete layer: a fixed mask buffer, no scores to train."""

    def __init__(self, base_layer: nn.Linear) -> None:
        super().__init__(base_layer)
        self.mask_scores = nn.Parameter(torch.zeros_like(base_layer.weight), requires_grad=False)
        self.register_buffer("mask", torch.zeros_like(base_layer.weight, dtype=torch.bool))
        self.mask[0] = True

    def binary_mask(self) -> torch.Tensor:
        return self.mask.clone()

    def set_fixed_mask(self, mask: torch.Tensor) -> None:
        self.mask.copy_(mask)


def linear(rows: int = 2, cols: int = 3) -> nn.Linear:
    layer = nn.Linear(cols, rows)
    with torch.no_grad():
        layer.weight.copy_(torch.arange(1.0, rows * cols + 1).reshape(rows, cols))
    return layer


def test_every_registered_method_and_the_unit_layer_subclass_it():
    assert all(issubclass(method.layer_class, MaskedLayer) for method in PRUNING_METHODS.values())
    for method in PRUNING_METHODS.values():
        layer = method.layer_class(linear())
        assert isinstance(layer.mask_scores, nn.Parameter) and layer.mask_scores.shape == (2, 3), method.name
        assert layer.binary_mask().dtype == torch.bool and layer.binary_mask().shape == (2, 3), method.name
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(mask_granularity="neuron"))
    layers = srnet.masked_layers().values()
    assert layers and all(isinstance(layer, UnitMaskedLinear) and isinstance(layer, MaskedLayer) for layer in layers)


def test_a_layer_lacking_a_required_method_cannot_be_made():
    class NoFixedMask(MaskedLayer):
        def binary_mask(self) -> torch.Tensor:
            return torch.ones(2, 3, dtype=torch.bool)

    with pytest.raises(TypeError, match="set_fixed_mask"):
        NoFixedMask(linear())
    with pytest.raises(TypeError, match=r"wraps nn\.Linear"):
        KeepFirstRow(nn.Identity())


def test_the_defaults_of_a_layer_without_search_state():
    layer = KeepFirstRow(linear())
    assert layer.has_search_state is False and layer.search_state() == {} and layer.checkpoint_tensors == ()
    assert (layer.in_features, layer.out_features) == (3, 2) and layer.weight is layer.base_layer.weight
    assert torch.equal(layer.merged_weight(), torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]))  # m ⊙ W by hand
    with pytest.raises(InputError, match="KeepFirstRow keeps no search state"):
        layer.load_search_state({"log_alpha": torch.zeros(2, 3)})


def test_only_a_layer_with_search_state_says_so():
    assert [name for name, method in PRUNING_METHODS.items() if method.layer_class.has_search_state] == ["l0"]


def test_saved_search_state_is_refused_for_layers_without_it():
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig())
    tensors = {f"{SEARCH_PREFIX}{name}.log_alpha": torch.zeros(1) for name in srnet.masked_layers()}
    with pytest.raises(InputError, match="the mask files are inconsistent"):
        srnet._load_search_state(tensors)
    search = SRNetModel(tiny_model("bert"), L0Config())
    state = search.search_state_tensors()
    assert len(state) == 13 and all(key.endswith(".log_alpha") for key in state)  # 2 layers × 6 matrices + W_cls
    SRNetModel(tiny_model("bert"), L0Config(), initialize=False)._load_search_state(state)  # accepted


def test_checkpoint_tensors_are_each_layers_threshold_once():
    element = SRNetModel(tiny_model("bert"), ThresholdConfig()).trainable_state_dict()
    assert sum(key.endswith(".threshold") for key in element) == 13  # 2 layers × 6 matrices + W_cls
    neuron = SRNetModel(tiny_model("bert"), ThresholdConfig(mask_granularity="neuron")).trainable_state_dict()
    thresholds = sorted(key for key in neuron if key.endswith("threshold"))
    assert thresholds == [
        f"bert.encoder.layer.{i}.{owner}.unit_scores.threshold"
        for i in (0, 1)
        for owner in ("attention.self.query", "intermediate.dense")
    ]


def test_a_unit_layer_fixes_its_shared_units():
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(mask_granularity="block", block_size=16))
    query = srnet.masked_layers()["bert.encoder.layer.0.attention.self.query"]  # 32×32: 2×2 blocks of 16×16
    grid = torch.tensor([[True, False], [False, True]])
    mask = torch.kron(grid.int(), torch.ones(16, 16, dtype=torch.int)).bool()
    query.set_fixed_mask(mask)
    assert torch.equal(query.binary_mask(), mask)
    assert torch.equal(query.merged_weight()[:16, 16:], torch.zeros(16, 16))
    with pytest.raises(ValueError, match="not constant over its 16×16 units"):
        query.set_fixed_mask(torch.eye(32, dtype=torch.bool))
