"""`LossObjective` runs each debiasing loss exactly as calling it on the model's logits; `build_objective`."""

import pytest
import torch
from conftest import tiny_model

from hf_srnets.losses import LOSSES, ProductOfExpertsLoss, get_loss
from hf_srnets.objectives import LossObjective, Objective, build_objective

COLUMNS = ("labels", "bias_probs", "teacher_probs")


def _batch(n: int = 8, seed: int = 0) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(5, 100, (n, 12), generator=gen)
    return {
        "input_ids": input_ids,
        "attention_mask": torch.ones_like(input_ids),
        "labels": torch.arange(n) % 3,
        "bias_probs": torch.softmax(2 * torch.randn(n, 3, generator=gen), -1),
        "teacher_probs": torch.softmax(2 * torch.randn(n, 3, generator=gen), -1),
    }


@pytest.mark.parametrize("name", ["ce", "poe", "reweight", "confreg"])
def test_wrapped_loss_gives_the_same_loss_outputs_and_gradients(name):
    direct_model, wrapped_model = tiny_model("bert"), tiny_model("bert")
    batch = _batch()
    loss_fn = get_loss(name)
    logits = direct_model(**{k: v for k, v in batch.items() if k not in COLUMNS}).logits
    expected, expected_parts = loss_fn(logits, batch["labels"], **{c: batch[c] for c in loss_fn.requires})
    expected.backward()

    objective = LossObjective(loss_fn)
    loss, outputs, parts = objective.compute_loss(wrapped_model, batch, training=True)
    loss.backward()

    assert torch.equal(loss, expected)
    assert torch.equal(outputs.logits, logits)
    assert parts.keys() == expected_parts.keys() and all(torch.equal(parts[k], expected_parts[k]) for k in parts)
    for (key, direct), (_, wrapped) in zip(direct_model.named_parameters(), wrapped_model.named_parameters()):
        assert torch.equal(direct.grad, wrapped.grad), key
    assert set(batch) == {"input_ids", "attention_mask", *COLUMNS}  # the caller's batch is left whole


def test_evaluation_without_bias_column_reports_cross_entropy():
    model = tiny_model("bert")
    batch = {k: v for k, v in _batch().items() if k not in ("bias_probs", "teacher_probs")}
    objective = build_objective("poe")
    loss, outputs, parts = objective.compute_loss(model, batch, training=False)
    assert torch.equal(loss, torch.nn.functional.cross_entropy(outputs.logits.float(), batch["labels"]))
    assert parts == {}
    with pytest.raises(ValueError, match="needs the 'bias_probs' column"):
        objective.compute_loss(model, batch, training=True)
    full = _batch()
    loss, _, parts = objective.compute_loss(model, full, training=False)  # with the column: the loss itself
    assert torch.equal(loss, get_loss("poe")(outputs.logits, full["labels"], bias_probs=full["bias_probs"])[0])
    assert set(parts) == {"poe", "ce"}


def test_missing_labels_are_a_clear_error():
    batch = {k: v for k, v in _batch().items() if k != "labels"}
    with pytest.raises(ValueError, match="needs a 'label' column"):
        build_objective("ce").compute_loss(tiny_model("bert"), batch, training=True)


@pytest.mark.parametrize(
    ("name", "requires", "citations"),
    [
        ("ce", (), ("winwin",)),
        ("poe", ("bias_probs",), ("winwin", "clark")),
        ("reweight", ("bias_probs",), ("winwin", "clark")),
        ("confreg", ("bias_probs", "teacher_probs"), ("winwin", "utama")),
    ],
)
def test_each_loss_objective_carries_columns_citations_and_config(name, requires, citations):
    objective = build_objective(name)
    assert isinstance(objective, LossObjective) and isinstance(objective, Objective)
    assert objective.loss.name == name and LOSSES[name].requires == requires
    assert objective.requires == requires and objective.citations == citations
    assert objective.get_config_dict() == {"loss": name, "requires": list(requires)}
    assert objective.training_step(None, None, {}, None) is None  # the Trainer's own step


@pytest.mark.parametrize(
    ("name", "where"),
    [("ce", "§3.3"), ("poe", "§3.3"), ("reweight", "appendix A.2, Eq. 3"), ("confreg", "Eq. 4")],
)
def test_each_loss_docstring_states_formula_equation_and_source(name, where):
    doc = LOSSES[name].__doc__
    assert f"L_{'std' if name == 'ce' else name} = " in doc
    assert where in doc and "Liu et al. 2022" in doc


def test_build_objective_rejects_unknown_names_and_stray_options():
    with pytest.raises(ValueError, match="Unknown loss"):
        build_objective("focal-typo")
    with pytest.raises(ValueError, match="Unknown step objective 'freelb-typo'"):
        build_objective("poe", step="freelb-typo")
    with pytest.raises(ValueError, match="without a step objective"):
        build_objective("poe", step_options={"steps": 3})
    assert isinstance(build_objective("poe").loss, ProductOfExpertsLoss)
