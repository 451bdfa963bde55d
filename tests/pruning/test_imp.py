"""IMP (Algorithm 1), rewinding, and fine-tuning with fixed masks: exact zeros, θ_0 restored bit for bit."""

import math

import pytest
import torch
from conftest import tiny_model
from training.helpers import synthetic_nli, tiny_tokenizer

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import FixedMaskCallback, IMPCallback, ThresholdConfig
from hf_srnets.pruning.magnitude import magnitude_prune
from hf_srnets.training.arguments import SRNetTrainingArguments
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer


def _imp_model():
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5), initialize=False)
    srnet.train_weights_with_fixed_masks()
    return srnet


def _train(tmp_path, srnet, callback, max_steps=20, lr=1e-2):
    tokenizer = tiny_tokenizer(tmp_path)
    args = SRNetTrainingArguments(
        output_dir=str(tmp_path / "out"),
        report_to="none",
        per_device_train_batch_size=8,
        max_steps=max_steps,
        learning_rate=lr,
        save_strategy="no",
        disable_tqdm=True,
        use_cpu=True,
        logging_steps=100,
        seed=0,
        weight_decay=0.01,
    )
    trainer = SRNetTrainer(
        model=srnet,
        args=args,
        train_dataset=synthetic_nli(tokenizer, n=64),
        data_collator=SRNetDataCollator(tokenizer),
        callbacks=[callback],
    )
    trainer.train()
    return trainer


def test_k_rounds_give_exactly_k_tenths_zeros_per_matrix():
    srnet = _imp_model()
    previous = srnet.binary_masks()
    for k in range(1, 6):
        magnitude_prune(srnet, k * 0.1)
        masks = srnet.binary_masks()
        for name, mask in masks.items():
            assert int((~mask).sum()) == math.floor(k * 0.1 * mask.numel()), (k, name)
            assert not torch.any(mask & ~previous[name]), "a pruned weight came back"
            assert torch.all(srnet.base_model.get_submodule(name).base_layer.weight[~mask] == 0)
        previous = masks


def test_imp_prunes_every_interval_and_stops_after_training_at_target(tmp_path):
    srnet = _imp_model()
    trainer = _train(tmp_path, srnet, IMPCallback(srnet, target_sparsity=0.5, prune_ratio=0.1, interval=0.1))
    # rounds at steps 0, 2, 4, 6, 8 reach 50%; training goes on for Δt = 2 steps and stops at step 10
    assert trainer.state.global_step == 10
    for name, mask in srnet.binary_masks().items():
        assert int((~mask).sum()) == math.floor(0.5 * mask.numel()), name
        assert torch.all(srnet.base_model.get_submodule(name).base_layer.weight[~mask] == 0), name


def test_imp_rw_rewinds_kept_weights_to_theta_0_bit_for_bit(tmp_path):
    srnet = _imp_model()
    theta_0 = {k: v.clone() for k, v in srnet.base_model.state_dict().items() if k.endswith("weight")}
    trainer = _train(
        tmp_path, srnet, IMPCallback(srnet, target_sparsity=0.3, prune_ratio=0.1, interval=0.1, rewind=True)
    )
    assert trainer.state.global_step == 4  # rounds at steps 0, 2, 4; returned right after the third
    masks = srnet.binary_masks()
    for name, mask in masks.items():
        weight = srnet.base_model.get_submodule(name).base_layer.weight
        assert torch.equal(weight[mask], theta_0[f"{name}.base_layer.weight"][mask]), name
        assert torch.all(weight[~mask] == 0) and int((~mask).sum()) == math.floor(0.3 * mask.numel())
    embeddings = "bert.embeddings.word_embeddings.weight"
    assert torch.equal(srnet.base_model.state_dict()[embeddings], theta_0[embeddings])


def test_fine_tuning_with_a_fixed_mask_keeps_zeros(tmp_path):
    found = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.6, mask_init="soft"))
    found.save_pretrained(tmp_path / "mask")
    srnet = SRNetModel.from_pretrained(tiny_model("bert", seed=1), tmp_path / "mask", check_fingerprint=False)
    srnet.train_weights_with_fixed_masks()
    before = {n: layer.base_layer.weight.clone() for n, layer in srnet.masked_layers().items()}
    _train(tmp_path, srnet, FixedMaskCallback(srnet), max_steps=6, lr=5e-2)
    for name, mask in found.binary_masks().items():
        weight = srnet.base_model.get_submodule(name).base_layer.weight
        assert torch.equal(srnet.binary_masks()[name], mask)
        assert torch.all(weight[~mask] == 0), name
        assert not torch.equal(weight[mask], before[name][mask]), name  # the kept weights trained


def test_bad_imp_settings():
    srnet = _imp_model()
    with pytest.raises(ValueError, match="multiple"):
        IMPCallback(srnet, target_sparsity=0.55, prune_ratio=0.1)
    with pytest.raises(ValueError, match="interval"):
        IMPCallback(srnet, target_sparsity=0.5, interval=0)


def test_a_reloaded_imp_model_saves_its_trained_weights_again(tmp_path):
    """IMP's masks are saved with the weights it trained; a model reloaded from them (frozen) and saved again
    dropped those weights (41 tensors on the tiny BERT: found by issue 51's contract test), so its second save no
    longer rebuilt the model. Now both saves are the same bytes."""
    import hashlib

    from hf_srnets.run_files import MASKS_NAME

    srnet = _imp_model()
    with torch.no_grad():
        for param in srnet.base_model.parameters():
            param.add_(0.01)  # weights that differ from the base model's, as after training
    magnitude_prune(srnet, 0.3)
    srnet.save_pretrained(tmp_path / "first")
    reloaded = SRNetModel.from_pretrained(tiny_model("bert"), str(tmp_path / "first"))
    reloaded.save_pretrained(tmp_path / "second")
    first, second = ((tmp_path / d / MASKS_NAME).read_bytes() for d in ("first", "second"))
    assert hashlib.sha256(first).hexdigest() == hashlib.sha256(second).hexdigest()
