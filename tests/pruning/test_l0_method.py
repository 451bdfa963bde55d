"""`--pruning l0` with SRNetTrainer and SRNetModel: λ_t, the penalty, the Fig. 1 metrics, save/load and resume."""

from __future__ import annotations

import json
import math

import pytest
import torch
from conftest import tiny_model
from training.helpers import cpu_args, synthetic_nli, tiny_tokenizer

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning.l0 import HardConcreteLinear, L0Config, expected_nonzero, extract_ticket, l0_penalty, lambda_at
from hf_srnets.pruning.mask_files import tensor_checksum
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer


def l0_model(**config) -> SRNetModel:
    return SRNetModel(tiny_model("bert"), L0Config(**config))


def randomise(srnet: SRNetModel, seed: int = 0) -> None:
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for layer in srnet.masked_layers().values():
            layer.log_alpha.copy_(torch.randn(layer.log_alpha.shape, generator=generator) * 3)


def trainer(tmp_path, srnet, **kwargs) -> SRNetTrainer:
    tokenizer = tiny_tokenizer(tmp_path)
    data = synthetic_nli(tokenizer, n=48)
    args = cpu_args(tmp_path / "out", mask_learning_rate=0.1, mask_weight_decay=1e-6, **kwargs)
    return SRNetTrainer(
        model=srnet, args=args, train_dataset=data, eval_dataset=data, data_collator=SRNetDataCollator(tokenizer)
    )


def test_config_defaults_and_errors():
    cfg = L0Config()
    assert (cfg.l0_lambda, cfg.l0_init_keep, cfg.sparsity_scope) == (0.5, 0.9, "global")
    assert cfg.l0_temperature == pytest.approx(2 / 3)
    for bad, match in [({"l0_lambda": -1}, "l0_lambda"), ({"l0_init_keep": 1.0}, "l0_init_keep")]:
        with pytest.raises(ValueError, match=match):
            L0Config(**bad)


def test_lambda_schedule():
    cfg = L0Config(l0_lambda=0.5, l0_lambda_start_fraction=0.1, l0_lambda_warmup_fraction=0.3)
    assert [lambda_at(t, 100, cfg) for t in (0, 10, 25, 40, 100)] == pytest.approx([0, 0, 0.25, 0.5, 0.5])
    constant = L0Config(l0_lambda=0.3, l0_lambda_start_fraction=0.0, l0_lambda_warmup_fraction=0.0)
    assert lambda_at(0, 100, constant) == lambda_at(77, 100, constant) == pytest.approx(0.3)


def test_regularization_is_lambda_t_times_the_mean_over_all_gates():
    srnet = l0_model(l0_lambda=0.5, l0_lambda_start_fraction=0.0, l0_lambda_warmup_fraction=0.0)
    randomise(srnet)
    layers = list(srnet.masked_layers().values())
    all_alphas = torch.cat([layer.log_alpha.detach().reshape(-1) for layer in layers])
    expected = 0.5 * expected_nonzero(all_alphas, 2 / 3).mean()
    penalty = srnet.method.regularization(srnet, step=3, max_steps=10)
    assert penalty.item() == pytest.approx(expected.item(), rel=1e-5) and penalty.requires_grad
    assert l0_penalty(layers, 2 / 3).item() == pytest.approx(expected.item() / 0.5, rel=1e-5)
    metrics = srnet.method.log_metrics(srnet)
    assert metrics["l0_expected_density"] + metrics["l0_expected_sparsity"] == pytest.approx(1.0)
    gates = torch.cat([(torch.sigmoid(a) * 1.2 - 0.1).clamp(0, 1) for a in [all_alphas]])
    assert metrics["l0_gates_zero"] == pytest.approx(float((gates == 0).float().mean()))
    assert metrics["l0_gates_one"] == pytest.approx(float((gates == 1).float().mean()))
    assert 0 < metrics["l0_gates_zero"] < 1 and 0 < metrics["l0_gates_one"] < 1


def test_a_short_run_moves_log_alpha_not_the_weights_and_logs_the_penalty(tmp_path):
    srnet = l0_model(sparsity=0.3)
    weights = {n: p.detach().clone() for n, p in srnet.named_parameters() if "log_alpha" not in n}
    before = {n: layer.log_alpha.detach().clone() for n, layer in srnet.masked_layers().items()}
    t = trainer(tmp_path, srnet, max_steps=8, logging_steps=4)
    groups = t.create_optimizer().param_groups
    assert groups[0]["lr"] == 0.1 and groups[0]["weight_decay"] == 1e-6
    assert {id(p) for p in groups[0]["params"]} == {id(p) for p in srnet.score_parameters()}
    t.train()
    for name, layer in srnet.masked_layers().items():
        assert not torch.equal(layer.log_alpha, before[name]), name
    for name, param in srnet.named_parameters():
        if "log_alpha" not in name and not name.startswith("base_model.classifier"):  # the fresh head trains
            assert torch.equal(param, weights[name]), name
    logs = [entry for entry in t.state.log_history if "loss" in entry]
    assert logs and all("loss_penalty" in e and "l0_gates_zero" in e and "l0_gates_one" in e for e in logs)
    assert logs[0]["l0_lambda"] < logs[-1]["l0_lambda"] == pytest.approx(0.5)  # the warm-up
    assert "l0_expected_sparsity" in logs[-1] and logs[-1]["loss_penalty"] > 0


def test_save_load_round_trip_search_model_ticket_and_checksums(tmp_path):
    srnet = l0_model(sparsity=0.4).eval()
    randomise(srnet, seed=3)
    inputs = {"input_ids": torch.randint(5, 90, (3, 9)), "attention_mask": torch.ones(3, 9, dtype=torch.long)}
    logits = srnet(**inputs).logits
    srnet.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "srnet_config.json").read_text())
    assert config["pruning_method"] == "l0" and config["sparsity_scope"] == "global"
    from safetensors.torch import load_file

    tensors = load_file(tmp_path / "srnet_masks.safetensors")
    assert set(config["tensor_checksums"]) == {*tensors, "srnet_config.json"}  # every tensor, and the config itself
    assert all(tensor_checksum(tensors[k]) == config["tensor_checksums"][k] for k in tensors)
    log_alphas = {n: layer.log_alpha.detach() for n, layer in srnet.masked_layers().items()}
    assert all(torch.equal(tensors[f"search.{n}.log_alpha"], a) for n, a in log_alphas.items())

    loaded = SRNetModel.from_pretrained(tiny_model("bert"), tmp_path).eval()
    assert isinstance(loaded.method.config, L0Config)
    assert torch.allclose(loaded(**inputs).logits, logits, atol=1e-6)
    assert all(not layer.fixed for layer in loaded.masked_layers().values())
    ticket = extract_ticket(log_alphas, 0.4, "global")
    assert {n: m for n, m in loaded.method.saved_masks(loaded).items()}.keys() == ticket.keys()
    merged = SRNetModel.from_pretrained(tiny_model("bert"), tmp_path).merge_and_unload().eval()
    assert torch.allclose(merged(**inputs).logits, logits, atol=1e-5)


def test_train_weights_with_fixed_masks_uses_the_saved_ticket(tmp_path):
    srnet = l0_model(sparsity=0.6)
    randomise(srnet, seed=4)
    srnet.save_pretrained(tmp_path)
    ticket = extract_ticket({n: layer.log_alpha for n, layer in srnet.masked_layers().items()}, 0.6)
    loaded = SRNetModel.from_pretrained(tiny_model("bert"), tmp_path, check_fingerprint=False)
    loaded.train_weights_with_fixed_masks()
    zeros = sum(int((~m).sum()) for m in ticket.values())
    total = sum(m.numel() for m in ticket.values())
    assert zeros == math.floor(0.6 * total) and loaded.sparsity_report()["num_pruned"] == zeros
    for name, layer in loaded.masked_layers().items():
        assert layer.fixed and torch.equal(layer.binary_mask(), ticket[name]), name
        assert torch.all(layer.base_layer.weight[~ticket[name]] == 0) and layer.base_layer.weight.requires_grad
        assert not layer.log_alpha.requires_grad
    loaded.save_pretrained(tmp_path / "retrained")  # a fixed ticket: packed masks and weights, no log α
    from safetensors.torch import load_file

    assert not any(k.startswith("search.") for k in load_file(tmp_path / "retrained" / "srnet_masks.safetensors"))


def test_resume_keeps_log_alpha_exactly(tmp_path):
    srnet = l0_model()
    randomise(srnet, seed=5)
    srnet.save_training_state(tmp_path)
    other = l0_model()
    other.load_training_state(tmp_path)
    for (name, a), b in zip(srnet.masked_layers().items(), other.masked_layers().values()):
        assert isinstance(a, HardConcreteLinear) and torch.equal(a.log_alpha, b.log_alpha), name


def test_checkpoint_resume_through_the_trainer(tmp_path):
    first = l0_model()
    trainer(tmp_path, first, max_steps=4, save_strategy="steps", save_steps=2).train()
    checkpoint = tmp_path / "out" / "checkpoint-2"
    resumed = l0_model()
    t = trainer(tmp_path, resumed, max_steps=2)
    t._load_from_checkpoint(str(checkpoint))
    reference = l0_model()
    reference.load_training_state(checkpoint)
    for a, b in zip(resumed.masked_layers().values(), reference.masked_layers().values()):
        assert torch.equal(a.log_alpha, b.log_alpha)
    assert not all(
        torch.equal(a.log_alpha, b.log_alpha)
        for a, b in zip(resumed.masked_layers().values(), l0_model().masked_layers().values())
    )


def test_the_saved_ticket_is_ranked_once_per_state_of_log_alpha():
    srnet = l0_model(sparsity=0.3)
    randomise(srnet)
    first = srnet.method.saved_masks(srnet)
    assert srnet.method.saved_masks(srnet) is first  # nothing changed: the same ranking
    layer = next(iter(srnet.masked_layers().values()))
    with torch.no_grad():
        layer.log_alpha.neg_()  # an in-place change, as an optimiser step makes
    second = srnet.method.saved_masks(srnet)
    log_alphas = {name: layer.log_alpha.detach() for name, layer in srnet.masked_layers().items()}
    expected = extract_ticket(log_alphas, 0.3, "global")
    assert all(torch.equal(second[name], expected[name]) for name in expected)
    assert any(not torch.equal(second[name], first[name]) for name in expected)


def test_the_ticket_saved_at_the_end_is_ranked_from_the_last_log_alpha(tmp_path):
    """The ticket was cached per `log_alpha._version`, which the optimiser's steps leave at 0: a ticket ranked at a
    mid-run checkpoint was saved again at the end (found by issue 51's contract test). Now: the final log α's."""
    from hf_srnets.pruning.l0.extract import extract_ticket

    srnet = l0_model(sparsity=0.5)
    trainer(tmp_path, srnet, max_steps=8, save_strategy="steps", save_steps=4).train()
    log_alphas = {name: layer.log_alpha.detach().clone() for name, layer in srnet.masked_layers().items()}
    expected = extract_ticket(log_alphas, 0.5, srnet.srnet_config.sparsity_scope)
    saved = srnet.method.saved_masks(srnet)
    assert saved.keys() == expected.keys() and all(torch.equal(saved[k], expected[k]) for k in saved)
