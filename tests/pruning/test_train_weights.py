"""Mask training with weights that move (`ThresholdConfig.train_weights`, issue 48): the weights and the unit scores
train together, the weights at their own learning rate; the saved masks carry the trained weights, and the compact
export of the trained model gives the masked model's logits, saved and reloaded."""

from __future__ import annotations

import math

import pytest
import torch
from compact.helpers import logits, padded_inputs
from training.helpers import cpu_args, synthetic_nli, tiny_tokenizer

from hf_srnets import load_pretrained_model
from hf_srnets.arguments import parse_args, validate_args
from hf_srnets.errors import InputError
from hf_srnets.masking import SRNetModel
from hf_srnets.objectives import build_objective
from hf_srnets.pruning import ThresholdConfig
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer

from .test_granularity import bert4, pruned_units


def _trainer(tmp_path, model: SRNetModel, **kwargs) -> SRNetTrainer:
    tokenizer = tiny_tokenizer(tmp_path)
    return SRNetTrainer(
        model=model,
        args=cpu_args(tmp_path / "out", **kwargs),
        train_dataset=synthetic_nli(tokenizer, n=32),
        data_collator=SRNetDataCollator(tokenizer),
        processing_class=tokenizer,
    )


def _config(granularity: str = "hybrid", **kwargs) -> ThresholdConfig:
    return ThresholdConfig(
        sparsity=0.5, mask_granularity=granularity, threshold_update_interval=2, train_weights=True, **kwargs
    )


@pytest.mark.parametrize("granularity", ["ffn", "head", "hybrid"])
def test_weights_and_unit_scores_train_together(tmp_path, granularity):
    model = SRNetModel(bert4(), _config(granularity))
    before = {name: p.detach().clone() for name, p in model.base_model.named_parameters()}
    _trainer(tmp_path, model, max_steps=4, mask_learning_rate=0.05, learning_rate=1e-3).train()
    after = dict(model.base_model.named_parameters())
    moved = {name for name, p in after.items() if not torch.equal(p, before[name])}
    scores = {name for name in after if "mask_scores" in name}
    assert scores and scores <= moved  # the unit scores trained
    # every weight trained: the masked matrices, the embeddings, the LayerNorms and the classifier
    assert {name for name in after if name not in scores} - moved == set()
    for _, pruned, n in pruned_units(model):
        assert pruned == math.floor(0.5 * n)


def test_the_weights_get_their_own_learning_rate(tmp_path):
    model = SRNetModel(bert4(), _config(weight_learning_rate=3e-5))
    trainer = _trainer(tmp_path, model, mask_learning_rate=0.05, learning_rate=1e-3)
    optimizer = trainer.create_optimizer()
    scores = {id(p) for p in model.masked_layers_scores()}
    rates = {}
    for group in optimizer.param_groups:
        kind = "scores" if all(id(p) in scores for p in group["params"]) else "weights"
        rates.setdefault(kind, set()).add(group["lr"])
    assert rates == {"scores": {0.05}, "weights": {3e-5}}
    counted = sum(p.numel() for group in optimizer.param_groups for p in group["params"])
    assert counted == sum(p.numel() for p in model.parameters())  # every parameter is optimised, once


def test_frozen_weights_stay_the_default(tmp_path):
    config = ThresholdConfig(sparsity=0.5, mask_granularity="hybrid", threshold_update_interval=2)
    model = SRNetModel(bert4(), config)
    assert not config.trains_weights
    assert all(not p.requires_grad for name, p in model.base_model.named_parameters() if "mask_scores" not in name)


def test_the_compact_export_of_trained_weights_gives_the_masked_models_logits(tmp_path):
    """Trained, then: the masked model's logits = the saved masks (with their weights) applied to the *starting*
    weights = the compact model (units removed), saved and reloaded with `load_pretrained_model`."""
    model = SRNetModel(bert4(), _config())
    _trainer(tmp_path, model, max_steps=6, mask_learning_rate=0.05, learning_rate=1e-3).train()
    model.eval()
    batch = padded_inputs(seed=3, cuts={1: 4})
    masked = logits(model, batch)
    model.save_pretrained(tmp_path / "masks")
    reloaded = SRNetModel.from_pretrained(bert4(), tmp_path / "masks").eval()  # the starting weights underneath
    torch.testing.assert_close(logits(reloaded, batch), masked, rtol=0, atol=1e-6)
    # a re-save of the loaded masks still carries the trained weights (they no longer require grad)
    reloaded.save_pretrained(tmp_path / "masks_again")
    again = SRNetModel.from_pretrained(bert4(), tmp_path / "masks_again").eval()
    torch.testing.assert_close(logits(again, batch), masked, rtol=0, atol=1e-6)

    compact = model.merge_and_unload(compact=True)
    removed = model.compact_report
    assert removed and sum(p.numel() for p in compact.parameters()) < sum(p.numel() for p in bert4().parameters())
    compact.save_pretrained(tmp_path / "compact")
    loaded = load_pretrained_model(str(tmp_path / "compact"))
    torch.testing.assert_close(logits(loaded, batch), masked, rtol=0, atol=1e-5)


def test_masks_of_frozen_weights_save_no_weights_and_trained_ones_all(tmp_path):
    frozen = SRNetModel(bert4(), ThresholdConfig(sparsity=0.5, mask_granularity="hybrid"))
    assert frozen.trained_base_tensors() == {}
    trained = SRNetModel(bert4(), _config())
    saved = {name.removeprefix("trainable.") for name in trained.trained_base_tensors()}
    weights = {name for name, _ in trained.base_model.named_parameters() if "mask_scores" not in name}
    assert saved == weights


def test_dense_distillation_refuses_weights_that_train_without_a_teacher(tmp_path):
    model = SRNetModel(bert4(), _config())
    objective = build_objective("ce", step="dense_distil", step_options={"distil_alpha": 0.5})
    with pytest.raises(InputError, match=r"--train_weights.*--teacher_model"):
        objective.check_model(model)


def test_the_command_line_takes_the_options_and_refuses_a_rate_without_train_weights():
    base = ["--model_name_or_path", "m", "--output_dir", "o", "--pruning", "mask", "--mask_granularity", "ffn"]
    run = parse_args([*base, "--train_weights", "--weight_learning_rate", "3e-5"])
    validate_args(run)
    assert (run.pruning.train_weights, run.pruning.weights_learning_rate) == (True, 3e-5)
    with pytest.raises(ValueError, match=r"weight_learning_rate.*--train_weights"):
        validate_args(parse_args([*base, "--weight_learning_rate", "3e-5"]))
    with pytest.raises(ValueError, match="weight_learning_rate must be > 0"):
        parse_args([*base, "--train_weights", "--weight_learning_rate", "0"])


def test_the_card_says_the_weights_trained_and_the_masks_repo_holds_them():
    from hf_srnets.pruning.base import CardContext
    from hf_srnets.pruning.threshold.method import ThresholdPruning
    from hf_srnets.publish.card_facts import _mask_repo_holds

    model = SRNetModel(bert4(), _config(weight_learning_rate=3e-5))
    line = ThresholdPruning.search_description(model.srnet_config, CardContext())
    assert "weights trained together with the scores" in line
    settings = ThresholdPruning.card_settings(model.srnet_config, CardContext())
    assert (settings["train_weights"], settings["weight_learning_rate"]) == (True, 3e-5)
    assert "the weights trained under them (all of the model's weights)" in _mask_repo_holds(model, random_head=False)
    frozen = SRNetModel(bert4(), ThresholdConfig(sparsity=0.5, mask_granularity="hybrid"))
    assert "train_weights" not in ThresholdPruning.card_settings(frozen.srnet_config, CardContext())
    assert "every weight comes from the base model" in _mask_repo_holds(frozen, random_head=False)
