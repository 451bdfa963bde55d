"""`--step_objective freelb` composes with every registered pruning method and every loss, and runs through the CLI."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import torch
from conftest import mnli_run_args, tiny_model
from torch import nn
from training.helpers import cpu_args, synthetic_nli, tiny_tokenizer

from hf_srnets.commands.glue_sparse import main
from hf_srnets.losses import LOSSES
from hf_srnets.masking import SRNetModel
from hf_srnets.objectives import FreeLB
from hf_srnets.pruning import PRUNING_METHODS, ThresholdConfig
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer

# at collection time: l0 and random too once registered; not the one-shot methods, which set their masks once
# before a single step and put the starting weights back (tests/pruning/test_wanda.py): nothing trains there
ONE_SHOT = {"wanda", "magnitude-oneshot"}
METHODS = ["none", *sorted(set(PRUNING_METHODS) - ONE_SHOT)]
FREELB = {"step_objective": "freelb", "step_objective_options": {"adv_steps": 2, "adv_lr": 0.1, "adv_init_mag": 0.05}}


def _data(tmp_path):
    tokenizer = tiny_tokenizer(tmp_path)
    data = synthetic_nli(tokenizer, n=32)
    teacher = [[0.6 if j == i % 3 else 0.2 for j in range(3)] for i in range(len(data))]
    difficulty = [0.5 if i % 2 else 1.0 for i in range(len(data))]  # RMC's d_i (--loss rmc)
    return tokenizer, data.add_column("teacher_probs", teacher).add_column("difficulty", difficulty)


def _model(method: str, tmp_path, args) -> nn.Module:
    if method == "none":
        return tiny_model("bert")
    config = PRUNING_METHODS[method].config_class(sparsity=0.5)
    if hasattr(config, "imp_prune_ratio"):  # IMP reaches s in one round: the run has 2 steps
        config.imp_prune_ratio = 0.5
    if hasattr(config, "random_like"):  # the Rand baseline copies a saved ticket's per-matrix sparsity
        ticket = tmp_path / "ticket"
        SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5)).save_pretrained(ticket)
        config.random_like = str(ticket)
    return SRNetModel(tiny_model("bert"), PRUNING_METHODS[method].prepare_config(config, args, fresh_head=True))


@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("method", METHODS)
def test_freelb_trains_with_every_method_and_loss(tmp_path, method, loss):
    tokenizer, data = _data(tmp_path)
    args = cpu_args(tmp_path / "out", loss=loss, max_steps=2, logging_steps=1, mask_learning_rate=0.05, **FREELB)
    model = _model(method, tmp_path, args)
    trainable = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
    scores = [p.detach().clone() for p in model.score_parameters()] if method != "none" else []
    trainer = SRNetTrainer(model=model, args=args, train_dataset=data, data_collator=SRNetDataCollator(tokenizer))
    assert isinstance(trainer.objective, FreeLB) and trainer.objective.inner.loss.name == loss
    trainer.train()

    logs = [entry for entry in trainer.state.log_history if "loss" in entry]  # IMP stops once at its target
    assert len(logs) == trainer.state.global_step >= 1
    assert all(torch.isfinite(torch.tensor(entry["loss"])) for entry in logs)
    assert all(f"loss_{loss}" in entry for entry in logs)
    moved = [n for n, p in model.named_parameters() if n in trainable and not torch.equal(p, trainable[n])]
    assert moved, "no trainable parameter moved"
    if method != "none" and PRUNING_METHODS[method].trains_scores:  # the mask scores (l0's log α) are searched
        after = model.score_parameters()
        assert scores and all(not torch.equal(a, b) for a, b in zip(after, scores))


def test_freelb_through_the_cli_reaches_the_card(pretrained, data_dir, tmp_path):
    out = tmp_path / "run"
    args = mnli_run_args(pretrained, data_dir, out, train=32, eval=16, ood=30, batch=16)
    flags = ["--step_objective", "freelb", "--adv_steps", "2", "--adv_lr", "0.1", "--adv_max_norm", "1.0"]
    main([*args, "--pruning", "mask", "--sparsity", "0.3", "--mask_learning_rate", "0.05", "--max_steps", "2", *flags])

    results = json.loads((out / "all_results.json").read_text())
    assert results["sparsity"] == pytest.approx(0.3, abs=1e-3)
    card = (out / "README.md").read_text()
    assert "trained with the **ce** loss under **freelb** adversarial training and **mask** pruning" in card
    for row in ("| step_objective | freelb |", "| adv_steps | 2 |", "| adv_lr | 0.1 |", "| adv_max_norm | 1.0 |"):
        assert row in card, row
    assert "@inproceedings{zhu2020freelb," in card
    with pytest.raises(SystemExit):  # argparse refuses the flag's value before anything runs
        main([*args, "--step_objective", "freelb", "--adv_steps", "two"])
    with pytest.raises(ValueError, match="--adv_norm_type must be one of"):
        main([*args, "--step_objective", "freelb", "--adv_norm_type", "l1"])


def test_a_freelb_step_costs_k_forward_and_backward_passes(tmp_path):
    """FreeLB with K = 2 runs two forward and two backward passes per training step where the plain step runs one
    (counted with hooks, not timed: the wall clock is bench/'s business)."""
    tokenizer, data = _data(tmp_path)
    passes = {}
    for name, extra in (("plain", {}), ("freelb", FREELB)):
        trainer = SRNetTrainer(
            model=tiny_model("bert"),
            args=cpu_args(tmp_path / name, **extra),
            train_dataset=data,
            data_collator=SRNetDataCollator(tokenizer),
        )
        trainer.current_gradient_accumulation_steps = 1
        batch = next(iter(trainer.get_train_dataloader()))
        passes[name] = counts = Counter()
        classifier = trainer.model.classifier
        classifier.register_forward_hook(lambda *_, c=counts: c.update(["forward"]))
        classifier.register_full_backward_hook(lambda *_, c=counts: c.update(["backward"]))
        for _ in range(3):
            trainer.training_step(trainer.model, batch)
    assert passes["plain"] == {"forward": 3, "backward": 3}
    assert passes["freelb"] == {"forward": 6, "backward": 6}
