"""The config a user passes stays as given (issue 51): `prepare_config`, `SRNetModel`, the method's hooks, training
and saving work on a resolved copy, the model's `srnet_config`, and `srnet_config.json` records that copy.

Each method gets settings that make it derive something: mask training's Δt_φ (from `--eval_steps`) and cubic
schedule (from s_i), Wanda's sparsity (from N:M) and the calibration examples it found, the random baseline's seed
(from `--seed`) and sparsity (from its ticket), every method's `trainable_classifier`, and what `SRNetModel` fills in
(model type, module shapes, fingerprint)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import tiny_model
from training.helpers import cpu_args, synthetic_nli, tiny_tokenizer

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import PRUNING_METHODS, PruningConfig
from hf_srnets.run_files import SRNET_CONFIG_NAME
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer

TRAIN_ROWS = 32
# what prepare_config reads of the run: Δt_φ is --eval_steps when evaluating by steps, the random seed --seed
RUN = SimpleNamespace(seed=3, eval_strategy="steps", eval_steps=2)

# the user's options per method (the rest default) -> the values the saved config must record instead
OPTIONS: dict[str, dict[str, Any]] = {
    "threshold": {"sparsity": 0.5, "initial_sparsity": 0.3},
    "magnitude": {"sparsity": 0.5, "imp_prune_ratio": 0.25, "imp_interval": 0.25},
    "wanda": {"wanda_nm": "1:4", "calibration_samples": 1000},
    "l0": {"sparsity": 0.5},
}
RESOLVED: dict[str, dict[str, Any]] = {
    "threshold": {"sparsity_schedule": "cubic", "threshold_update_interval": 2},
    "wanda": {"sparsity": 0.75, "calibration_samples": TRAIN_ROWS},  # 1:4 keeps 1 of 4; all 32 rows calibrated
    "random": {"random_seed": 3, "sparsity": 0.25},  # --seed, and the ticket's sparsity
}
FINGERPRINTED = {"threshold", "l0"}  # the methods whose masks belong to the frozen base weights


def user_config(method: str, workdir: Path) -> PruningConfig:
    options = dict(OPTIONS.get(method, {}))
    if method == "random":  # copies a ticket: mask training's, at 25% per matrix
        ticket = workdir / "ticket"
        SRNetModel(tiny_model("bert"), PRUNING_METHODS["threshold"].config_class(sparsity=0.25)).save_pretrained(ticket)
        options["random_like"] = str(ticket)
    return PRUNING_METHODS[method].config_class(**options)


@pytest.mark.parametrize("method", sorted(PRUNING_METHODS))
def test_the_users_config_stays_as_given_and_the_saved_one_is_resolved(method, tmp_path):
    given = user_config(method, tmp_path)
    as_given = copy.deepcopy(given)
    prepared = PRUNING_METHODS[method].prepare_config(given, RUN, fresh_head=False)
    assert given == as_given, "prepare_config changed the user's config"
    passed = copy.deepcopy(prepared)

    tokenizer = tiny_tokenizer(tmp_path)
    srnet = SRNetModel(tiny_model("bert"), prepared)
    args = cpu_args(tmp_path / "run", max_steps=8, mask_learning_rate=0.05)
    data = synthetic_nli(tokenizer, n=TRAIN_ROWS, with_bias=False)
    SRNetTrainer(model=srnet, args=args, train_dataset=data, data_collator=SRNetDataCollator(tokenizer)).train()
    srnet.save_pretrained(tmp_path / "saved")
    assert prepared == passed, "SRNetModel, its method or training changed the config it was given"
    assert given == as_given
    assert srnet.srnet_config is not prepared and srnet.method.config is srnet.srnet_config

    saved = json.loads((tmp_path / "saved" / SRNET_CONFIG_NAME).read_text())
    assert saved["pruning_method"] == method and saved["model_type"] == "bert"
    assert saved["module_shapes"] and not given.module_shapes
    assert saved["trainable_classifier"] is False and given.trainable_classifier is None  # resolved, not None
    assert (saved["base_fingerprint"] is not None) == (method in FINGERPRINTED) and given.base_fingerprint is None
    for name, value in RESOLVED.get(method, {}).items():
        assert saved[name] == value, name
        assert getattr(given, name) != value, f"{name} is a derived value: the user did not give it"
