"""One-shot ticket extraction (Robust Tickets §3.3): exact sparsities, ticket dirs, retraining with --mask_from."""

from __future__ import annotations

import json
import math

import pytest
import torch
from conftest import mnli_run_args, tiny_model
from transformers import AutoModelForSequenceClassification, BertModel

from hf_srnets.commands.glue_sparse import main
from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import exact_mask
from hf_srnets.pruning.l0 import L0Config, extract_ticket, read_search_dir, write_ticket


def random_log_alphas(seed: int = 0, ties: bool = True) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    shapes = {"a": (7, 5), "b": (3, 11), "c": (13,)}
    out = {}
    for name, shape in shapes.items():
        values = torch.randn(shape, generator=generator)
        out[name] = values.round() if ties else values  # rounding makes many equal log α
    return out


@pytest.mark.parametrize("ties", [True, False])
@pytest.mark.parametrize("sparsity", [0.0, 0.1, 0.37, 0.5, 0.9])
def test_global_ticket_has_exactly_floor_s_n_zeros_and_prunes_the_smallest(sparsity, ties):
    log_alphas = random_log_alphas(ties=ties)
    masks = extract_ticket(log_alphas, sparsity, "global")
    total = sum(t.numel() for t in log_alphas.values())
    assert sum(int((~m).sum()) for m in masks.values()) == math.floor(sparsity * total)
    kept = torch.cat([log_alphas[n][masks[n]].reshape(-1) for n in masks])
    pruned = torch.cat([log_alphas[n][~masks[n]].reshape(-1) for n in masks])
    if pruned.numel() and kept.numel():
        assert pruned.max() <= kept.min()
    assert all(torch.equal(masks[n], m) for n, m in extract_ticket(log_alphas, sparsity, "global").items())


@pytest.mark.parametrize("sparsity", [0.1, 0.5, 0.75])
def test_local_ticket_has_exactly_floor_s_n_zeros_per_matrix(sparsity):
    log_alphas = random_log_alphas(seed=1)
    masks = extract_ticket(log_alphas, sparsity, "local")
    for name, mask in masks.items():
        assert int((~mask).sum()) == math.floor(sparsity * mask.numel()), name
        assert log_alphas[name][~mask].max() <= log_alphas[name][mask].min()
        assert torch.equal(mask, exact_mask(log_alphas[name], sparsity)), name  # selection.py's tie rule


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="sparsity must be in"):
        extract_ticket(random_log_alphas(), 1.0)
    with pytest.raises(ValueError, match="scope"):
        extract_ticket(random_log_alphas(), 0.5, "per-head")


def search_dir(tmp_path, sparsity: float = 0.5):
    srnet = SRNetModel(tiny_model("bert"), L0Config(sparsity=sparsity))
    generator = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for layer in srnet.masked_layers().values():
            layer.log_alpha.copy_(torch.randn(layer.log_alpha.shape, generator=generator))
    out = tmp_path / "search"
    srnet.save_pretrained(out)
    return out, {n: layer.log_alpha.detach().clone() for n, layer in srnet.masked_layers().items()}


def test_several_tickets_from_one_search_round_trip(tmp_path):
    out, log_alphas = search_dir(tmp_path)
    for sparsity, scope in [(0.2, "global"), (0.5, "local"), (0.8, "global")]:
        ticket_dir = tmp_path / f"ticket_{sparsity}"
        report = write_ticket(out, ticket_dir, sparsity, scope)
        config = json.loads((ticket_dir / "srnet_config.json").read_text())
        assert config["ticket_source"] == str(out) and config["sparsity"] == sparsity
        assert config["sparsity_scope"] == scope and config["pruning_method"] == "l0"
        loaded = SRNetModel.from_pretrained(tiny_model("bert"), ticket_dir)
        expected = extract_ticket(log_alphas, sparsity, scope)
        assert all(layer.fixed for layer in loaded.masked_layers().values())
        for name, mask in loaded.binary_masks().items():
            assert torch.equal(mask, expected[name]), name
        assert loaded.sparsity_report()["num_pruned"] == report["num_pruned"]
        with pytest.raises(ValueError, match="not a search directory"):
            read_search_dir(ticket_dir)
    assert read_search_dir(out)[1].keys() == log_alphas.keys()  # the search dir is unchanged


def test_a_non_l0_directory_is_refused(tmp_path):
    from hf_srnets.pruning import ThresholdConfig

    SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5)).save_pretrained(tmp_path)
    with pytest.raises(ValueError, match="not of an l0 search"):
        read_search_dir(tmp_path)


def test_search_extract_and_retrain_through_the_cli(pretrained, data_dir, tmp_path):
    search = tmp_path / "search"
    args = mnli_run_args(pretrained, data_dir, search, train=48, eval=16, ood=12, batch=16)
    main(
        [
            *args,
            "--pruning",
            "l0",
            "--sparsity",
            "0.3",
            "--max_steps",
            "3",
            "--logging_steps",
            "1",
            "--mask_learning_rate",
            "0.1",
        ]
    )
    config = json.loads((search / "srnet_config.json").read_text())
    assert config["pruning_method"] == "l0" and config["trainable_classifier"] is True
    assert (config["sparsity"], config["sparsity_scope"]) == (0.3, "global")
    history = json.loads((search / "trainer_state.json").read_text())["log_history"]
    assert any("l0_gates_zero" in e and "loss_penalty" in e for e in history)
    results = json.loads((search / "all_results.json").read_text())
    assert results["train_l0_lambda"] == 0.5 and "train_l0_expected_sparsity" in results
    assert results["saved_ticket_sparsity"] == pytest.approx(0.3, abs=1e-4)  # beside the Eq. 5 gates' sparsity
    card = (search / "README.md").read_text()
    assert "hard-concrete L0 gates" in card and "**30.0%** sparsity" in card  # the saved ticket's sparsity
    assert "float log α of every gate" in card and "| l0_lambda | 0.5 |" in card
    assert "@inproceedings{zheng2022robust" in card and "louizos2018learning" in card

    ticket_dir = tmp_path / "ticket"
    write_ticket(search, ticket_dir, 0.6, "global")
    ticket = SRNetModel.from_pretrained(
        AutoModelForSequenceClassification.from_pretrained(pretrained, num_labels=3), ticket_dir
    ).binary_masks()
    retrain = tmp_path / "retrain"
    args = mnli_run_args(pretrained, data_dir, retrain, train=48, eval=16, ood=12, batch=16)
    main(
        [
            *args,
            "--pruning",
            "none",
            "--mask_from",
            str(ticket_dir),
            "--do_train",
            "--max_steps",
            "3",
            "--learning_rate",
            "1e-3",
        ]
    )
    results = json.loads((retrain / "all_results.json").read_text())
    assert results["sparsity"] == pytest.approx(
        sum(int((~m).sum()) for m in ticket.values()) / sum(m.numel() for m in ticket.values())
    )
    # the retrained subnetwork belongs to the weights it was retrained from: it loads on them with the check on
    assert json.loads((retrain / "srnet_config.json").read_text())["base_model_name_or_path"] == str(pretrained)
    base = AutoModelForSequenceClassification.from_pretrained(pretrained, num_labels=3)
    srnet = SRNetModel.from_pretrained(base, retrain)
    original = BertModel.from_pretrained(pretrained)
    for name, mask in srnet.binary_masks().items():
        assert torch.equal(mask, ticket[name]), name
        weight = srnet.get_submodule(f"base_model.{name}").base_layer.weight
        assert torch.all(weight[~mask] == 0), f"{name}: a pruned weight moved"
        if name.startswith("bert."):
            start = original.get_submodule(name[len("bert.") :]).weight
            assert not torch.equal(weight[mask], start[mask]), f"{name}: the kept weights did not train"
