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


# issue 50, the rest of docs/python-api.md's functions: each refused value ended in an AttributeError or a TypeError
# from os/posixpath naming no argument (or, for merge_and_unload(compact="yes"), was taken as True)
def _api_cases(tmp_path):
    import datasets

    import hf_srnets as api
    from hf_srnets.bias import fit_or_load_bias_predictions
    from hf_srnets.data import BIAS_COLUMN, add_probability_column, get_task, read_predictions
    from hf_srnets.data.splits import read_split
    from hf_srnets.data.text_digests import read_text_digests
    from hf_srnets.export import export_compressed_tensors, export_onnx, read_compressed_tensors

    task, rows = get_task("mnli"), datasets.Dataset.from_dict({"id": ["a"], "label": [0]})
    srnet = SRNetModel(tiny_model(), ThresholdConfig(sparsity=0.5))
    out = str(tmp_path / "out")
    return [
        (lambda: read_split("mnli", ["a"], name="train", file="x.tsv"), r"read_split: task must be a TaskSpec"),
        (lambda: read_split(task, "entailment", name="train", file="x.tsv"),
         r"read_split: label_names must be a tuple of label names, got str 'entailment'"),  # its letters were read
        (lambda: read_predictions(None, 3), r"read_predictions: path must be a path \(str or os\.PathLike\), got No"),
        (lambda: read_text_digests(None), r"read_text_digests: path must be a path"),
        (lambda: add_probability_column([1], {}, BIAS_COLUMN, source="x"), r"dataset must be a datasets\.Dataset"),
        (lambda: add_probability_column(rows, [0.1], BIAS_COLUMN, source="x"), r"predictions must be a dict of id"),
        (lambda: add_probability_column(rows, {"a": 0.5}, None, source="x"), r"column must be a column name"),
        (lambda: fit_or_load_bias_predictions("mnli", rows, {}, cache_root=out, vectors=None, seed=42),
         r"fit_or_load_bias_predictions: task must be a TaskSpec, got str 'mnli': get it with hf_srnets\.data\.get"),
        (lambda: fit_or_load_bias_predictions(task, [1], {}, cache_root=out, vectors=None, seed=42),
         r"full_train must be a datasets\.Dataset, got list"),
        (lambda: fit_or_load_bias_predictions(task, rows, [rows], cache_root=out, vectors=None, seed=42),
         r"splits must be a dict of set name -> datasets\.Dataset, got list"),
        (lambda: api.save_pretrained_model(None, out), r"save_pretrained_model: model must be a torch nn\.Module"),
        (lambda: api.save_pretrained_model(srnet, out), r"got an SRNetModel: merge its masks first"),
        (lambda: api.save_pretrained_model(tiny_model(), 3), r"save_pretrained_model: directory must be a path"),
        (lambda: api.load_pretrained_model(None), r"load_pretrained_model: path must be a path"),
        (lambda: api.compact_model("bert"), r"compact_model: model must be a torch nn\.Module .* load it first"),
        (lambda: srnet.save_pretrained(None), r"SRNetModel\.save_pretrained: save_directory must be a path"),
        (lambda: srnet.merge_and_unload(compact="yes"), r"compact must be True or False, got str 'yes'"),
        (lambda: api.SRNetTrainingArguments(output_dir=out, mask_learning_rate="a"),
         r"SRNetTrainingArguments: mask_learning_rate must be float or None, got str 'a'"),
        (lambda: api.register_loss(3), r"register_loss: its argument must be a subclass of DebiasingLoss, got int"),
        (lambda: api.register_pruning_method("x"), r"register_pruning_method: its argument must be a subclass of"),
        (lambda: api.register_evaluator(3), r"register_evaluator: its argument must be a subclass of Evaluator"),
        (lambda: api.register_objective(None), r"register_objective: its argument must be a subclass of StepObj"),
        (lambda: export_onnx(None, out), r"export_onnx: model_dir must be a path"),
        (lambda: export_compressed_tensors(out, 3), r"export_compressed_tensors: output_dir must be a path"),
        (lambda: read_compressed_tensors(None), r"read_compressed_tensors: path must be a path"),
    ]  # fmt: skip


def test_every_public_function_names_an_argument_of_the_wrong_type(tmp_path):
    for call, expected in _api_cases(tmp_path):
        _refused(call, expected)
    assert not (tmp_path / "out").exists()  # refused before anything was written


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("get_loss", r"Unknown loss 'nope'; available: \["),
        ("resolve_pruning", r"--pruning must be none or one of \[.*\], got 'nope'"),
        ("read_split", r"read_split: validation has neither a file nor a source: pass file=PATH"),
        ("from_pretrained", r"does not exist: give the folder SRNetModel\.save_pretrained wrote"),
        ("read_compressed_tensors", r"has no config\.json: give the folder run_export\.py --format compressed-tensors"),
        ("save_pretrained_model", r"save_pretrained_model: .*a_file is a file: give a folder"),  # saved nothing, rc 0
        ("fit_or_load", r"cache_root .*a_file is a file: give a folder"),  # a FileExistsError after the fit
    ],
)
def test_a_wrong_value_is_an_input_error_that_names_it(call, expected, tmp_path):
    """Raised as `InputError` (one line from a script): before, a ValueError, an OSError quoting the Hub client's
    repo-id rule for a missing local folder, or a FileNotFoundError on `config.json`."""
    import datasets

    import hf_srnets as api
    from hf_srnets.bias import fit_or_load_bias_predictions
    from hf_srnets.data import get_task
    from hf_srnets.data.splits import read_split
    from hf_srnets.export import read_compressed_tensors

    rows = datasets.Dataset.from_dict({"id": ["a"], "sentence1": ["x"], "sentence2": ["y"], "label": [0]})

    calls = {
        "get_loss": lambda: api.get_loss("nope"),
        "resolve_pruning": lambda: api.resolve_pruning("nope"),
        "read_split": lambda: read_split(get_task("mnli"), ["a", "b", "c"], name="validation"),
        "from_pretrained": lambda: SRNetModel.from_pretrained(tiny_model(), str(tmp_path / "missing")),
        "read_compressed_tensors": lambda: read_compressed_tensors(str(tmp_path)),
        "save_pretrained_model": lambda: api.save_pretrained_model(tiny_model(), str(a_file)),
        "fit_or_load": lambda: fit_or_load_bias_predictions(
            get_task("mnli"), rows, {}, cache_root=str(a_file), vectors=None, seed=42
        ),
    }
    a_file = tmp_path / "a_file"
    a_file.write_text("kept")
    with pytest.raises(InputError, match=expected):
        calls[call]()
    assert a_file.read_text() == "kept"
