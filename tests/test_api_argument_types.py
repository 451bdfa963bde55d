"""The Python API's public constructors refuse an argument of the wrong type by name (an `InputTypeError`, which is
a `TypeError` and an `InputError`), instead of failing later with an unrelated message."""

import re

import pytest
from conftest import tiny_model

from hf_srnets import SRNetModel
from hf_srnets.errors import InputError
from hf_srnets.pruning.threshold.config import ThresholdConfig
from hf_srnets.training.collator import SRNetDataCollator


def _refused(call, expected: str) -> str:
    with pytest.raises(TypeError) as caught:
        call()
    assert isinstance(caught.value, InputError)
    assert re.search(expected, str(caught.value)), str(caught.value)
    return str(caught.value)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"sparsity": "0.5"}, r"ThresholdConfig: sparsity must be float, got str '0\.5': pass e\.g\. sparsity=0\.5"),
        ({"sparsity": True}, r"sparsity must be float, got bool True"),
        ({"sparsity": 0.5, "block_size": 2.0}, r"block_size must be int, got float 2\.0"),
        ({"sparsity": 0.5, "initial_sparsity": "0"}, r"initial_sparsity must be float or None, got str '0'"),
        ({"sparsity": 0.5, "mask_classifier": "no"}, r"mask_classifier must be bool, got str 'no'"),
    ],
)
def test_a_config_field_of_the_wrong_type_is_named(values, expected):
    _refused(lambda: ThresholdConfig(**values), expected)


def test_a_config_takes_an_int_for_a_float():
    assert ThresholdConfig(sparsity=0).sparsity == 0


def test_srnet_model_refuses_a_model_that_is_not_a_module():
    _refused(lambda: SRNetModel(None, ThresholdConfig(sparsity=0.5)), r"SRNetModel: model must be a torch nn\.Module")
    _refused(
        lambda: SRNetModel("bert-base-uncased", ThresholdConfig(sparsity=0.5)),
        r"got str 'bert-base-uncased': load it first, e\.g\. AutoModelForSequenceClassification\.from_pretrained",
    )


def test_srnet_model_refuses_a_dict_for_the_config():
    _refused(
        lambda: SRNetModel(tiny_model(), {"sparsity": 0.5}),
        r"SRNetModel: config must be a PruningConfig \(e\.g\. ThresholdConfig\(sparsity=0\.5\)\), got dict",
    )


def test_from_pretrained_names_swapped_arguments(tmp_path):
    srnet = SRNetModel(tiny_model(), ThresholdConfig(sparsity=0.5))
    srnet.save_pretrained(tmp_path / "masks")
    _refused(
        lambda: SRNetModel.from_pretrained(str(tmp_path / "model"), str(tmp_path / "masks")),
        r"SRNetModel\.from_pretrained: model must be a torch nn\.Module .* got str .*: load it first",
    )
    _refused(
        lambda: SRNetModel.from_pretrained(tiny_model(), srnet),
        r"SRNetModel\.from_pretrained: model_id must be the mask directory \(a path or Hub id\), got SRNetModel",
    )


def test_collator_refuses_a_missing_tokenizer():
    _refused(lambda: SRNetDataCollator(None), r"SRNetDataCollator: tokenizer must be a transformers tokenizer")
    _refused(lambda: SRNetDataCollator("bert-base-uncased"), r"load it first, e\.g\. AutoTokenizer\.from_pretrained")


def test_the_trainer_names_a_model_or_arguments_of_the_wrong_type(tmp_path):
    # issue 50: args as a dict ended in an AttributeError ('dict' object has no attribute 'step_objective_settings')
    from hf_srnets import SRNetTrainer, SRNetTrainingArguments

    _refused(
        lambda: SRNetTrainer(model=tiny_model(), args={"output_dir": str(tmp_path)}),
        r"SRNetTrainer: args must be SRNetTrainingArguments, got dict .* e\.g\. args=SRNetTrainingArguments\(",
    )
    args = SRNetTrainingArguments(output_dir=str(tmp_path), report_to="none")
    expected = r"SRNetTrainer: model must be a torch nn\.Module .*got str 'bert-base-uncased': load it first"
    _refused(lambda: SRNetTrainer(model="bert-base-uncased", args=args), expected)
