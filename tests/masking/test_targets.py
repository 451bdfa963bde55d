"""`resolve_target_modules`: a selection that matches no linear layer is one `InputError` naming the option and the
layers there are (issue 33, round 4: a `ValueError` traceback from run_glue_sparse.py --target_modules)."""

from __future__ import annotations

import pytest
from conftest import tiny_model

from hf_srnets.errors import InputError
from hf_srnets.masking import resolve_target_modules


@pytest.mark.parametrize("spec", ["nothing_here.*", ["no_such_module"]])
def test_targets_matching_no_linear_layer_are_an_input_error_naming_some(spec):
    with pytest.raises(
        InputError,
        match=r"\(--target_modules\) matched no nn\.Linear layer of this "
        r"BertForSequenceClassification: give names or a regular expression .* e\.g\. "
        r"'bert\.encoder\.layer\.0\.attention\.self\.query'",
    ):
        resolve_target_modules(tiny_model("bert"), "bert", spec, True, None)


def test_an_unknown_architecture_without_targets_is_an_input_error():
    with pytest.raises(InputError, match=r"No default pruning targets for model_type='gpt9'"):
        resolve_target_modules(tiny_model("bert"), "gpt9", None, True, None)
