"""Four options no other test used, checked by what they do: --schedule_start (where the cubic ramp starts),
--tokenizer_name (the tokenizer read instead of the model's), --bias_vectors (the word vectors the bias model is
fitted with) and --hub_merged_model_id (the repo the merged checkpoint is pushed to)."""

from __future__ import annotations

import pytest
import torch
from datasets import Dataset
from transformers import BertConfig, BertModel, BertTokenizerFast

from hf_srnets.arguments import parse_args
from hf_srnets.data import BIAS_COLUMN, get_task
from hf_srnets.errors import InputError
from hf_srnets.pruning.threshold.schedules import schedule_end_step, sparsity_at
from hf_srnets.runner import outputs
from hf_srnets.runner.columns import _attach_fitted_bias
from hf_srnets.runner.data import check_model_inputs, position_limit

BASE = ["--model_name_or_path", "m", "--output_dir", "out/run1"]
CUBIC = ["--pruning", "mask", "--sparsity", "0.9", "--initial_sparsity", "0.5", "--sparsity_schedule", "cubic"]


def test_schedule_start_holds_the_initial_sparsity_until_the_ramp_starts():
    """Zhu & Gupta Eq. 1 on 100 steps, ramp from step 20 to 60: s_t = 0.9 + (0.5 − 0.9)·(1 − (t − 20)/40)³."""
    config = parse_args([*BASE, *CUBIC, "--schedule_start", "0.2", "--schedule_end", "0.6"]).pruning
    assert config.schedule_start == 0.2
    assert [sparsity_at(t, 100, config) for t in (0, 10, 20)] == [0.5, 0.5, 0.5]
    assert sparsity_at(40, 100, config) == pytest.approx(0.9 - 0.4 * 0.5**3)  # 0.85, half-way up the ramp
    assert sparsity_at(30, 100, config) == pytest.approx(0.9 - 0.4 * 0.75**3)
    assert sparsity_at(60, 100, config) == sparsity_at(99, 100, config) == 0.9
    assert schedule_end_step(100, config) == 60
    default = parse_args([*BASE, *CUBIC, "--schedule_end", "0.6"]).pruning  # the ramp starts at step 0
    assert sparsity_at(10, 100, default) == pytest.approx(0.9 - 0.4 * (5 / 6) ** 3)


def test_schedule_start_after_the_end_is_refused():
    with pytest.raises(ValueError, match="0 <= start < end <= 1"):
        parse_args([*BASE, *CUBIC, "--schedule_start", "0.7", "--schedule_end", "0.6"])


@pytest.fixture
def model_without_tokenizer(tmp_path):
    path = tmp_path / "model"
    BertModel(
        BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
    ).save_pretrained(path)
    return path


def test_tokenizer_name_is_read_instead_of_the_model_folder(model_without_tokenizer, tmp_path):
    vocab = tmp_path / "tokenizer" / "vocab.txt"
    vocab.parent.mkdir()
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\n")
    BertTokenizerFast(vocab_file=str(vocab), model_max_length=64).save_pretrained(vocab.parent)
    run = parse_args(["--model_name_or_path", str(model_without_tokenizer), "--output_dir", "o",
                      "--tokenizer_name", str(vocab.parent), "--max_seq_length", "64"])  # fmt: skip
    assert run.model.tokenizer_name == str(vocab.parent)
    assert position_limit(run.model) == 64  # the tokenizer's limit, below the model's 512 positions
    check_model_inputs(run.model, run.data)
    run.data.max_seq_length = 65
    with pytest.raises(InputError, match="--max_seq_length 65 is above the 64 tokens"):
        check_model_inputs(run.model, run.data)
    without = parse_args(["--model_name_or_path", str(model_without_tokenizer), "--output_dir", "o"])
    assert position_limit(without.model) == 512  # the model's positions: its folder holds no tokenizer limit


def test_a_missing_tokenizer_name_is_refused_by_name(model_without_tokenizer, tmp_path):
    run = parse_args(["--model_name_or_path", str(model_without_tokenizer), "--output_dir", "o",
                      "--tokenizer_name", str(tmp_path / "no_such_tokenizer")])  # fmt: skip
    with pytest.raises(InputError, match="--tokenizer_name"):
        check_model_inputs(run.model, run.data)


def test_a_model_folder_without_tokenizer_files_needs_tokenizer_name(model_without_tokenizer, tmp_path):
    """issue 50: transformers built a 5-token tokenizer from config.json alone; the run trained with every word as
    [UNK] (rc 0) and saved that tokenizer. Refused before any data is read; so is a --tokenizer_name folder alike."""
    run = parse_args(["--model_name_or_path", str(model_without_tokenizer), "--output_dir", "o"])
    with pytest.raises(InputError, match=r"--model_name_or_path .*model holds no tokenizer files .* --tokenizer_name"):
        check_model_inputs(run.model, run.data)
    run = parse_args(["--model_name_or_path", str(model_without_tokenizer), "--output_dir", "o",
                      "--tokenizer_name", str(model_without_tokenizer)])  # fmt: skip
    with pytest.raises(InputError, match=r"--tokenizer_name .* holds no tokenizer files"):
        check_model_inputs(run.model, run.data)


def test_a_saved_classifier_without_tokenizer_files_takes_its_base_models(model_without_tokenizer, pretrained):
    """run_attack.py's loader: the model folder's missing tokenizer is not built from config.json; the base model's
    is read, and with none the error names both."""
    from hf_srnets.evaluation.saved_classifier import _load_tokenizer

    assert _load_tokenizer(str(model_without_tokenizer), str(pretrained)).name_or_path == str(pretrained)
    with pytest.raises(InputError, match=r"No tokenizer found \(.*model: no tokenizer files\)"):
        _load_tokenizer(str(model_without_tokenizer), None)


def overlap_nli(n: int) -> Dataset:
    """Entailed hypotheses repeat the premise, neutral ones share some words, contradicted ones none."""
    premises = [f"the cat {'saw' if i % 2 else 'heard'} the dog" for i in range(n)]
    others = ["the cat saw a bird", "nobody moved at all"]
    hypotheses = [p if i % 3 == 0 else others[i % 3 - 1] for i, p in enumerate(premises)]
    labels = [i % 3 for i in range(n)]
    return Dataset.from_dict(
        {"id": [f"t{i}" for i in range(n)], "sentence1": premises, "sentence2": hypotheses, "label": labels}
    )


def test_bias_vectors_are_the_vectors_the_bias_model_is_fitted_with(tmp_path):
    train = overlap_nli(60)
    words = sorted({w for col in ("sentence1", "sentence2") for text in train[col] for w in text.split()})
    glove = tmp_path / "glove.txt"
    glove.write_text(
        "".join(f"{w} {' '.join(str((i * 7 + j) % 5 / 5) for j in range(4))}\n" for i, w in enumerate(words))
    )
    run = parse_args([*BASE, "--output_dir", str(tmp_path / "out"), "--loss", "poe", "--bias_vectors", str(glove)])
    assert run.data.bias_vectors == str(glove)
    sources, ids = ["train"] * len(train), list(train["id"])
    joined, description = _attach_fitted_bias(train, train, get_task("mnli"), run.data, run.training, {}, sources, ids)
    assert "(glove vectors)" in description
    assert len(joined[BIAS_COLUMN]) == 60 and torch.allclose(torch.tensor(joined[BIAS_COLUMN]).sum(1), torch.ones(60))
    report = next((tmp_path / "out" / "bias_model").rglob("bias_report.json")).read_text()
    assert str(glove) in report


def test_hub_merged_model_id_names_the_merged_repo(monkeypatch):
    pushed = {}
    monkeypatch.setattr(
        outputs, "push_run", lambda output_dir, repo, merged, **kw: pushed.update(repo=repo, merged=merged)
    )
    run = parse_args([*BASE, "--push_merged", "true", "--hub_merged_model_id", "me/merged-srnet"])
    outputs.push_outputs(run, pruned=True, push_to_hub=False)
    assert pushed == {"repo": None, "merged": "me/merged-srnet"}
    default = parse_args([*BASE, "--push_merged", "true", "--hub_model_id", "me/masks"])
    outputs.push_outputs(default, pruned=True, push_to_hub=True)
    assert pushed == {"repo": "me/masks", "merged": "me/masks-merged"}
    assert outputs.merged_repo_id(parse_args([*BASE, "--push_merged", "true"])) == "run1-merged"


def test_a_data_dir_that_is_a_file_is_refused(tmp_path):
    # issue 50: the file was skipped as "not found", every split read from the Hub, and the error said "Offline?"
    a_file = tmp_path / "dev_matched.tsv"
    a_file.write_text("idx\tpremise\thypothesis\tlabel\n")
    with pytest.raises(InputError, match=r"--data_dir .*dev_matched\.tsv is a file: give the folder holding"):
        parse_args([*BASE, "--data_dir", str(a_file)])
