"""Structured mask granularities under SRNetTrainer (every loss without extra columns, and PoE) and the CLI."""

from __future__ import annotations

import math

import pytest
import torch
from training.helpers import cpu_args, synthetic_nli, tiny_tokenizer
from transformers import TrainerCallback

from hf_srnets.arguments import parse_args, validate_args
from hf_srnets.losses import LOSSES
from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import L0Config, MagnitudeConfig, ThresholdConfig
from hf_srnets.pruning.units import unit_layer_groups
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer

from .test_granularity import GRANULARITIES, bert4, pruned_units

LOSSES_TESTED = sorted({name for name, loss in LOSSES.items() if not loss.requires} | {"poe"})


def _train(tmp_path, model: SRNetModel, **kwargs) -> SRNetTrainer:
    tokenizer = tiny_tokenizer(tmp_path)
    trainer = SRNetTrainer(
        model=model,
        args=cpu_args(tmp_path / "out", **kwargs),
        train_dataset=synthetic_nli(tokenizer, n=32),
        data_collator=SRNetDataCollator(tokenizer),
        processing_class=tokenizer,
    )
    trainer.train()
    return trainer


@pytest.mark.parametrize("loss", LOSSES_TESTED)
@pytest.mark.parametrize("granularity", GRANULARITIES)
def test_mask_training_keeps_exact_unit_counts_and_moves_scores(tmp_path, granularity, loss):
    config = ThresholdConfig(sparsity=0.5, mask_granularity=granularity, block_size=8, threshold_update_interval=2)
    model = SRNetModel(bert4(), config)
    weights = {n: layer.base_layer.weight.clone() for n, layer in model.masked_layers().items()}
    scores = [p.detach().clone() for p in model.masked_layers_scores()]
    _train(tmp_path, model, loss=loss, max_steps=4, mask_learning_rate=0.05)
    for _, pruned, n in pruned_units(model):
        assert pruned == math.floor(0.5 * n)
    after = model.masked_layers_scores()
    assert all(not torch.equal(a, b) for a, b in zip(scores, after))  # every group's scores trained
    assert all(torch.equal(layer.base_layer.weight, weights[n]) for n, layer in model.masked_layers().items())


def test_imp_on_neurons_reaches_the_target_unit_counts_in_a_run(tmp_path):
    config = MagnitudeConfig(sparsity=0.5, imp_prune_ratio=0.25, imp_interval=0.25, mask_granularity="neuron")
    model = SRNetModel(bert4(), config)
    trainer = _train(tmp_path, model, max_steps=8)
    for _, pruned, n in pruned_units(model):
        assert pruned == math.floor(0.5 * n)
    assert trainer.state.global_step == 4  # rounds at steps 0 and 2, then Δt = 2 steps at the target (imp)
    for _, members in unit_layer_groups(model.masked_layers().items()):
        for name, layer in members:
            assert not layer.base_layer.weight[~layer.binary_mask()].any(), name


def test_cli_parses_the_granularity_flags():
    base = ["--model_name_or_path", "m", "--output_dir", "o", "--pruning", "mask"]
    run = parse_args([*base, "--mask_granularity", "neuron"])  # --block_size: only with block (test_unused_options)
    validate_args(run)
    assert isinstance(run.pruning, ThresholdConfig)
    assert (run.pruning.mask_granularity, run.pruning.block_size) == ("neuron", 32)
    imp = parse_args(
        ["--model_name_or_path", "m", "--output_dir", "o", "--pruning", "imp", "--mask-granularity", "head"]
    )
    assert imp.pruning.mask_granularity == "head"
    l0 = parse_args(["--model_name_or_path", "m", "--output_dir", "o", "--pruning", "l0", "--mask_granularity", "ffn"])
    assert isinstance(l0.pruning, L0Config) and l0.pruning.mask_granularity == "ffn"
    with pytest.raises(ValueError, match="--mask_granularity block is not supported by --pruning random"):
        parse_args(
            ["--model_name_or_path", "m", "--output_dir", "o", "--pruning", "random", "--mask_granularity", "block"]
        )
    with pytest.raises(SystemExit):
        parse_args([*base, "--mask_granularity", "rows"])


class _UnitCounts(TrainerCallback):
    """Records, after every step (after the threshold controller's update), the pruned units of each kind."""

    def __init__(self, model: SRNetModel) -> None:
        self.model, self.by_step = model, {}

    def on_step_end(self, args, state, control, **kwargs):
        counts: dict[str, int] = {}
        for kind, pruned, _ in pruned_units(self.model):
            counts[kind] = counts.get(kind, 0) + pruned
        self.by_step[state.global_step] = counts
        return control


def test_cubic_schedule_ramps_ffn_units_and_heads_over_a_global_budget(tmp_path):
    # Zhu & Gupta's s_t = s_f + (s_i − s_f)(1 − t/t_1)³ with s_i = 0, s_f = 0.5, t_1 = 0.5 · 8 steps = 4:
    # s_1 = 0.5 − 0.5·0.75³ = 0.2890625, s_2 = 0.5 − 0.5·0.5³ = 0.4375, s_3 = 0.5 − 0.5·0.25³ = 0.4921875, then 0.5.
    # Global scope pools each kind over both layers: 128 FFN units, 8 heads; ⌊s_t·n⌋ pruned of each pool.
    config = ThresholdConfig(
        sparsity=0.5,
        initial_sparsity=0.0,
        sparsity_schedule="cubic",
        schedule_end=0.5,
        sparsity_scope="global",
        mask_granularity="neuron",
        mask_init="soft",
        threshold_update_interval=1,
    )
    model = SRNetModel(bert4(), config)
    assert {kind: pruned for kind, pruned, _ in pruned_units(model)} == {"ffn": 0, "head": 0}  # starts at s_i
    tokenizer = tiny_tokenizer(tmp_path)
    trainer = SRNetTrainer(
        model=model,
        args=cpu_args(tmp_path / "out", max_steps=8, mask_learning_rate=0.05),
        train_dataset=synthetic_nli(tokenizer, n=32),
        data_collator=SRNetDataCollator(tokenizer),
        processing_class=tokenizer,
    )
    counts = _UnitCounts(model)
    trainer.add_callback(counts)
    trainer.train()
    expected = {1: (37, 2), 2: (56, 3), 3: (63, 3), 4: (64, 4), 8: (64, 4)}
    assert {step: (counts.by_step[step]["ffn"], counts.by_step[step]["head"]) for step in expected} == expected
    assert model.method.selection_start_step(8) == 4  # the best checkpoint is chosen only at the target
