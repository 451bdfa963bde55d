"""run_extract_ticket.py: several tickets from one l0 search in one go, their sparsities, and clear refusals."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import pytest
import torch
from conftest import tiny_model

from hf_srnets.commands import extract_ticket as extract_ticket_cli
from hf_srnets.errors import InputError
from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import ThresholdConfig
from hf_srnets.pruning.l0 import L0Config


def load_script():
    """The package module the script runs."""
    return extract_ticket_cli


@pytest.fixture
def search(tmp_path) -> Path:
    srnet = SRNetModel(tiny_model("bert"), L0Config(sparsity=0.5))
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for layer in srnet.masked_layers().values():
            layer.log_alpha.copy_(torch.randn(layer.log_alpha.shape, generator=generator).round())  # with ties
    srnet.save_pretrained(tmp_path / "search")
    return tmp_path / "search"


@pytest.mark.parametrize("scope", ["global", "local"])
def test_writes_one_ticket_per_sparsity(search, tmp_path, scope):
    out = tmp_path / "tickets"
    argv = [str(search), "--sparsity", "0.1", "0.3", "0.5", "--scope", scope, "--output_dir", str(out)]
    reports = load_script().main(argv)
    assert sorted(reports) == ["sparsity_0.10", "sparsity_0.30", "sparsity_0.50"]
    summary = json.loads((out / "tickets.json").read_text())
    assert summary["search_dir"] == str(search) and summary["tickets"].keys() == reports.keys()
    for name, sparsity in [("sparsity_0.10", 0.1), ("sparsity_0.30", 0.3), ("sparsity_0.50", 0.5)]:
        config = json.loads((out / name / "srnet_config.json").read_text())
        assert (config["sparsity"], config["sparsity_scope"], config["ticket_source"]) == (sparsity, scope, str(search))
        masks = SRNetModel.from_pretrained(tiny_model("bert"), out / name).binary_masks()
        if scope == "global":
            total = sum(m.numel() for m in masks.values())
            assert sum(int((~m).sum()) for m in masks.values()) == math.floor(sparsity * total)
        else:
            assert all(int((~m).sum()) == math.floor(sparsity * m.numel()) for m in masks.values())
        assert reports[name]["sparsity"] == pytest.approx(sparsity, abs=0.01)


def test_refuses_a_non_l0_dir_and_bad_options(tmp_path):
    other = tmp_path / "mask"
    SRNetModel(tiny_model("bert"), ThresholdConfig()).save_pretrained(other)
    script = load_script()
    with pytest.raises(ValueError, match="not of an l0 search"):
        script.main([str(other), "--sparsity", "0.3", "--output_dir", str(tmp_path / "t")])
    assert not (tmp_path / "t").exists()
    with pytest.raises(ValueError, match="--sparsity values must be in"):
        script.main([str(other), "--sparsity", "1.5", "--output_dir", str(tmp_path / "t")])


def test_logs_each_tickets_actual_sparsity(search, tmp_path, caplog):
    with caplog.at_level(logging.INFO):
        load_script().main([str(search), "--sparsity", "0.2", "--output_dir", str(tmp_path / "o")])
    assert "sparsity_0.20: requested 0.2000, actual 0.2000 (global)" in caplog.text


def test_a_reused_output_dir_keeps_the_record_of_earlier_tickets_and_refuses_other_searches(search, tmp_path):
    script, out = load_script(), tmp_path / "tickets"
    script.main([str(search), "--sparsity", "0.1", "0.3", "--output_dir", str(out)])
    script.main([str(search), "--sparsity", "0.5", "--output_dir", str(out)])
    assert sorted(json.loads((out / "tickets.json").read_text())["tickets"]) == [
        "sparsity_0.10",
        "sparsity_0.30",
        "sparsity_0.50",
    ]
    with pytest.raises(ValueError, match="another --scope"):
        script.main([str(search), "--sparsity", "0.3", "--scope", "local", "--output_dir", str(out)])
    other = tmp_path / "other_search"
    other.mkdir()
    for path in search.iterdir():
        (other / path.name).write_bytes(path.read_bytes())
    with pytest.raises(ValueError, match="another search"):
        script.main([str(other), "--sparsity", "0.3", "--output_dir", str(out)])
    script.main([str(other), "--sparsity", "0.3", "--output_dir", str(out), "--overwrite_output_dir", "true"])
    assert sorted(json.loads((out / "tickets.json").read_text())["tickets"]) == ["sparsity_0.30"]
    assert sorted(p.name for p in out.iterdir()) == ["sparsity_0.30", "tickets.json"]  # the other search's are gone
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"holds no tickets\.json"):
        script.main([str(search), "--sparsity", "0.3", "--output_dir", str(stray)])


def test_a_second_extraction_into_a_dir_in_use_is_refused_and_writes_nothing(search, tmp_path):
    from hf_srnets.training.output_dir import OutputDirError, acquire_lock

    script, out = load_script(), tmp_path / "tickets"
    lock = acquire_lock(str(out))  # another extraction (or run) is writing there
    try:
        with pytest.raises(OutputDirError, match="Another run is using --output_dir"):
            script.main([str(search), "--sparsity", "0.5", "--output_dir", str(out)])
        assert [p.name for p in out.iterdir()] == [".hf_srnets.lock"]  # no ticket, no tickets.json
    finally:
        lock.release()
    script.main([str(search), "--sparsity", "0.5", "--output_dir", str(out)])  # its lock does not make it "not empty"
    assert sorted(p.name for p in out.iterdir()) == ["sparsity_0.50", "tickets.json"]


@pytest.mark.parametrize("text", ["", '{"search_dir": "s", "tick', '{"tickets": []}'])
def test_a_cut_tickets_json_is_one_line_naming_it_and_the_fix(search, tmp_path, text):
    script, out = load_script(), tmp_path / "tickets"
    script.main([str(search), "--sparsity", "0.1", "--output_dir", str(out)])
    (out / "tickets.json").write_text(text)
    with pytest.raises(InputError) as error:
        script.main([str(search), "--sparsity", "0.3", "--output_dir", str(out)])
    assert str(error.value).startswith(f"{out / 'tickets.json'} is empty, cut or not a record of tickets")
    assert "--overwrite_output_dir" in str(error.value) and "\n" not in str(error.value)
    script.main([str(search), "--sparsity", "0.3", "--output_dir", str(out), "--overwrite_output_dir", "true"])
    assert list(json.loads((out / "tickets.json").read_text())["tickets"]) == ["sparsity_0.30"]


def test_tickets_json_written_while_the_disk_fills_up_keeps_the_previous_record(search, tmp_path, monkeypatch):
    script, out = load_script(), tmp_path / "tickets"
    script.main([str(search), "--sparsity", "0.1", "--output_dir", str(out)])
    before = (out / "tickets.json").read_text()
    dump = json.dump

    def full_disk(data, f, **options):
        if "tickets" not in data:  # the ticket's own files are written
            return dump(data, f, **options)
        f.write('{"search_dir": ')
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(json, "dump", full_disk)
    with pytest.raises(OSError, match="No space left"):
        script.main([str(search), "--sparsity", "0.3", "--output_dir", str(out)])
    assert (out / "tickets.json").read_text() == before
    assert (out / "sparsity_0.30").is_dir()  # the failure came from the record
