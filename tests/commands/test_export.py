"""`python -m hf_srnets.commands.export` (and `run_export.py`): a good run of each format writes the model, its
config, tokenizer and report; a missing optional package, a folder that is no model, options of the other format and
a non-empty output dir are one-line errors naming the fix."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import tiny_model
from export.helpers import lively, merged_srnet, save_classifier
from prewarmed import SERVER_ENV, run_python

from hf_srnets.commands.export import main
from hf_srnets.errors import InputError, run_script
from hf_srnets.export import EXPORT_REPORT_NAME, MissingExtraError
from hf_srnets.export import onnx as onnx_export

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def nm_model(tmp_path) -> Path:
    """A merged 2:4 SRNet with its tokenizer."""
    return save_classifier(merged_srnet(lively(tiny_model("bert")), "nm", 0.5), tmp_path / "merged")


def test_an_onnx_export_writes_the_graph_config_tokenizer_and_report(nm_model, tmp_path):
    out = tmp_path / "onnx"
    report = main([str(nm_model), "--format", "onnx", "--output_dir", str(out)])
    assert {p.name for p in out.iterdir() if not p.name.startswith(".")} >= {
        "model.onnx", "config.json", "tokenizer_config.json", EXPORT_REPORT_NAME
    }  # fmt: skip
    assert json.loads((out / EXPORT_REPORT_NAME).read_text()) == report
    assert report["format"] == "onnx" and report["max_abs_diff"] <= 1e-4
    assert set(report) >= {"seconds", "file_bytes", "onnxruntime_version", "opset"}


def test_a_compressed_tensors_export_writes_the_checkpoint_and_report(nm_model, tmp_path):
    out = tmp_path / "ct"
    report = main([str(nm_model), "--format", "compressed-tensors", "--output_dir", str(out)])
    assert report["sparsity_format"] == "sparse-24-bitmask" and report["identical_after_reading_back"]
    config = json.loads((out / "config.json").read_text())
    assert config["quantization_config"]["sparsity_config"]["format"] == "sparse-24-bitmask"
    assert json.loads((out / EXPORT_REPORT_NAME).read_text()) == report
    bitmask = main([str(nm_model), "--format", "compressed-tensors", "--sparsity_format", "bitmask",
                    "--output_dir", str(tmp_path / "bitmask")])  # fmt: skip
    assert bitmask["sparsity_format"] == "sparse-bitmask"


@pytest.mark.parametrize(
    ("missing", "form", "message"),
    [
        ("onnxruntime", "onnx", "--format onnx needs onnx and onnxruntime .*: pip install 'hf_srnets\\[onnx\\]'"),
        (
            "compressed_tensors",
            "compressed-tensors",
            "--format compressed-tensors needs compressed-tensors .*: pip install 'hf_srnets\\[compressed-tensors\\]'",
        ),
    ],
    ids=["onnx", "compressed-tensors"],
)
def test_a_missing_optional_package_is_one_line_naming_the_extra(
    nm_model, tmp_path, monkeypatch, capsys, missing, form, message
):
    monkeypatch.setitem(sys.modules, missing, None)  # `import <missing>` raises ImportError, as if not installed
    argv = [str(nm_model), "--format", form, "--output_dir", str(tmp_path / "out")]
    with pytest.raises(MissingExtraError, match=message):
        main(argv)
    assert not (tmp_path / "out").exists()  # refused before writing anything
    assert run_script(lambda: main(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and len(err.splitlines()) == 1 and f"hf_srnets[{form}]" in err


def test_a_folder_that_is_no_model_gives_the_loader_s_error(tmp_path):
    (tmp_path / "notes").mkdir()
    with pytest.raises(InputError, match=r"model_dir .*notes has no config\.json, so it is not a saved model"):
        main([str(tmp_path / "notes"), "--format", "onnx", "--output_dir", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()


def test_options_of_the_other_format_and_a_non_empty_output_dir_are_refused(nm_model, tmp_path):
    out = str(tmp_path / "out")
    with pytest.raises(InputError, match="--sparsity_format would do nothing with --format onnx"):
        main([str(nm_model), "--format", "onnx", "--sparsity_format", "2:4", "--output_dir", out])
    with pytest.raises(InputError, match="--opset would do nothing with --format compressed-tensors"):
        main([str(nm_model), "--format", "compressed-tensors", "--opset", "18", "--output_dir", out])
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "model.onnx").write_text("old")
    with pytest.raises(InputError, match="is not empty: use another --output_dir, or --overwrite_output_dir true"):
        main([str(nm_model), "--format", "onnx", "--output_dir", out])
    with pytest.raises(InputError, match="is the model's own folder"):
        main([str(nm_model), "--format", "onnx", "--output_dir", str(nm_model)])


@pytest.mark.parametrize(
    ("fmt", "linked"),
    [("onnx", ["model.onnx", "config.json"]), ("compressed-tensors", ["model.safetensors", "config.json"])],
)
def test_links_in_the_output_dir_are_replaced_never_written_through(nm_model, tmp_path, fmt, linked):
    """Issue 70 (lost): a link named as a file the export writes, placed in --output_dir, made the export write into
    the file it points to, anywhere. Now the name is replaced and the file elsewhere stays as it was."""
    out = tmp_path / "out"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name in linked:
        (elsewhere / name).write_text(f"someone's {name}")
        (out / name).symlink_to(elsewhere / name)
    main([str(nm_model), "--format", fmt, "--output_dir", str(out), "--overwrite_output_dir", "true"])
    for name in linked:
        assert (elsewhere / name).read_text() == f"someone's {name}", name
        assert (out / name).is_file() and not (out / name).is_symlink(), name


@pytest.mark.parametrize("fmt", ["onnx", "compressed-tensors"])
def test_an_output_dir_that_links_to_the_model_is_the_model_s_folder(nm_model, tmp_path, fmt):
    """Issue 70 (lost): --output_dir a link to the model folder passed the "same folder" check and the export wrote
    over the source; the real paths are compared, by the command and by the Python API alike."""
    from hf_srnets.export import export_compressed_tensors, export_onnx

    before = {p.name: p.read_bytes() for p in nm_model.iterdir() if p.is_file()}
    link = tmp_path / "link"
    link.symlink_to(nm_model, target_is_directory=True)
    with pytest.raises(InputError, match=r"is the model's own folder \(through a link\): the export would overwrite"):
        main([str(nm_model), "--format", fmt, "--output_dir", str(link), "--overwrite_output_dir", "true"])
    exporter = export_onnx if fmt == "onnx" else export_compressed_tensors
    with pytest.raises(InputError, match=r"is the model's own folder .* \(its real path\)"):
        exporter(str(nm_model), str(link))
    assert {p.name: p.read_bytes() for p in nm_model.iterdir() if p.is_file()} == before


def test_a_compressed_export_loaded_as_a_model_is_refused_not_evaluated_with_random_layers(nm_model, tmp_path):
    """Issue 70 (silent): `load_pretrained_model` (and so `run_glue_sparse.py --model_name_or_path`) on a
    compressed-tensors export loaded its compressed layers as new random weights and evaluated them. Now one line
    names the folder, a missing body weight and the fix; the source it was exported from loads as before."""
    from hf_srnets import load_pretrained_model

    out = tmp_path / "ct"
    main([str(nm_model), "--format", "compressed-tensors", "--output_dir", str(out)])
    with pytest.raises(
        InputError, match=rf"^{out}: \d+ weights of the model's body are not in its weights file \(e\.g\. "
    ):
        load_pretrained_model(str(out))
    with pytest.raises(
        InputError, match=r"it is a compressed checkpoint .* load the merged model it was exported from"
    ):
        load_pretrained_model(str(out), num_labels=3)
    load_pretrained_model(str(nm_model))


@pytest.mark.parametrize("opset", ["5", "9", "99"])
def test_an_opset_the_exporter_cannot_use_is_refused_before_loading(nm_model, tmp_path, monkeypatch, capsys, opset):
    monkeypatch.setattr(onnx_export, "load_pretrained_model", lambda *a: pytest.fail("the model was loaded"))
    argv = [str(nm_model), "--format", "onnx", "--opset", opset, "--output_dir", str(tmp_path / "out")]
    assert run_script(lambda: main(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: --opset must be in 14-{onnx_export.MAX_OPSET} ") and f"got {opset}" in err
    assert len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_an_export_that_fails_leaves_no_empty_output_dir(nm_model, tmp_path, monkeypatch):
    def unsupported(*args, **kwargs):
        raise onnx_export.torch.onnx.errors.UnsupportedOperatorError("aten::foo", 14, 18)

    monkeypatch.setattr(onnx_export.torch.onnx, "export", unsupported)
    with pytest.raises(InputError, match=r"--opset 14 cannot export .*: .*--opset 17"):
        main([str(nm_model), "--format", "onnx", "--opset", "14", "--output_dir", str(tmp_path / "new" / "out")])
    assert not (tmp_path / "new" / "out").exists()
    (tmp_path / "kept").mkdir()  # a folder the user made is kept
    with pytest.raises(InputError, match="cannot export"):
        main([str(nm_model), "--format", "onnx", "--opset", "14", "--output_dir", str(tmp_path / "kept")])
    assert (tmp_path / "kept").is_dir()


@pytest.mark.slow  # starts a process (a fork of the warm test server): the project marks those slow
def test_the_script_reports_a_refusal_as_one_line(tmp_path):
    dense = save_classifier(tiny_model("bert"), tmp_path / "dense")
    result = run_python(
        ROOT / "run_export.py", dense, "--format", "compressed-tensors", "--output_dir", tmp_path / "out",
        env={**os.environ, **SERVER_ENV, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert result.returncode == 2, result.stderr[-2000:]
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "has no sparse nn.Linear weight" in last and "--format onnx" in last


@pytest.mark.parametrize(
    ("exporter", "option", "error"),
    [
        ("export_onnx", {"tolerance": "1e-4"}, r"tolerance must be a number above 0, got '1e-4'"),
        ("export_onnx", {"tolerance": float("nan")}, r"tolerance must be a number above 0, got nan"),
        ("export_compressed_tensors", {"min_sparsity": 5}, r"min_sparsity must be in \[0, 1\], got 5"),
    ],
)
def test_python_api_export_options_are_checked_before_any_work(nm_model, tmp_path, exporter, option, error):
    """Issue 70: `export_onnx(..., tolerance="1e-4")` and `export_compressed_tensors(..., min_sparsity=5)` were not
    checked before the work (an empty folder was left); now one line, and no folder."""
    from hf_srnets import export

    out = tmp_path / "out"
    with pytest.raises(InputError, match=error):
        getattr(export, exporter)(str(nm_model), str(out), **option)
    assert not out.exists()


@pytest.mark.parametrize("fmt", ["onnx", "compressed-tensors"])
def test_a_model_with_nan_weights_is_refused_before_any_file_is_written(nm_model, tmp_path, fmt):
    """Issue 70: NaN weights ended in a traceback that blamed the exporter, and the compressed-tensors export left
    files it had not checked; now one line naming the weight, and nothing written."""
    import re

    import torch
    from safetensors.torch import load_file, save_file

    weights = load_file(str(nm_model / "model.safetensors"))
    name = next(k for k in weights if k.endswith("attention.self.query.weight"))
    weights[name][0, 0] = float("nan")
    save_file(weights, str(nm_model / "model.safetensors"), metadata={"format": "pt"})
    out = tmp_path / "out"
    with pytest.raises(InputError, match=rf"has non-finite weights \({re.escape(name)} holds NaN or infinity\)"):
        main([str(nm_model), "--format", fmt, "--output_dir", str(out)])
    assert not out.exists() or not [p for p in out.iterdir() if not p.name.startswith(".")]
    assert torch.isnan(load_file(str(nm_model / "model.safetensors"))[name]).any()  # the source as it was
