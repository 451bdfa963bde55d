"""Each debiasing loss against its formula (Win-win §3.3 and appendix A.2)."""

import pytest
import torch
import torch.nn.functional as F

from hf_srnets.losses import LOSSES, DebiasingLoss, get_loss, register_loss, scaled_teacher


@pytest.fixture
def batch():
    torch.manual_seed(0)
    logits = torch.randn(8, 3, requires_grad=True)
    labels = torch.randint(0, 3, (8,))
    bias = torch.softmax(torch.randn(8, 3) * 2, -1)
    teacher = torch.softmax(torch.randn(8, 3) * 2, -1)
    return logits, labels, bias, teacher


def test_registry_has_the_four_losses():
    assert {"ce", "poe", "reweight", "confreg"} <= set(LOSSES)
    with pytest.raises(ValueError, match="Unknown loss"):
        get_loss("focal-typo")


def test_poe_with_uniform_bias_equals_ce(batch):
    logits, labels, _, _ = batch
    uniform = torch.full((8, 3), 1 / 3)
    loss, _ = get_loss("poe")(logits, labels, bias_probs=uniform)
    assert torch.allclose(loss, F.cross_entropy(logits, labels), atol=1e-6)


def test_poe_formula(batch):
    logits, labels, bias, _ = batch
    loss, parts = get_loss("poe")(logits, labels, bias_probs=bias)
    p_m = torch.softmax(logits, -1)
    combined = torch.softmax(torch.log(p_m) + torch.log(bias), -1)
    expected = -torch.log(combined[torch.arange(8), labels]).mean()
    assert torch.allclose(loss, expected, atol=1e-6)
    assert set(parts) == {"poe", "ce"}


def test_poe_clips_zero_bias_probabilities(batch):
    logits, labels, _, _ = batch
    bias = F.one_hot((labels + 1) % 3, 3).float()  # zero on every gold class
    loss, _ = get_loss("poe")(logits, labels, bias_probs=bias)
    assert torch.isfinite(loss)
    loss.backward()
    assert torch.isfinite(logits.grad).all()


def test_reweight_with_zero_beta_equals_ce(batch):
    logits, labels, _, _ = batch
    wrong = F.one_hot((labels + 1) % 3, 3).float()  # β = p_b of the gold class = 0
    loss, _ = get_loss("reweight")(logits, labels, bias_probs=wrong)
    assert torch.allclose(loss, F.cross_entropy(logits, labels), atol=1e-6)


def test_reweight_formula(batch):
    logits, labels, bias, _ = batch
    loss, _ = get_loss("reweight")(logits, labels, bias_probs=bias)
    beta = bias[torch.arange(8), labels]
    expected = (-(1 - beta) * torch.log_softmax(logits, -1)[torch.arange(8), labels]).mean()
    assert torch.allclose(loss, expected, atol=1e-6)


def test_confreg_with_zero_beta_is_distillation(batch):
    logits, labels, _, teacher = batch
    wrong = F.one_hot((labels + 1) % 3, 3).float()
    loss, _ = get_loss("confreg")(logits, labels, bias_probs=wrong, teacher_probs=teacher)
    expected = -(teacher * torch.log_softmax(logits, -1)).sum(-1).mean()
    assert torch.allclose(loss, expected, atol=1e-6)


def test_confreg_scaling_matches_eq4(batch):
    _, labels, bias, teacher = batch
    beta = bias[torch.arange(8), labels]
    powered = teacher ** (1 - beta)[:, None]
    assert torch.allclose(scaled_teacher(teacher, beta), powered / powered.sum(-1, keepdim=True), atol=1e-6)
    assert torch.allclose(scaled_teacher(teacher, torch.ones(8)), torch.full((8, 3), 1 / 3), atol=1e-6)


def test_missing_or_misshapen_columns_are_clear_errors(batch):
    logits, labels, bias, _ = batch
    with pytest.raises(ValueError, match="needs the 'bias_probs' column"):
        get_loss("poe")(logits, labels)
    with pytest.raises(ValueError, match="teacher_probs"):
        get_loss("confreg")(logits, labels, bias_probs=bias)
    with pytest.raises(ValueError, match="another number of labels"):
        get_loss("poe")(logits, labels, bias_probs=torch.full((8, 2), 0.5))


def test_register_a_new_loss():
    @register_loss
    class Doubled(DebiasingLoss):
        name = "test-doubled-ce"

        def forward(self, logits, labels):
            loss = 2 * F.cross_entropy(logits, labels)
            return loss, {}

    try:
        assert isinstance(get_loss("test-doubled-ce"), Doubled)
    finally:
        LOSSES.pop("test-doubled-ce")
