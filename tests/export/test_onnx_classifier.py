"""An ONNX export evaluated as a run's model (`hf_srnets.export.onnx_classifier`, issue 71): `run_glue_sparse.py
--model_name_or_path ONNX_DIR --do_eval` writes the same results and per-example files as the PyTorch model it was
exported from (the float graph: the same predicted label on every example, probabilities to 1e-4; the INT8 graph:
its own), and anything that would train, prune or load it as PyTorch weights is refused naming the fix."""

from __future__ import annotations

import json

import pytest
from conftest import mnli_run_args, tiny_model

from hf_srnets import load_pretrained_model
from hf_srnets.commands.glue_sparse import main
from hf_srnets.errors import InputError
from hf_srnets.export import export_onnx

from .helpers import lively, save_classifier

LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    root = tmp_path_factory.mktemp("onnx_eval")
    model = lively(tiny_model("bert", 3))
    model.config.id2label, model.config.label2id = LABELS, {v: k for k, v in LABELS.items()}
    source = save_classifier(model, root / "model")
    export_onnx(str(source), str(root / "float"))
    export_onnx(str(source), str(root / "int8"), quantize="int8")
    return root


def evaluate(model_dir, data_dir, out, *extra) -> dict:
    main(mnli_run_args(model_dir, data_dir, out, "--do_eval", *extra, train=8, eval=64, ood=64))
    return json.loads((out / "all_results.json").read_text())


def rows(out, name: str) -> list[dict]:
    return [json.loads(line) for line in (out / "eval_predictions" / f"{name}.jsonl").read_text().splitlines()]


def test_the_float_graph_evaluates_as_its_pytorch_model(exports, data_dir, tmp_path):
    torch_results = evaluate(exports / "model", data_dir, tmp_path / "torch")
    onnx_results = evaluate(exports / "float", data_dir, tmp_path / "onnx")
    for name in ("mnli", "hans"):
        expected, got = rows(tmp_path / "torch", name), rows(tmp_path / "onnx", name)
        assert [r["id"] for r in got] == [r["id"] for r in expected]
        assert [r["prediction"] for r in got] == [r["prediction"] for r in expected], name
        assert all(
            abs(g["probabilities"][k] - e["probabilities"][k]) <= 1e-4
            for g, e in zip(got, expected)
            for k in e["probabilities"]
        )
        key = f"eval_{name}_accuracy"
        assert onnx_results[key] == torch_results[key]
    assert onnx_results["onnx_export"]["format"] == "onnx" and onnx_results["onnx_export"]["quantize"] == "none"
    card = (tmp_path / "onnx" / "README.md").read_text()  # it trained nothing: the card does not say it did
    assert "An evaluation of the ONNX export `float` on **MNLI**: this run trained nothing" in card
    assert "trained with the" not in card
    torch_card = (tmp_path / "torch" / "README.md").read_text()
    assert "An evaluation of the model `" in torch_card and "trained with the" not in torch_card


def test_the_int8_graph_gets_its_own_per_example_files(exports, data_dir, tmp_path):
    results = evaluate(exports / "int8", data_dir, tmp_path / "int8")
    assert results["onnx_export"]["quantize"] == "int8" and results["eval_mnli_examples"] == 64
    assert len(rows(tmp_path / "int8", "mnli")) == 64 and len(rows(tmp_path / "int8", "hans")) == 64


def test_what_would_train_prune_or_load_it_as_pytorch_is_refused(exports, data_dir, tmp_path):
    with pytest.raises(
        InputError, match=r"is an ONNX export, which a run evaluates only \(--do_eval\): drop --do_train"
    ):
        main(mnli_run_args(exports / "float", data_dir, tmp_path / "t", "--do_train", train=8, eval=8, ood=8))
    with pytest.raises(InputError, match=r"drop (--do_train, )?--pruning"):
        evaluate(exports / "float", data_dir, tmp_path / "p", "--pruning", "magnitude-oneshot", "--sparsity", "0.5")
    with pytest.raises(InputError, match=r"is an ONNX export \(model\.onnx, no PyTorch weights\): .* --do_eval"):
        load_pretrained_model(str(exports / "int8"))
