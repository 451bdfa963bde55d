"""Model cards say what was run: the data as read, the effective settings, and a load snippet that runs."""

import re
import sys
from pathlib import Path

import pytest
import torch
from conftest import mnli_run_args, tiny_model
from huggingface_hub import HfApi, ModelCard
from transformers import AutoModelForSequenceClassification

from hf_srnets.data import get_task
from hf_srnets.data.tasks import TASKS
from hf_srnets.masking.hub_upload import HubUploadError
from hf_srnets.publish.card import portable_card, structure_section
from hf_srnets.publish.card_data import DataSources, card_dataset, describe_split, describe_splits
from hf_srnets.publish.card_facts import base_weights
from hf_srnets.publish.card_usage import portable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))
from helpers import tiny_tokenizer

import run_glue_sparse

MNLI_LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}


@pytest.fixture
def finetuned(tmp_path):
    """A classifier already fine-tuned on MNLI (3 labels, named)."""
    path = tmp_path / "finetuned"
    model = tiny_model("bert")
    model.config.id2label, model.config.label2id = MNLI_LABELS, {v: k for k, v in MNLI_LABELS.items()}
    model.save_pretrained(path)
    tiny_tokenizer(path).save_pretrained(path)
    return path


def _run(base, data_dir, out, *extra):
    args = mnli_run_args(
        base, data_dir, out, "--max_steps", "2", "--do_train", *extra, train=24, eval=16, ood=30, batch=8
    )
    return run_glue_sparse.main(args)


def _snippet(card: str) -> str:
    match = re.search(r"## How to load\n\n```python\n(.*?)\n```", card, re.S)
    assert match, card
    return match[1]


def _load_with_snippet(card: str, replace: dict[str, str] | None = None):
    code = _snippet(card)
    for old, new in (replace or {}).items():
        code = code.replace(old, new)
    scope: dict = {}
    exec(code, scope)  # the card's own code, as a user would paste it
    return scope["model"].eval(), scope["tokenizer"]


def _logits(model, tokenizer):
    batch = tokenizer(["w3 w4 w5 w6", "w7 w8"], ["w9 w3", "w10 w11 w12"], padding=True, return_tensors="pt")
    with torch.no_grad():
        return model(**batch).logits


def test_card_of_a_search_on_a_pretrained_model_loads_and_states_the_run(pretrained, data_dir, tmp_path):
    out = tmp_path / "mask"
    _run(pretrained, data_dir, out, "--pruning", "mask", "--sparsity", "0.5", "--save_merged")
    card = (out / "README.md").read_text()

    # the snippet gives the base a 3-way head with the run's labels; the trained classifier comes from the masks
    model, tokenizer = _load_with_snippet(card)
    merged = AutoModelForSequenceClassification.from_pretrained(out / "merged").eval()
    assert model.config.id2label == MNLI_LABELS
    assert torch.allclose(_logits(model, tokenizer), _logits(merged, tokenizer), atol=1e-5)
    # the merged card's snippet loads the same model
    merged_card = (out / "merged" / "README.md").read_text()
    again, _ = _load_with_snippet(merged_card)
    assert torch.allclose(_logits(again, tokenizer), _logits(merged, tokenizer), atol=1e-5)

    # what the repo holds, and the effective settings (Δt_φ defaulted to 1000; the classifier trained)
    assert "masks only" not in card and "classifier trained with them" in card
    assert "| threshold_update_interval | 1000 |" in card and "| trainable_classifier | True |" in card
    assert "threshold updated every 1000 steps" in card and "| None |" not in card

    # the data as read: the training file by name, subsets with their size, no model-index claim for them
    assert "local file `dev_mismatched.tsv` | first 24 of 9,832 rows (--max_train_samples 24)" in card
    assert "`mnli/dev_matched.tsv` under `--data_dir`" in card
    assert "first 16 of 9,815 rows (--max_eval_samples 16)" in card
    assert "30 of 30,000 rows, evenly spaced (--max_ood_samples 30)" in card
    data = ModelCard(card).data.to_dict()
    assert "model-index" not in data and "datasets" not in data

    # uploaded later (python -m hf_srnets.commands.push_to_hub): the local card is made portable for the repo
    hub_card = portable_card(card, output_dir=str(out), repo_id="someone/srnet", base=str(pretrained))
    assert str(tmp_path) not in hub_card and 'SRNetModel.from_pretrained(base, "someone/srnet")' in hub_card
    assert '"pretrained", num_labels=3' in hub_card.replace("\n    ", "")
    assert "validation_matched" not in yaml_header(card)


def yaml_header(card: str) -> str:
    return card.split("---")[1]


def test_card_for_the_hub_has_no_local_paths_and_names_the_repo(finetuned, data_dir, tmp_path, monkeypatch):
    def offline(self, *args, **kwargs):
        raise OSError("Name or service not known")

    monkeypatch.setattr(HfApi, "create_repo", offline)
    out = tmp_path / "mask_hub"
    with pytest.raises(HubUploadError):
        _run(
            finetuned,
            data_dir,
            out,
            "--pruning",
            "mask",
            "--sparsity",
            "0.3",
            "--threshold_update_interval",
            "7",
            "--push_to_hub",
            "true",
            "--hub_model_id",
            "someone/tiny-srnet",
        )
    card = (out / "README.md").read_text()
    assert str(tmp_path) not in card and "/tmp" not in card
    assert 'SRNetModel.from_pretrained(base, "someone/tiny-srnet")' in card
    assert '"finetuned"' in card and "`finetuned` was a local checkpoint" in card  # which base weights are needed
    assert "| threshold_update_interval | 7 |" in card and "masks only" in card
    assert "base_model" not in ModelCard(card).data.to_dict()  # a local dir is no Hub base model
    # the snippet is right once the names point at the files
    model, _ = _load_with_snippet(card, {'"someone/tiny-srnet"': f'"{out}"', '"finetuned"': f'"{finetuned}"'})
    assert model.config.id2label == MNLI_LABELS
    for name, module in model.named_modules():
        if name.endswith("attention.self.query"):
            assert abs((module.weight == 0).float().mean().item() - 0.3) < 0.01


def test_card_of_a_fine_tuned_model_loads(finetuned, data_dir, tmp_path):
    out = tmp_path / "full"
    _run(finetuned, data_dir, out)
    card = (out / "README.md").read_text()
    model, tokenizer = _load_with_snippet(card)
    assert model.config.id2label == MNLI_LABELS
    saved = AutoModelForSequenceClassification.from_pretrained(out).eval()
    assert torch.allclose(_logits(model, tokenizer), _logits(saved, tokenizer))
    assert "Not pruned." in card and "| sparsity |" not in card


@pytest.mark.parametrize("kind", ["early_start", "imp", "mask_from"])
def test_card_snippet_loads_the_saved_model_of_each_paradigm(kind, finetuned, data_dir, tmp_path):
    out = tmp_path / kind
    if kind == "early_start":  # masks searched on <out>/early_start, not on the given checkpoint
        flags = ["--pruning", "mask", "--early_start_patience", "1", "--eval_strategy", "steps", "--eval_steps", "1"]
    elif kind == "imp":
        flags = ["--pruning", "imp", "--sparsity", "0.2", "--imp_prune_ratio", "0.1", "--imp_interval", "0.25"]
    else:  # paradigm (b): all weights fine-tuned under the fixed masks of an earlier search
        _run(finetuned, data_dir, tmp_path / "search", "--pruning", "mask", "--sparsity", "0.4")
        flags = ["--mask_from", str(tmp_path / "search")]
    _run(finetuned, data_dir, out, *flags, "--save_merged")
    card = (out / "README.md").read_text()
    model, tokenizer = _load_with_snippet(card)
    merged = AutoModelForSequenceClassification.from_pretrained(out / "merged").eval()
    assert model.config.id2label == MNLI_LABELS
    assert torch.allclose(_logits(model, tokenizer), _logits(merged, tokenizer), atol=1e-5)
    if kind == "early_start":
        assert f'"{out / "early_start"}"' in _snippet(card)
    else:
        assert "the weights trained under them" in card and "masks only" not in card
    if kind == "imp":  # the settings as the pruning config (MagnitudeConfig) recorded them
        assert "iterative magnitude pruning (Algorithm 1): 10% of each matrix every 0.25 of training up to 20%" in card
        assert (
            "| imp_prune_ratio | 0.1 |" in card and "| imp_interval | 0.25 |" in card and "| rewind | False |" in card
        )
    if kind == "mask_from":
        assert "weights fine-tuned in isolation under the fixed masks of" in card and "| pruning | none |" in card


def test_official_rows_and_hub_datasets_come_from_the_task_registry():
    official_rows = {
        (source.hub_path, source.hub_config, source.hub_split): source.official_rows
        for task in TASKS.values()
        for source in (task.train, task.validation, *(s.source for s in task.ood))
        if source.hub_path and source.hub_split and source.official_rows is not None
    }
    assert official_rows == {
        ("nyu-mll/glue", "mnli", "train"): 392_702,
        ("nyu-mll/glue", "mnli", "validation_matched"): 9_815,
        ("jhu-cogsci/hans", None, "validation"): 30_000,
        ("nyu-mll/glue", "qqp", "train"): 363_846,
        ("nyu-mll/glue", "qqp", "validation"): 40_430,
        ("google-research-datasets/paws", "labeled_final", "test"): 8_000,
        ("nyu-mll/glue", "qnli", "train"): 104_743,
        ("nyu-mll/glue", "qnli", "validation"): 5_463,
        ("nyu-mll/glue", "sst2", "train"): 67_349,
        ("nyu-mll/glue", "sst2", "validation"): 872,
        ("fancyzhx/ag_news", None, "train"): 120_000,
        ("fancyzhx/ag_news", None, "test"): 7_600,
        ("stanfordnlp/imdb", None, "train"): 25_000,
        ("stanfordnlp/imdb", None, "test"): 25_000,
    }
    assert {name: task.hub_datasets for name, task in TASKS.items() if task.hub_datasets} == {
        "mnli": ["nyu-mll/glue", "jhu-cogsci/hans"],
        "qqp": ["nyu-mll/glue", "google-research-datasets/paws"],
        "qnli": ["nyu-mll/glue"],
        "sst2": ["nyu-mll/glue"],
        "ag_news": ["fancyzhx/ag_news"],
        "imdb": ["stanfordnlp/imdb"],
    }
    paws_wiki = get_task("qqp").ood[1]
    assert card_dataset("paws_wiki", paws_wiki.source) == {
        "name": "paws_wiki",
        "type": "google-research-datasets/paws",
        "config": "labeled_final",
        "split": "test",
    }


def test_card_warns_when_the_new_classifier_stayed_random(pretrained, data_dir, tmp_path):
    out = tmp_path / "frozen_head"
    _run(pretrained, data_dir, out, "--pruning", "mask", "--trainable_classifier", "false")
    card = (out / "README.md").read_text()
    assert "masks only" in card and "every load draws another random classifier" in card


def test_masks_after_early_start_name_the_early_start_weights(tmp_path):
    out = tmp_path / "run"
    searched_on = str(out / "early_start")
    assert base_weights(searched_on, output_dir=str(out), for_hub=False, pretrained="m") == (
        searched_on,
        "the masks apply to the run's `early_start/` checkpoint fine-tuned from `m` (not part of the mask repo); "
        "the merged checkpoint needs no base",
    )
    name, note = base_weights(searched_on, output_dir=str(out), for_hub=True, pretrained="google-bert/bert-base")
    assert name == "run/early_start" and str(tmp_path) not in note and "google-bert/bert-base" in note
    assert base_weights("google-bert/bert-base", output_dir=str(out), for_hub=True) == ("google-bert/bert-base", None)
    snapshot = tmp_path / "hub" / "models--org--model" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    assert portable(str(snapshot)) == "org/model"
    assert base_weights(str(snapshot), output_dir=str(out), for_hub=True) == ("org/model", None)


def test_model_index_only_for_a_full_official_split(tmp_path):
    task = get_task("mnli")
    hans = next(s for s in task.ood if s.name == "hans")
    full_hub = describe_split("ood", "hans", hans.source, None, None, 30_000, None, "--max_ood_samples")
    # `revision`: the model-index field for the branch read (HANS: the Hub's Parquet export of its script repo)
    assert full_hub.model_index_dataset() == {
        "name": "hans",
        "type": "jhu-cogsci/hans",
        "split": "validation",
        "revision": "refs/convert/parquet",
    }
    subset = describe_split("ood", "hans", hans.source, None, None, 3_000, 3_000, "--max_ood_samples", "evenly spaced")
    assert subset.model_index_dataset() is None and "3,000 of 30,000 rows" in subset.selection
    data_dir = tmp_path / "data"
    (data_dir / "mnli").mkdir(parents=True)
    (data_dir / "mnli" / "dev_matched.tsv").write_text("x")
    copy = describe_split("validation", "mnli", task.validation, None, str(data_dir), 9_815, None, "--max_eval_samples")
    assert copy.model_index_dataset()["split"] == "validation_matched"
    assert "local copy of `nyu-mll/glue` mnli validation_matched" in copy.origin
    short = describe_split("validation", "mnli", task.validation, None, str(data_dir), 9_000, None, "-")
    assert short.model_index_dataset() is None  # a local file with other rows than the official split
    user_file = describe_split("validation", "mnli", task.validation, "/x/y/dev.tsv", None, 9_815, None, "-")
    assert user_file.model_index_dataset() is None and user_file.origin == "local file `dev.tsv`"

    splits = describe_splits(
        task, DataSources(), train_rows=392_702, train_total=392_702, validation_rows=9_815, ood=[]
    )
    assert [s.model_index_dataset() is not None for s in splits] == [True, True]
    assert [s.origin for s in splits] == [
        "Hub dataset `nyu-mll/glue` mnli train",
        "Hub dataset `nyu-mll/glue` mnli validation_matched",
    ]


def test_the_card_states_removed_heads_and_kept_layers():
    results = {
        "heads_pruned": {"0": [1, 3], "2": [0]},
        "heads_kept_per_layer": [10, 12, 11],
        "student_layers_kept": [0, 2, 4],
    }
    text = structure_section(results)
    assert "3 of 36 removed" in text and "heads kept per layer: 10, 12, 11" in text
    assert "3 layers, the original's 0, 2, 4" in text
    assert structure_section({}) == ""


def test_the_settings_table_states_the_loss_options_used():
    # issue 50: --loss focal trained with γ = 5 and the card did not say so
    from hf_srnets.publish.card_facts import RunDescription, card_training_args

    run = RunDescription(model_name_or_path="m", output_dir="o", loss="focal", loss_options={"focal_gamma": 5.0})
    settings = card_training_args(run, 16)
    assert list(settings)[:3] == ["pruning", "loss", "focal_gamma"] and settings["focal_gamma"] == 5.0
