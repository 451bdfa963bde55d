"""`hf_srnets.export.formats`: export formats are a registry like the other plugins (issue 73): one module that
registers an `ExportFormat` adds `--format NAME` to `run_export.py`, its options as a group of their own, its optional
packages checked before anything is written; one name per format everywhere."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import ClassVar

import pytest
from conftest import tiny_model

from export.helpers import save_classifier
from hf_srnets.commands.export import main
from hf_srnets.errors import InputError
from hf_srnets.export import EXPORT_FORMATS, EXPORT_REPORT_NAME, ExportFormat, register_export_format
from hf_srnets.export.extras import MissingExtraError


@dataclass
class CopyOptions:
    _argument_group_name: ClassVar[str] = "--format copy"

    suffix: str = field(default=".bin", metadata={"help": "copy: the copied file's suffix."})


def copy_export(model_dir: str, output_dir: str, *, suffix: str = ".bin") -> dict:
    report = {"format": "copy", "source": model_dir, "suffix": suffix}
    (__import__("pathlib").Path(output_dir) / EXPORT_REPORT_NAME).write_text(json.dumps(report))
    return report


@pytest.fixture
def copy_format(monkeypatch):
    """A format registered as a plugin would be (the registry restored after the test)."""
    monkeypatch.setattr("hf_srnets.export.formats.EXPORT_FORMATS", dict(EXPORT_FORMATS))
    import hf_srnets.arguments.export_arguments as cli
    import hf_srnets.export.formats as formats
    import hf_srnets.jobs.export as runner

    monkeypatch.setattr(cli, "EXPORT_FORMATS", formats.EXPORT_FORMATS)
    monkeypatch.setattr(runner, "EXPORT_FORMATS", formats.EXPORT_FORMATS)
    required = []
    fmt = ExportFormat("copy", "a test format", copy_export, lambda: required.append(1), CopyOptions)
    register_export_format(fmt)
    return required


def test_the_two_formats_are_registered_under_one_name_each():
    assert set(EXPORT_FORMATS) == {"onnx", "compressed-tensors"}
    for name, fmt in EXPORT_FORMATS.items():
        assert fmt.name == name and fmt.export.__name__ == "export_" + name.replace("-", "_")


def test_a_registered_format_is_an_option_of_run_export_with_its_options(copy_format, tmp_path):
    model = save_classifier(tiny_model("bert"), tmp_path / "model")
    report = main([str(model), "--format", "copy", "--suffix", ".pt", "--output_dir", str(tmp_path / "out")])
    assert report == {"format": "copy", "source": str(model), "suffix": ".pt"} and copy_format == [1]
    with pytest.raises(InputError, match=r"^--suffix would do nothing with --format onnx: .* use --format copy\.$"):
        main([str(model), "--format", "onnx", "--suffix", ".pt", "--output_dir", str(tmp_path / "o2")])
    with pytest.raises(InputError, match=r"^--opset would do nothing with --format copy"):
        main([str(model), "--format", "copy", "--opset", "18", "--output_dir", str(tmp_path / "o3")])


def test_a_taken_name_is_refused_and_a_missing_package_stops_before_writing(copy_format, tmp_path):
    with pytest.raises(ValueError, match=r"An export format named 'onnx' is already registered"):
        register_export_format(ExportFormat("onnx", "another", copy_export, lambda: None))

    def missing() -> None:
        raise MissingExtraError("--format lacking needs lacking-lib: pip install 'hf_srnets[lacking]'")

    register_export_format(ExportFormat("lacking", "needs a package", copy_export, missing))
    model = save_classifier(tiny_model("bert"), tmp_path / "model")
    with pytest.raises(MissingExtraError, match="hf_srnets\\[lacking\\]"):
        main([str(model), "--format", "lacking", "--output_dir", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()
