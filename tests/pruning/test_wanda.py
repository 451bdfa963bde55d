"""One-shot methods: Wanda (Sun et al. 2024) and one-shot magnitude. Wanda's selection on a 4×4 weight and three
calibration vectors is checked against scores worked out by hand below; the runs check that the masks are the
paper's (per output row / N:M / per matrix) and that no weight is retrained (merged = θ_0 ⊙ m)."""

import copy
import json
import math

import numpy as np
import pytest
import torch
from conftest import mnli_run_args, tiny_model
from safetensors.torch import load_file
from training.helpers import tiny_tokenizer

from hf_srnets.commands.glue_sparse import main
from hf_srnets.errors import InputError
from hf_srnets.masking import SRNetModel
from hf_srnets.pruning.nm import nm_mask
from hf_srnets.pruning.wanda import InputNorms, WandaConfig, parse_nm, row_mask, wanda_scores
from hf_srnets.pruning.wanda.method import wanda_masks

W = [[4.0, 1.0, -2.0, 3.0], [-1.0, 2.0, 1.0, 10.0], [0.5, -0.5, 3.0, 2.0], [1.0, 1.0, 1.0, 1.0]]
# three calibration tokens; ‖X_j‖₂ = sqrt(1+4+4) = 3, sqrt(0+9+16) = 5, sqrt(4+1+4) = 3, sqrt(1+0+0) = 1
X = [[1.0, 0.0, 2.0, 1.0], [2.0, 3.0, 1.0, 0.0], [2.0, 4.0, 2.0, 0.0]]
# S = |W|·‖X‖ by hand: row 0: 12 5 6 3; row 1: 3 10 3 10; row 2: 1.5 2.5 9 2; row 3: 3 5 3 1
HALF_PER_ROW = [[1, 0, 1, 0], [0, 1, 0, 1], [0, 1, 1, 0], [0, 1, 1, 0]]  # 2 lowest per row; row 3's tie: j0 goes
ONE_OF_FOUR = [[1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0], [0, 1, 0, 0]]  # 1:4: row 1's tie 3, 3 and 10, 10: j3 kept
THREE_OF_FOUR = [[1, 1, 1, 0], [0, 1, 1, 1], [0, 1, 1, 1], [1, 1, 1, 0]]  # 3:4: the one lowest goes
MAGNITUDE_PER_ROW = [[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 1], [0, 0, 1, 1]]  # |W| alone: another mask


def test_wanda_selection_on_a_4x4_weight_and_three_calibration_vectors():
    linear = torch.nn.Linear(4, 4, bias=False)
    with torch.no_grad():
        linear.weight.copy_(torch.tensor(W))
    tokens = torch.tensor([[*X, [100.0, 100.0, 100.0, 100.0]]])  # one example of 4 tokens, the last one padding
    with InputNorms({"w": linear}) as norms:
        norms.attention_mask = torch.tensor([[1, 1, 1, 0]])
        linear(tokens)
    norm = norms.norms()["w"]
    np.testing.assert_allclose(norm.numpy(), np.sqrt((np.array(X) ** 2).sum(axis=0)), rtol=1e-6)
    np.testing.assert_allclose(norm.numpy(), [3.0, 5.0, 3.0, 1.0], rtol=1e-6)
    scores = wanda_scores(linear.weight, norm)
    expected_scores = [[12, 5, 6, 3], [3, 10, 3, 10], [1.5, 2.5, 9, 2], [3, 5, 3, 1]]
    np.testing.assert_allclose(scores.numpy(), expected_scores, rtol=1e-6)
    assert row_mask(scores, 0.5).int().tolist() == HALF_PER_ROW
    assert nm_mask(scores, 1, 4).int().tolist() == ONE_OF_FOUR
    assert nm_mask(scores, 3, 4).int().tolist() == THREE_OF_FOUR
    assert nm_mask(scores, 2, 4).int().tolist() == HALF_PER_ROW  # one group of 4 per row: 2:4 = 50% per row
    assert row_mask(torch.tensor(W).abs(), 0.5).int().tolist() == MAGNITUDE_PER_ROW != HALF_PER_ROW


def input_norms_by_plain_hooks(model: torch.nn.Module, batch: dict) -> dict[str, torch.Tensor]:
    """‖X_j‖₂ of every nn.Linear's input over the real tokens (padding rows dropped where the input has them), by
    forward pre-hooks on the plain model: the reference the masks of `wanda_masks` are compared with."""
    squares, handles = {}, []
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear):

            def hook(module, args, name=name):
                x = args[0].detach().double()
                if x.dim() == 3 and tuple(x.shape[:2]) == tuple(batch["attention_mask"].shape):
                    x = x * batch["attention_mask"][..., None]
                squares[name] = squares.get(name, 0) + x.reshape(-1, x.shape[-1]).pow(2).sum(dim=0)

            handles.append(module.register_forward_pre_hook(hook))
    with torch.no_grad():
        model(**batch)
    for handle in handles:
        handle.remove()
    return {name: s.sqrt().float() for name, s in squares.items()}


def test_the_masks_of_a_wrapped_model_come_from_its_real_input_norms():
    # the regression: the masked layers never call base_layer, so norms hooked there stayed 0 and every row was pruned
    # by position (MiniLM at 30% fell to chance on MNLI). Expected masks from plain forward hooks on an unwrapped copy.
    dense = tiny_model("bert", 3).eval()
    batch = {"input_ids": torch.tensor([[2, 7, 9, 11, 3, 0], [2, 5, 6, 3, 0, 0]])}
    batch["attention_mask"] = (batch["input_ids"] != 0).long()
    norms = input_norms_by_plain_hooks(dense, batch)
    config = WandaConfig(sparsity=0.3, calibration_samples=2)
    srnet = SRNetModel(copy.deepcopy(dense), config)
    masks = wanda_masks(srnet, [batch], config)
    assert masks and set(masks) <= set(norms)
    for name, mask in masks.items():
        weight = dense.get_submodule(name).weight
        assert torch.equal(mask, row_mask(weight.abs() * norms[name][None, :], 0.3)), name
        positional = row_mask(torch.zeros_like(weight), 0.3)
        assert not torch.equal(mask, positional), name  # what zero norms gave


def test_more_calibration_samples_than_training_rows_records_the_rows_used(caplog):
    # issue 50: --calibration_samples 100000 on 16 rows ran without a word, and the card recorded 100000
    batch = {"input_ids": torch.tensor([[2, 7, 9, 3], [2, 5, 6, 3]]), "attention_mask": torch.ones(2, 4, dtype=int)}
    config = WandaConfig(sparsity=0.3, calibration_samples=100000)
    srnet = SRNetModel(tiny_model("bert", 3).eval(), config)
    with caplog.at_level("WARNING"):
        wanda_masks(srnet, [batch], config)
    assert srnet.srnet_config.calibration_samples == 2  # the model's copy records what was used
    assert config.calibration_samples == 100000  # the user's config says what was asked
    assert "--calibration_samples 100000 is more than the 2 training examples" in caplog.text
    card = srnet.method.card_settings(srnet.srnet_config, None)
    assert card["calibration_samples"] == 2


def test_nm_is_checked():
    assert parse_nm("2:4") == (2, 4)
    for bad in ("4:2", "2-4", "0:4", "a:b"):
        with pytest.raises(InputError, match="is not N:M"):
            parse_nm(bad)


@pytest.fixture
def classifier(tmp_path):
    """A tiny 'fine-tuned' MNLI classifier (conftest's tiny BERT, its head drawn once) with a tokenizer."""
    path = tmp_path / "teacher"
    tiny_model("bert", 3).save_pretrained(path)
    tiny_tokenizer(path).save_pretrained(path)
    return path


def _run(classifier, data_dir, out, *extra):
    main(mnli_run_args(classifier, data_dir, out, "--do_train", "--max_steps", "1", "--dataloader_pin_memory", "false",
                       "--save_merged", "true", *extra, train=32, eval=16, ood=10, batch=8))  # fmt: skip
    merged = load_file(str(out / "merged" / "model.safetensors"))
    dense = load_file(str(classifier / "model.safetensors"))
    return merged, dense, json.loads((out / "srnet_config.json").read_text())


def _matrices(config):
    return [name for name in config["module_shapes"]]


def test_wanda_run_prunes_per_row_and_keeps_theta_0(classifier, data_dir, tmp_path):
    merged, dense, config = _run(classifier, data_dir, tmp_path / "w", "--pruning", "wanda", "--sparsity", "0.5",
                                 "--calibration_samples", "16")  # fmt: skip
    for name in _matrices(config):
        weight, start = merged[f"{name}.weight"], dense[f"{name}.weight"]
        kept = weight != 0
        assert (kept.sum(dim=1) == weight.shape[1] - math.floor(0.5 * weight.shape[1])).all(), name  # per row
        assert torch.equal(weight, start * kept), name  # θ_0 ⊙ m: nothing retrained
    card = (tmp_path / "w" / "README.md").read_text()
    assert "one-shot Wanda (Sun et al. 2024)" in card and "16 training examples" in card


def test_wanda_nm_run_keeps_two_of_every_four(classifier, data_dir, tmp_path):
    """N:M is the one granularity of every method (issue 73): `--mask_granularity nm` and its older spelling
    `--wanda_nm 2:4` give the same masks and record the same config."""
    merged, _, config = _run(classifier, data_dir, tmp_path / "nm", "--pruning", "wanda", "--mask_granularity", "nm",
                             "--nm_n", "2", "--nm_m", "4", "--calibration_samples", "8")  # fmt: skip
    assert config["sparsity"] == 0.5 and (config["mask_granularity"], config["nm_n"], config["nm_m"]) == ("nm", 2, 4)
    for name in _matrices(config):
        weight = merged[f"{name}.weight"]
        groups = (weight != 0).reshape(weight.shape[0], -1, 4).sum(dim=2)
        assert (groups == 2).all(), name
    alias, _, alias_config = _run(classifier, data_dir, tmp_path / "alias", "--pruning", "wanda", "--wanda_nm", "2:4",
                                  "--calibration_samples", "8")  # fmt: skip
    assert (alias_config["mask_granularity"], alias_config["nm_n"], alias_config["nm_m"]) == ("nm", 2, 4)
    assert alias.keys() == merged.keys() and all(torch.equal(alias[k], merged[k]) for k in merged)


def test_magnitude_oneshot_prunes_the_smallest_of_each_matrix(classifier, data_dir, tmp_path):
    merged, dense, config = _run(classifier, data_dir, tmp_path / "m", "--pruning", "magnitude-oneshot",
                                 "--sparsity", "0.3")  # fmt: skip
    for name in _matrices(config):
        weight, start = merged[f"{name}.weight"], dense[f"{name}.weight"].numpy()
        count = math.floor(0.3 * start.size)
        pruned = np.argsort(np.abs(start).ravel(), kind="stable")[:count]  # the smallest |W|, ties by position
        expected = np.ones(start.size, dtype=bool)
        expected[pruned] = False
        assert np.array_equal((weight != 0).numpy().ravel(), expected), name
        assert np.array_equal(weight.numpy(), start * expected.reshape(start.shape)), name


def test_wanda_options_the_run_would_not_use_are_refused():
    from hf_srnets.arguments import parse_args, validate_args

    base = ["--model_name_or_path", "m", "--output_dir", "o", "--pruning", "wanda"]
    with pytest.raises(InputError, match=r"--sparsity.*--wanda_nm N:M sets the sparsity"):
        validate_args(parse_args([*base, "--wanda_nm", "2:4", "--sparsity", "0.3"]))
    with pytest.raises(InputError, match="--mask_granularity"):
        validate_args(parse_args([*base, "--mask_granularity", "neuron"]))
    nm = [*base, "--mask_granularity", "nm", "--nm_n", "1", "--nm_m", "4", "--sparsity", "0.75"]
    with pytest.raises(InputError, match=r"--wanda_nm 2:4 and --mask_granularity nm --nm_n 1 --nm_m 4 name two"):
        validate_args(parse_args([*nm, "--wanda_nm", "2:4"]))
