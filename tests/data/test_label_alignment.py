"""A fine-tuned checkpoint's label names against the task's (issue 50: the reorder was logged at INFO only, and
run_attack.py's refusal named --task_labels, an option it does not have)."""

import logging

import pytest
from transformers import BertConfig

from hf_srnets.data import get_task
from hf_srnets.data.label_alignment import checkpoint_label_order
from hf_srnets.errors import InputError


def _classifier_config(names: list[str]) -> BertConfig:
    return BertConfig(
        architectures=["BertForSequenceClassification"], id2label=dict(enumerate(names)),
        label2id={n: i for i, n in enumerate(names)},
    )  # fmt: skip


def test_a_checkpoint_in_another_label_order_is_aligned_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="hf_srnets.data.label_alignment"):
        order = checkpoint_label_order(_classifier_config(["positive", "negative"]), get_task("sst2"), "ckpt")
    assert order == ("positive", "negative")
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert "its order ['positive', 'negative'] is used instead of ['negative', 'positive']" in caplog.text


def test_other_label_names_name_the_fix_the_calling_script_has():
    config, task = _classifier_config(["foo", "bar"]), get_task("sst2")
    with pytest.raises(InputError, match=r"or pick the task's labels with --task_labels\.$"):
        checkpoint_label_order(config, task, "ckpt")  # run_glue_sparse.py's
    with pytest.raises(InputError, match=r"or attack it with the --task it was fine-tuned on\.$") as refused:
        checkpoint_label_order(config, task, "ckpt", relabel_hint="attack it with the --task it was fine-tuned on")
    assert "--task_labels" not in str(refused.value)


def test_run_attacks_loader_names_its_own_fix():
    from types import SimpleNamespace

    from hf_srnets.evaluation.saved_classifier import _label_order

    with pytest.raises(InputError, match=r"attack it with the --task it was fine-tuned on\.$"):
        _label_order(SimpleNamespace(config=_classifier_config(["foo", "bar"])), get_task("sst2"), "ckpt")
