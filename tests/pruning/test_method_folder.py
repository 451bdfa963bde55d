"""A new pruning method with one option is one folder of three files, `__init__.py`, `config.py` and `method.py`, and
nothing else (issue 51: it used to take 5 new files plus edits to `pruning/__init__.py` and `resources/citations.py`):
the masked layer (`pruning/masked_linear.py`), the one-shot callback (`pruning/oneshot.py`), the magnitude selection
(`pruning/magnitude_masks.py`), the schedule (`pruning/schedule.py`), the granularities and the card's settings
are shared or derived. The folder is written here, into a directory the `hf_srnets.pruning` package also searches,
and imported as `hf_srnets.pruning.<name>` would be from the package."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import pytest

import hf_srnets.pruning
from hf_srnets.arguments import build_parser
from hf_srnets.pruning import PRUNING_METHODS, unregister_pruning_method
from hf_srnets.pruning.base import CardContext

FOLDER = {
    "__init__.py": '''
        """`toy_rounds`: the smallest |W| of each matrix pruned once, in k rounds of s/k (a fixture of shared parts)."""
        from .config import ToyConfig
        from .method import ToyPruning

        __all__ = ["ToyConfig", "ToyPruning"]
    ''',
    "config.py": """
        from dataclasses import dataclass, field

        from hf_srnets.errors import InputError
        from hf_srnets.pruning import PruningConfig


        @dataclass
        class ToyConfig(PruningConfig):
            toy_rounds: int = field(default=2, metadata={"help": "Magnitude rounds k, each of s/k."})

            def validate(self):
                super().validate()
                if self.toy_rounds < 1:
                    raise InputError(f"--toy_rounds must be >= 1, got {self.toy_rounds}")
    """,
    "method.py": '''
        from hf_srnets.pruning import MaskedLinear, PruningMethod, register_pruning_method
        from hf_srnets.pruning.magnitude_masks import magnitude_prune
        from hf_srnets.pruning.oneshot import OneShotCallback, keep_all
        from hf_srnets.pruning.schedule import staircase_value

        from .config import ToyConfig


        @register_pruning_method
        class ToyPruning(PruningMethod):
            """k magnitude rounds of s/k at step 0, weights kept: a method of shared parts only."""

            name = "toy_rounds"
            config_class = ToyConfig
            layer_class = MaskedLinear
            trains_scores = False
            granularities = ("element", "neuron")

            def initialize(self, srnet):
                srnet.train_weights_with_fixed_masks()

            def callbacks(self, srnet):
                if not srnet.is_search:
                    return super().callbacks(srnet)
                k, s = self.config.toy_rounds, self.config.sparsity

                def choose(model, batches):
                    keep_all(model)
                    for done in range(1, k + 1):
                        magnitude_prune(model, staircase_value(done, s / k))
                    return model.binary_masks()

                return [OneShotCallback(srnet, choose)]
    ''',
}


@pytest.fixture
def method_folder(tmp_path, monkeypatch):
    folder = tmp_path / "toy_rounds"
    folder.mkdir()
    for name, text in FOLDER.items():
        (folder / name).write_text(textwrap.dedent(text).lstrip())
    monkeypatch.setattr(hf_srnets.pruning, "__path__", [*hf_srnets.pruning.__path__, str(tmp_path)])
    assert "toy_rounds" not in PRUNING_METHODS
    module = importlib.import_module("hf_srnets.pruning.toy_rounds")
    yield module
    unregister_pruning_method("toy_rounds")
    for name in [m for m in sys.modules if m.startswith("hf_srnets.pruning.toy_rounds")]:
        del sys.modules[name]


def test_a_method_of_one_folder_gets_its_flag_granularities_and_card_settings(method_folder):
    files = {p.name for p in Path(method_folder.__file__).parent.iterdir() if p.suffix == ".py"}
    assert files == set(FOLDER)
    help_text = build_parser().format_help()
    assert "--toy_rounds" in help_text and "Magnitude rounds k, each of s/k." in help_text
    method = PRUNING_METHODS["toy_rounds"]
    assert method.granularities == ("element", "neuron")
    config = method_folder.ToyConfig(sparsity=0.5, toy_rounds=3, mask_granularity="neuron")
    settings = method.card_settings(config, CardContext())
    assert settings["toy_rounds"] == 3 and settings["sparsity"] == 0.5  # derived from the config's fields
    with pytest.raises(ValueError, match="--toy_rounds must be >= 1"):
        method_folder.ToyConfig(sparsity=0.3, toy_rounds=0)


def test_a_method_of_one_folder_keeps_the_contract_of_every_method(method_folder, tmp_path):
    """Its masks go through the built-in methods' contract (`test_method_contract.check_method_contract`): exactly
    ⌊s·n⌋ of each matrix pruned after its 3 rounds, saved, reloaded, merged and resumed as every method's."""
    from pruning.test_method_contract import check_method_contract

    config = lambda: method_folder.ToyConfig(sparsity=0.5, toy_rounds=3)  # noqa: E731
    check_method_contract("toy_rounds", "element", "bert", tmp_path, config=config)
