"""`--mask_from` with a ticket found on other weights (Robust Tickets §3.3: search on the fine-tuned model, retrain
from the pre-trained one): the retrained subnetwork belongs to the weights it was retrained from."""

from __future__ import annotations

import json
import shutil

import torch
from conftest import mnli_run_args
from transformers import AutoModelForSequenceClassification

from hf_srnets.commands.glue_sparse import main
from hf_srnets.masking import SRNetModel
from hf_srnets.pruning.l0 import L0Config


def test_a_ticket_from_other_weights_is_retrained_and_reloads_on_the_retraining_base(pretrained, data_dir, tmp_path):
    searched = tmp_path / "fine_tuned"  # stands for the fine-tuned model the search ran on
    shutil.copytree(pretrained, searched)
    # loaded from the original, not the copy it is saved over: with safetensors < 0.8 the loaded weights map the
    # file they came from, and saving over that file changes them under the model
    model = AutoModelForSequenceClassification.from_pretrained(pretrained, num_labels=3)
    with torch.no_grad():
        for param in model.parameters():
            param.add_(0.01)
    model.save_pretrained(searched)
    ticket = tmp_path / "ticket"
    srnet = SRNetModel(model, L0Config(sparsity=0.3, base_model_name_or_path=str(searched)))
    with torch.no_grad():
        for layer in srnet.masked_layers().values():
            layer.log_alpha.normal_()
    srnet.save_pretrained(ticket)

    retrain = tmp_path / "retrain"
    args = mnli_run_args(pretrained, data_dir, retrain, train=32, eval=16, ood=12, batch=16)
    main([*args, "--pruning", "none", "--mask_from", str(ticket), "--do_train", "--max_steps", "2"])

    config = json.loads((retrain / "srnet_config.json").read_text())
    assert config["base_model_name_or_path"] == str(pretrained)
    base = AutoModelForSequenceClassification.from_pretrained(pretrained, num_labels=3)
    loaded = SRNetModel.from_pretrained(base, retrain)  # fingerprint checked against the retraining base
    searched_model = AutoModelForSequenceClassification.from_pretrained(searched, num_labels=3)
    found = SRNetModel.from_pretrained(searched_model, ticket)
    ticket_masks = found.method.saved_masks(found)
    for name, mask in loaded.binary_masks().items():
        assert torch.equal(mask, ticket_masks[name]), name
