"""run_bias_model.py and run_glue_sparse.py declare their shared task/data options once (`TaskDataArguments`)."""

import dataclasses
import inspect

from transformers import HfArgumentParser

from hf_srnets.arguments.bias_model_arguments import BiasModelArguments
from hf_srnets.arguments.model_data_arguments import DataArguments, TaskDataArguments

SHARED = {"task", "data_dir", "train_file", "task_labels", "bias_model", "ood_file", "ood_labels", "max_train_samples"}


def test_both_scripts_take_the_task_options_from_one_declaration():
    assert {f.name for f in dataclasses.fields(TaskDataArguments)} == SHARED
    for script_args in (DataArguments, BiasModelArguments):
        assert issubclass(script_args, TaskDataArguments)
        assert not SHARED & set(inspect.get_annotations(script_args))  # not declared again


def test_run_bias_model_flags_are_unchanged():
    (parsed,) = HfArgumentParser(BiasModelArguments).parse_args_into_dataclasses(
        ["--task", "fever", "--predict_file", "dev=d.jsonl", "--ood_file", "x=y.tsv", "--output_dir", "o", "--C", "1"]
    )
    assert parsed.ood_file == ["dev=d.jsonl", "x=y.tsv"] and parsed.C == 1.0 and parsed.output_dir == "o"
