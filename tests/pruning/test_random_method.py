"""`--pruning random --random_like DIR`: the Rand baseline (Robust Tickets §4.2), a ticket's sparsity per matrix."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import mnli_run_args, tiny_model

from hf_srnets.commands.glue_sparse import main
from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import RandomConfig, RandomPruning, ThresholdConfig
from hf_srnets.pruning.l0 import L0Config


def ticket_dir(tmp_path, kind: str = "bert", name: str = "ticket"):
    """An l0 search dir (its saved ticket: global ranking, so per-matrix sparsities differ) for a tiny model."""
    srnet = SRNetModel(tiny_model(kind), L0Config(sparsity=0.4))
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for i, layer in enumerate(srnet.masked_layers().values()):
            layer.log_alpha.copy_(torch.randn(layer.log_alpha.shape, generator=generator) + 0.3 * i)
    out = tmp_path / name
    srnet.save_pretrained(out)
    return out, SRNetModel.from_pretrained(tiny_model(kind), out).method.saved_masks(srnet)


def random_model(directory, seed: int) -> SRNetModel:
    config = RandomConfig(random_like=str(directory))
    return SRNetModel(
        tiny_model("bert"), RandomPruning.prepare_config(config, type("Args", (), {"seed": seed})(), fresh_head=False)
    )


def test_per_matrix_zeros_equal_the_tickets_with_another_structure(tmp_path):
    out, ticket = ticket_dir(tmp_path)
    srnet = random_model(out, seed=3)
    masks = srnet.binary_masks()
    counts = {name: int((~mask).sum()) for name, mask in ticket.items()}
    assert len(set(counts.values())) > 2  # a global ticket: the matrices differ in sparsity
    for name, mask in masks.items():
        assert int((~mask).sum()) == counts[name], name
        assert not torch.equal(mask, ticket[name]), name
    assert srnet.srnet_config.random_seed == 3 and srnet.srnet_config.random_like == str(out)
    assert srnet.srnet_config.sparsity == pytest.approx(sum(counts.values()) / sum(m.numel() for m in masks.values()))
    assert srnet.fixed_masks and all(layer.base_layer.weight.requires_grad for layer in srnet.masked_layers().values())
    for name, layer in srnet.masked_layers().items():
        assert torch.all(layer.base_layer.weight[~masks[name]] == 0), name


def test_seed_reproducible_and_seed_dependent(tmp_path):
    out, _ = ticket_dir(tmp_path)
    first, again, other = (random_model(out, seed).binary_masks() for seed in (5, 5, 6))
    assert all(torch.equal(first[n], again[n]) for n in first)
    assert not all(torch.equal(first[n], other[n]) for n in first)


def test_a_ticket_of_other_modules_or_shapes_is_refused(tmp_path):
    out, _ = ticket_dir(tmp_path, kind="distilbert", name="other")
    with pytest.raises(ValueError, match=r"--random_like .*(has no mask for|which this model does not mask)"):
        random_model(out, seed=0)
    narrow = tmp_path / "narrow"
    SRNetModel(tiny_model("bert"), ThresholdConfig(mask_classifier=False)).save_pretrained(narrow)
    with pytest.raises(ValueError, match="has no mask for 'classifier'"):
        random_model(narrow, seed=0)
    with pytest.raises(ValueError, match="needs --random_like"):
        RandomPruning.prepare_config(RandomConfig(), None, fresh_head=False)


def test_through_the_cli_with_the_run_seed(pretrained, data_dir, tmp_path):
    out, ticket = ticket_dir(tmp_path)
    run = tmp_path / "rand"
    args = mnli_run_args(pretrained, data_dir, run, train=32, eval=16, ood=12, batch=16)
    main([*args, "--pruning", "random", "--random_like", str(out), "--seed", "11", "--max_steps", "2"])
    config = json.loads((run / "srnet_config.json").read_text())
    assert config["pruning_method"] == "random" and config["random_seed"] == 11
    assert config["random_like"] == str(out)
    results = json.loads((run / "all_results.json").read_text())
    zeros = sum(int((~m).sum()) for m in ticket.values())
    assert results["sparsity"] == pytest.approx(zeros / sum(m.numel() for m in ticket.values()))


def test_a_shape_mismatch_names_the_module():
    from hf_srnets.pruning.random import check_same_modules

    with pytest.raises(ValueError, match=r"'layer.0' is \(4, 8\) there but \(8, 4\) in this model"):
        check_same_modules({"layer.0": [4, 8]}, {"layer.0": [8, 4]}, "DIR")
    check_same_modules({"layer.0": [4, 8]}, {"layer.0": [4, 8]}, "DIR")
