"""`hf_srnets.resources.auto_loading`: no command of hf_srnets asks to run a model's own code, or runs it (issue 70:
a folder of an unknown `model_type` with an `auto_map` made transformers ask "run the custom code? [y/N]" inside our
commands, and answering `y` ran the planted file); the refusal is one line naming the folder, its type and the way
out."""

from __future__ import annotations

import builtins
import json
from pathlib import Path

import pytest
import torch
from conftest import tiny_model
from training.helpers import tiny_tokenizer

from hf_srnets.errors import InputError, run_script

PLANTED = """from pathlib import Path
Path(__file__).with_name("RAN").write_text("the planted code ran")
from transformers import BertConfig, BertForSequenceClassification
class PlantedConfig(BertConfig):
    model_type = "plantedbert"
class PlantedModel(BertForSequenceClassification):
    config_class = PlantedConfig
"""


def saved_model(tmp_path: Path, model_type: str, auto_map: bool) -> Path:
    """A tiny BERT saved with its tokenizer, then given `model_type` (and an auto_map to a planted file)."""
    folder = tmp_path / model_type
    tiny_model("bert", 3).save_pretrained(folder)
    tiny_tokenizer(tmp_path).save_pretrained(folder)
    config = json.loads((folder / "config.json").read_text())
    config["model_type"] = model_type
    if auto_map:
        config["auto_map"] = {
            "AutoConfig": "planted.PlantedConfig",
            "AutoModelForSequenceClassification": "planted.PlantedModel",
        }
        (folder / "planted.py").write_text(PLANTED)
    (folder / "config.json").write_text(json.dumps(config))
    return folder


@pytest.fixture
def answering_yes(monkeypatch):
    """Every question transformers asks is recorded and answered "y" (what a user at a terminal might type)."""
    asked = []
    monkeypatch.setattr(builtins, "input", lambda prompt="": asked.append(prompt) or "y")
    return asked


def test_loading_a_folder_with_its_own_code_neither_asks_nor_runs_it(tmp_path, answering_yes, capsys):
    from hf_srnets import load_pretrained_model

    folder = saved_model(tmp_path, "plantedbert", auto_map=True)
    assert run_script(lambda: load_pretrained_model(str(folder))) == 2
    (line,) = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: {folder} is a model of type 'plantedbert' that transformers ")
    assert "never do" in line and "trust_remote_code=True" in line
    assert answering_yes == [] and not (folder / "RAN").exists()


def test_run_glue_sparse_refuses_it_before_any_work(tmp_path, answering_yes, capsys):
    from hf_srnets.commands.glue_sparse import main

    folder = saved_model(tmp_path, "plantedbert", auto_map=True)
    data = Path(__file__).parent / "fixtures" / "data"
    argv = ["--model_name_or_path", str(folder), "--output_dir", str(tmp_path / "out"), "--task", "sst2"]
    argv += ["--data_dir", str(data), "--do_train", "--max_train_samples", "8"]
    assert run_script(lambda: main(argv)) == 2
    assert not any((tmp_path / "out").glob("*"))  # nothing written
    assert "is a model of type 'plantedbert'" in capsys.readouterr().err
    assert answering_yes == [] and not (folder / "RAN").exists()


def test_a_type_transformers_does_not_know_is_named_in_one_line(tmp_path, answering_yes):
    from hf_srnets import load_pretrained_model

    folder = saved_model(tmp_path, "nosuchbert", auto_map=False)
    with pytest.raises(InputError, match=r"is a model of type 'nosuchbert' that transformers \S+ does not know: "):
        load_pretrained_model(str(folder))
    assert answering_yes == []


def test_known_types_and_compact_models_still_load(tmp_path, answering_yes):
    """A stock BERT and a compact SRNet (which carries an auto_map for plain transformers users) load as before."""
    from hf_srnets import compact_model, load_pretrained_model, save_pretrained_model

    folder = saved_model(tmp_path, "bert", auto_map=False)
    assert type(load_pretrained_model(str(folder))).__name__ == "BertForSequenceClassification"
    model = tiny_model("bert", 3)
    with torch.no_grad():  # FFN units 0-9 of layer 0 contribute 0: the compact model drops them
        model.bert.encoder.layer[0].intermediate.dense.weight[:10] = 0
        model.bert.encoder.layer[0].intermediate.dense.bias[:10] = 0
    assert compact_model(model)["ffn_units_removed"] == [10, 0]
    save_pretrained_model(model, str(tmp_path / "compact"))
    assert "auto_map" in json.loads((tmp_path / "compact" / "config.json").read_text())
    assert load_pretrained_model(str(tmp_path / "compact")).config.num_labels == 3
    assert answering_yes == []


def test_other_value_errors_pass_unchanged():
    from hf_srnets.resources.auto_loading import refusing_remote_code

    with pytest.raises(ValueError, match=r"^something else$"), refusing_remote_code("m"):
        raise ValueError("something else")
