"""`training.fsdp` without processes: the FSDP2 units of a BERT model leave out the module holding its input
embeddings (accelerate 1.15 would shard those twice), FSDP1 is refused on CPU processes with the fix, and a run
under FSDP refuses a merged checkpoint before training."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from conftest import tiny_model
from torch.distributed.fsdp.wrap import size_based_auto_wrap_policy, transformer_auto_wrap_policy

from hf_srnets.errors import InputError
from hf_srnets.runner.run import check_sharded_outputs
from hf_srnets.training.fsdp import embedding_free_units, enable_cpu_fsdp, set_default_units


def test_bert_units_are_its_layers_not_the_module_holding_the_embeddings():
    model = tiny_model("bert")
    assert set(model._no_split_modules) == {"BertEmbeddings", "BertLayer"}  # what accelerate would wrap
    assert embedding_free_units(model) == ["BertLayer"]


def test_no_units_to_leave_out_keeps_accelerates_default():
    model = tiny_model("bert")
    model._no_split_modules = ["BertLayer"]
    assert embedding_free_units(model) is None


def _plugin(policy, names=None):
    return SimpleNamespace(auto_wrap_policy=policy, transformer_cls_names_to_wrap=names)


def test_default_units_are_set_only_where_none_were_named():
    model = tiny_model("bert")
    plugin = _plugin(transformer_auto_wrap_policy)
    set_default_units(plugin, model)
    assert plugin.transformer_cls_names_to_wrap == ["BertLayer"]
    named = _plugin(transformer_auto_wrap_policy, ["BertEmbeddings", "BertLayer"])
    set_default_units(named, model)
    assert named.transformer_cls_names_to_wrap == ["BertEmbeddings", "BertLayer"]
    by_size = _plugin(size_based_auto_wrap_policy)
    set_default_units(by_size, model)
    assert by_size.transformer_cls_names_to_wrap is None


def test_fsdp1_on_cpu_processes_is_refused_with_the_fix():
    args = SimpleNamespace(fsdp_plugin_args={"fsdp_version": 1})
    with pytest.raises(InputError, match=r"FSDP2.*version 1.*set it to 2"):
        enable_cpu_fsdp(SimpleNamespace(state=SimpleNamespace()), args)


@pytest.mark.parametrize("flag", ["save_merged", "push_merged", "save_compact"])
def test_a_merged_checkpoint_under_fsdp_is_refused_before_training(flag):
    model_args = SimpleNamespace(save_merged=False, push_merged=False, save_compact=False)
    setattr(model_args, flag, True)
    run_args = SimpleNamespace(model=model_args)
    with pytest.raises(InputError, match=r"not available under FSDP.*SRNetModel.from_pretrained"):
        check_sharded_outputs(run_args, SimpleNamespace(is_fsdp_enabled=True))
    check_sharded_outputs(run_args, SimpleNamespace(is_fsdp_enabled=False))  # DDP or one process: allowed
