"""End to end: run_glue_sparse.py with a few hundred real MNLI/HANS examples, on `small_encoder` (MiniLM's tokenizer
on a small random BERT encoder saved without a classification head, as the pip MiniLM is): these runs check what a
run writes, loads and refuses, which does not depend on the encoder's size. The pip MiniLM itself runs end to end in
the quickstart's reproduction (tests/scripts/test_quickstart_quick.py)."""

import csv
import hashlib
import json
import logging
import os
import re
import sys

import pytest
import torch
from conftest import assert_run_predictions_match_hand, correct_bias_file, mnli_run_args
from huggingface_hub import HfApi
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from hf_srnets.arguments import parse_args, validate_args
from hf_srnets.commands import bias_model as bias_model_cli
from hf_srnets.data import get_task, load_file
from hf_srnets.data.splits import load_splits
from hf_srnets.masking import SRNetModel
from hf_srnets.masking.hub_upload import HubUploadError
from hf_srnets.runner.data import run_task, split_files

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import run_glue_sparse


def _offline(self, *args, **kwargs):
    raise OSError("Name or service not known")


# these runs check what a run writes and refuses, not what it learns: 96 pairs in 6 steps of 16, 64 dev-matched and
# 60 HANS pairs evaluated (half the work of mnli_run_args' sizes, the same number of steps)
TRAIN, EVAL, OOD, BATCH = 96, 64, 60, 16


def _common(model, data_dir, out, *extra):
    return mnli_run_args(
        model, data_dir, out, "--num_train_epochs", "1", "--logging_steps", "2", "--dataloader_pin_memory", "false",
        *extra, train=TRAIN, eval=EVAL, ood=OOD, batch=BATCH,
    )  # fmt: skip


def assert_mnli_accuracy_by_hand(out, reported: float, model, tokenizer, data_dir) -> None:
    """The reported accuracy on the EVAL dev-matched pairs a run of `_common` evaluates (the first ones) is
    counted from its saved predictions, which are `model`'s predictions by hand (assert_run_predictions_match_hand)."""
    task = get_task("mnli")
    dev = load_file(str(data_dir / "mnli" / "dev_matched.tsv"), task.label_names, aliases=task.label_aliases)
    dev = dev.select(range(EVAL))
    first, second, names = dev["sentence1"], dev["sentence2"], task.label_names  # the run's label order
    assert_run_predictions_match_hand(out, "mnli", reported, model, tokenizer, first, second, names)


def assert_logged_components(out, keys) -> None:
    """Every training log of the run (trainer_state.json) holds each loss component of `keys`."""
    log = json.loads((out / "trainer_state.json").read_text())["log_history"]
    train_logs = [entry for entry in log if "loss" in entry]
    assert train_logs, "no training log"
    for entry in train_logs:
        assert set(keys) <= set(entry), f"missing {set(keys) - set(entry)} in {entry}"


@pytest.mark.slow
def test_mask_search_with_poe_end_to_end(small_encoder, data_dir, tmp_path):
    out = tmp_path / "mask_poe"
    bias = correct_bias_file(data_dir, tmp_path / "bias.jsonl")
    results = run_glue_sparse.main(
        _common(
            small_encoder,
            data_dir,
            out,
            "--do_train",
            "--pruning",
            "mask",
            "--loss",
            "poe",
            "--sparsity",
            "0.5",
            "--bias_predictions",
            bias,
            "--learning_rate",
            "5e-4",
            "--mask_learning_rate",
            "1e-2",
            "--threshold_update_interval",
            "2",
        )
    )
    saved = json.loads((out / "all_results.json").read_text())
    assert saved["sparsity"] == pytest.approx(0.5, abs=1e-3)
    for key in ["eval_hans_lexical_overlap_entailment_accuracy", "eval_hans_constituent_non-entailment_accuracy"]:
        assert key in saved, key
    assert results["eval_mnli_accuracy"] == saved["eval_mnli_accuracy"]
    # every set's evaluation is timed, so a sweep's budget line counts the OOD sets too
    assert saved["eval_mnli_runtime"] > 0 and saved["eval_hans_runtime"] > 0
    assert "eval_hans_loss" not in saved  # HANS's two labels are not the task's three: no loss against them
    assert_logged_components(out, ("loss_poe", "loss_ce", "sparsity"))
    assert {"srnet_config.json", "srnet_masks.safetensors", "README.md", "sparsity_report.json"} <= set(os.listdir(out))
    assert "model.safetensors" not in os.listdir(out)
    card = (out / "README.md").read_text()
    assert "sparsity" in card.lower() and "hans" in card

    # paradigm (c): the pre-trained encoder's classifier is new and trained with the masks, so the saved SRNet
    # must carry it: two fresh copies of the base with different random classifiers load to the same model
    tokenizer = AutoTokenizer.from_pretrained(small_encoder)
    batch = tokenizer(["A man is sleeping ."], ["Nobody sleeps ."], return_tensors="pt")
    logits = []
    for init_seed in (0, 1):
        torch.manual_seed(init_seed)
        base = AutoModelForSequenceClassification.from_pretrained(small_encoder, num_labels=3)
        srnet = SRNetModel.from_pretrained(base, out).eval()
        with torch.no_grad():
            logits.append(srnet(**batch).logits)
    assert torch.equal(logits[0], logits[1])
    # reloaded masks, merged into a plain model, give the masked model's logits
    with torch.no_grad():
        merged_model = srnet.merge_and_unload()
        merged = merged_model(**batch).logits
    assert torch.allclose(logits[1], merged, atol=1e-5)
    assert_mnli_accuracy_by_hand(out, saved["eval_mnli_accuracy"], merged_model, tokenizer, data_dir)


@pytest.mark.slow
def test_full_finetuning_reweight_with_bias_model_and_teacher_predictions(small_encoder, data_dir, tmp_path):
    out = tmp_path / "full_reweight"
    teacher = tmp_path / "teacher.jsonl"
    results = run_glue_sparse.main(
        _common(
            small_encoder,
            data_dir,
            out,
            "--do_train",
            "--pruning",
            "none",
            "--loss",
            "reweight",
            "--bias_model",
            "overlap",
            "--learning_rate",
            "1e-4",
            "--write_train_predictions",
            str(teacher),
        )
    )
    assert "model.safetensors" in os.listdir(out)
    # p_b was computed on the fly on the full training set and cached under a key of the data it was fitted on
    (cache,) = [p for p in (out / "bias_model").iterdir() if p.is_dir()]
    bias_rows = (cache / "bias_train.jsonl").read_text().splitlines()
    assert len(bias_rows) == 9832
    assert (cache / "bias_hans.jsonl").is_file()
    assert results["sparsity"] == 0.0
    assert_logged_components(out, ("loss_reweight", "loss_ce", "loss_beta"))
    model = AutoModelForSequenceClassification.from_pretrained(out)
    tokenizer = AutoTokenizer.from_pretrained(small_encoder)
    assert_mnli_accuracy_by_hand(out, results["eval_mnli_accuracy"], model, tokenizer, data_dir)
    rows = [json.loads(line) for line in teacher.read_text().splitlines()]
    assert len(rows) == TRAIN and all(abs(sum(r["probs"]) - 1) < 1e-4 for r in rows)


def test_bad_arguments_are_refused(small_encoder, data_dir, tmp_path):
    with pytest.raises(ValueError, match="needs --teacher_predictions"):
        run_glue_sparse.main(_common(small_encoder, data_dir, tmp_path / "x", "--loss", "confreg"))
    with pytest.raises(ValueError, match="sparsity"):
        run_glue_sparse.main(_common(small_encoder, data_dir, tmp_path / "x", "--pruning", "mask", "--sparsity", "1.5"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "0", "probs": [0.5, 0.5]}) + "\n")
    with pytest.raises(ValueError, match="2 probabilities, but the task has 3 labels"):
        run_glue_sparse.main(
            _common(small_encoder, data_dir, tmp_path / "x", "--loss", "poe", "--bias_predictions", str(bad))
        )


@pytest.mark.parametrize(
    ("flags", "error"),
    [
        (["--pruning", "imp", "--sparsity", "0.55"], "multiple k >= 1 of the pruning ratio"),
        (["--pruning", "imp-rw", "--sparsity", "0.5", "--imp_interval", "0"], "IMP interval"),
        (["--pruning", "imp", "--initial_sparsity", "0.3"], "--initial_sparsity configure mask training"),
        (
            ["--mask_learning_rate", "1e-3", "--threshold_update_interval", "5"],
            "--threshold_update_interval, --mask_learning_rate configure --pruning l0 / threshold and would do "
            "nothing with --pruning none",
        ),
        # p_b read from a file: no bias model is fitted, so neither its kind nor its vectors apply
        (
            ["--loss", "poe", "--bias_predictions", "b.jsonl", "--bias_model", "hypothesis"],
            "--bias_model would do nothing with --bias_predictions b.jsonl: p_b is read from that file",
        ),
        (
            ["--loss", "poe", "--bias_predictions", "b.jsonl", "--bias_vectors", "glove.txt"],
            "--bias_vectors would do nothing with --bias_predictions b.jsonl",
        ),
        # the hypothesis-only model hashes the hypothesis's n-grams; the cue model counts cues: no word vectors
        (
            ["--loss", "poe", "--bias_model", "hypothesis", "--bias_vectors", "glove.txt"],
            "--bias_vectors glove.txt would do nothing with --bias_model hypothesis",
        ),
        (
            ["--loss", "poe", "--data_transform", "cue", "--bias_model", "cue", "--bias_vectors", "glove.txt"],
            "--bias_vectors glove.txt would do nothing with --bias_model cue",
        ),
    ],
)
def test_settings_that_do_not_apply_are_refused_before_loading(flags, error):
    run = parse_args(["--model_name_or_path", "m", "--output_dir", "o", *flags])
    with pytest.raises(ValueError, match=re.escape(error)):
        validate_args(run)


def test_yaml_config_with_overriding_flags(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(
        "model_name_or_path: m\ntask: mnli\npruning: mask\nsparsity: 0.5\nloss: poe\n"
        "do_train: true\nood_file: [a=x.tsv, b=y.tsv]\noutput_dir: o\n"
    )
    run = parse_args([str(config), "--sparsity", "0.7"])
    assert run.model.pruning == "mask" and run.pruning.sparsity == 0.7 and run.training.loss == "poe"
    assert run.training.do_train and run.data.ood_file == ["a=x.tsv", "b=y.tsv"]
    json_config = tmp_path / "c.json"
    config = {"model_name_or_path": "m", "output_dir": "o", "pruning": "mask", "mask_init": "soft"}
    json_config.write_text(json.dumps(config))
    assert parse_args([str(json_config)]).pruning.mask_init == "soft"


def test_repeated_list_flags_add_up():
    base = ["--model_name_or_path", "m", "--output_dir", "o"]
    data_args = parse_args(
        base
        + [
            "--ood_file",
            "a=x.tsv",
            "--ood_file",
            "b=y.tsv",
            "c=z.tsv",
            "--extra_train",
            "h=h.tsv",
            "--extra_train",
            "p=p.tsvx2",
        ]
    ).data
    assert data_args.ood_file == ["a=x.tsv", "b=y.tsv", "c=z.tsv"]
    assert data_args.extra_train == ["h=h.tsv", "p=p.tsvx2"]
    assert parse_args(base).data.ood_file == []  # the default list is not shared between parses


def test_example_recipes_parse():
    root = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
    for name in ["mnli_full_ce_bert_base.yaml", "mnli_mask_poe_bert_base.yaml"]:
        args = parse_args([os.path.join(root, name)]).training
        assert args.per_device_train_batch_size == 32 and args.max_steps == -1


@pytest.mark.slow
def test_confreg_with_teacher_predictions_of_a_subset_and_offline_push(small_encoder, data_dir, tmp_path, monkeypatch):
    teacher_out, teacher = tmp_path / "teacher_run", tmp_path / "teacher.jsonl"
    run_glue_sparse.main(
        _common(
            small_encoder,
            data_dir,
            teacher_out,
            "--max_steps",
            "1",
            "--do_train",
            "--write_train_predictions",
            str(teacher),
        )
    )
    bias = correct_bias_file(data_dir, tmp_path / "bias.jsonl")  # covers all 9,832 training rows: extra ids allowed
    out = tmp_path / "confreg"
    monkeypatch.setattr(HfApi, "create_repo", _offline)
    with pytest.raises(HubUploadError, match=r"python -m hf_srnets\.commands\.push_to_hub"):
        run_glue_sparse.main(
            _common(
                small_encoder,
                data_dir,
                out,
                "--do_train",
                "--max_steps",
                "2",
                "--pruning",
                "mask",
                "--loss",
                "confreg",
                "--bias_predictions",
                bias,
                "--teacher_predictions",
                str(teacher),
                "--push_to_hub",
                "--hub_model_id",
                "nobody/srnet-e2e",
                "--push_merged",
            )
        )
    # the upload failed, but every local output is there
    results = json.loads((out / "all_results.json").read_text())
    assert results["sparsity"] == pytest.approx(0.5, abs=1e-3)
    assert {"srnet_config.json", "srnet_masks.safetensors", "README.md"} <= set(os.listdir(out))
    assert "nobody/srnet-e2e" in (out / "README.md").read_text()  # the card's usage snippet names the repo
    log = json.loads((out / "trainer_state.json").read_text())["log_history"]
    assert any("loss_confreg" in entry for entry in log)
    merged = AutoModelForSequenceClassification.from_pretrained(out / "merged")  # transformers alone
    assert merged.config.num_labels == 3 and (out / "merged" / "README.md").is_file()


@pytest.mark.slow
def test_imp_rw_then_fine_tuning_in_isolation(small_encoder, data_dir, tmp_path):
    ticket = tmp_path / "imp_rw"
    results = run_glue_sparse.main(
        _common(
            small_encoder,
            data_dir,
            ticket,
            "--do_train",
            "--max_steps",
            "10",
            "--pruning",
            "imp-rw",
            "--sparsity",
            "0.2",
            "--imp_interval",
            "0.2",
        )
    )
    assert results["sparsity"] == pytest.approx(0.2, abs=1e-3)
    isolated = tmp_path / "isolated"
    results = run_glue_sparse.main(
        _common(
            small_encoder,
            data_dir,
            isolated,
            "--do_train",
            "--max_steps",
            "3",
            "--mask_from",
            str(ticket),
            "--learning_rate",
            "1e-3",
        )
    )
    assert results["sparsity"] == pytest.approx(0.2, abs=1e-3)
    base = AutoModelForSequenceClassification.from_pretrained(small_encoder, num_labels=3)
    srnet = SRNetModel.from_pretrained(base, isolated, check_fingerprint=False)
    for name, mask in (
        SRNetModel.from_pretrained(
            AutoModelForSequenceClassification.from_pretrained(small_encoder, num_labels=3),
            ticket,
            check_fingerprint=False,
        )
        .binary_masks()
        .items()
    ):
        assert torch.equal(srnet.binary_masks()[name], mask), name
        assert torch.all(srnet.base_model.get_submodule(name).base_layer.weight[~mask] == 0), name


@pytest.mark.slow
def test_extra_training_data_is_mixed_in_and_evaluation_sets_are_refused(small_encoder, data_dir, tmp_path):
    hans_train = data_dir / "hans" / "heuristics_train_set.tsv"
    results = run_glue_sparse.main(
        _common(
            small_encoder,
            data_dir,
            tmp_path / "ood_informed",
            "--do_train",
            "--max_steps",
            "1",
            "--max_train_samples",
            "32",
            "--extra_train",
            f"hans_train={hans_train}x2",
        )
    )
    assert results["train_examples"] == 32 + 2 * 30000
    hans_eval = data_dir / "hans" / "heuristics_evaluation_set.tsv"
    with pytest.raises(ValueError, match="also an evaluation set"):
        run_glue_sparse.main(_common(small_encoder, data_dir, tmp_path / "x", "--extra_train", f"hans={hans_eval}"))


@pytest.mark.slow
def test_early_start_stops_fine_tuning_then_searches(small_encoder, data_dir, tmp_path):
    out = tmp_path / "early"
    results = run_glue_sparse.main(
        _common(
            small_encoder,
            data_dir,
            out,
            "--do_train",
            "--max_train_samples",
            "48",
            "--num_train_epochs",
            "2",
            "--learning_rate",
            "1e-4",
            "--eval_strategy",
            "steps",
            "--eval_steps",
            "1",
            "--early_start_patience",
            "1",
            "--pruning",
            "mask",
            "--sparsity",
            "0.5",
            "--max_eval_samples",
            "32",
            "--max_ood_samples",
            "30",
        )
    )
    # planned: 48 examples / 16 = 3 steps x 2 epochs; patience 1 stops it as soon as dev accuracy fails to improve
    assert results["early_start_planned_steps"] == 6
    assert results["early_start_steps"] < 6
    assert results["early_start_steps_saved"] == 6 - results["early_start_steps"]
    assert results["early_start_best_step"] <= results["early_start_steps"]
    assert results["sparsity"] == pytest.approx(0.5, abs=1e-3)
    assert (out / "early_start" / "model.safetensors").is_file()
    # the masks belong to the early-start weights, not to the pre-trained checkpoint: the config says so and
    # following it loads (the fingerprint check passes)
    searched_on = json.loads((out / "srnet_config.json").read_text())["base_model_name_or_path"]
    assert searched_on == str(out / "early_start")
    SRNetModel.from_pretrained(AutoModelForSequenceClassification.from_pretrained(searched_on), out)
    with pytest.raises(ValueError, match="needs --eval_strategy steps"):
        run_glue_sparse.main(_common(small_encoder, data_dir, tmp_path / "x", "--early_start_patience", "2"))


@pytest.mark.slow
def test_search_from_an_intermediate_fine_tuning_checkpoint(small_encoder, data_dir, tmp_path):
    """§5.1: the mask search starts from checkpoint-N of a CE fine-tuning run, as docs/pruning.md shows."""
    full = tmp_path / "full_ce"
    run_glue_sparse.main(
        _common(small_encoder, data_dir, full, "--do_train", "--max_steps", "4", "--save_strategy", "steps")
        + ["--save_steps", "2", "--learning_rate", "1e-4"]
    )
    checkpoint = full / "checkpoint-2"
    assert (checkpoint / "model.safetensors").is_file()
    out = tmp_path / "mask_from_step_2"
    results = run_glue_sparse.main(
        _common(str(checkpoint), data_dir, out, "--do_train", "--max_steps", "2", "--pruning", "mask")
        + ["--sparsity", "0.3", "--mask_init", "soft", "--threshold_update_interval", "1"]
    )
    assert results["sparsity"] == pytest.approx(0.3, abs=1e-3)
    assert json.loads((out / "srnet_config.json").read_text())["base_model_name_or_path"] == str(checkpoint)
    # the masks belong to the step-2 weights: they load there, and the fingerprint refuses the final model
    SRNetModel.from_pretrained(AutoModelForSequenceClassification.from_pretrained(checkpoint), out)
    with pytest.raises(ValueError, match="fingerprint"):
        SRNetModel.from_pretrained(AutoModelForSequenceClassification.from_pretrained(full), out)


def test_ood_files_named_hans_are_scored_like_hans(data_dir):
    hans, mnli_mm = data_dir / "hans" / "heuristics_evaluation_set.tsv", data_dir / "mnli" / "dev_mismatched.tsv"
    data_args = parse_args(
        ["--model_name_or_path", "m", "--output_dir", "o", "--data_dir", str(data_dir), "--no_default_ood"]
        + ["--validation_file", str(mnli_mm), "--train_file", str(mnli_mm)]
        + ["--ood_file", f"hans_again={hans}", f"mm={mnli_mm}"]
    ).data
    task = run_task(data_args)
    _, _, ood = load_splits(task, split_files(data_args), None)
    (hans_set, hans_data), (mm_set, mm_data) = ood
    assert (hans_set.name, hans_set.kind, hans_set.label_names) == (
        "hans_again",
        "hans",
        ("entailment", "non-entailment"),
    )
    assert (mm_set.name, mm_set.kind, mm_set.label_names) == ("mm", "same", task.label_names)
    assert len(hans_data) == 30000 and set(hans_data["label"]) == {0, 1}
    assert len(mm_data) == 9832 and set(mm_data["label"]) == {0, 1, 2}


def _raw_pairs(path, n: int) -> dict[str, str]:
    """idx -> premise + 0x1F + hypothesis of the first `n` rows of a published MNLI TSV, read with the csv module."""
    with open(path, encoding="utf-8", newline="") as f:
        rows = [r for _, r in zip(range(n), csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))]
    return {r["idx"]: r["premise"] + "\x1f" + r["hypothesis"] for r in rows}


def _digests_by_hand(path, n: int) -> dict[str, str]:
    """idx -> the first 16 hex digits of the SHA-256 of the row's texts (`_raw_pairs`)."""
    return {i: hashlib.sha256(t.encode("utf-8")).hexdigest()[:16] for i, t in _raw_pairs(path, n).items()}


@pytest.mark.slow
def test_bias_predictions_made_on_another_mnli_file_are_refused(small_encoder, data_dir, tmp_path):
    """Issue 33: p_b that run_bias_model.py fitted on dev-matched (idx 0..9814) is not joined by row number onto a
    run trained on dev-mismatched (idx 0..9831)."""
    matched = data_dir / "mnli" / "dev_matched.tsv"
    bias_out = tmp_path / "bias_matched"
    bias_model_cli.main(
        ["--task", "mnli", "--train_file", str(matched), "--data_dir", str(data_dir), "--output_dir", str(bias_out)]
    )  # fmt: skip
    bias = bias_out / "bias_train.jsonl"
    written = {r["id"]: r["text_digest"] for r in map(json.loads, bias.read_text().splitlines())}
    by_hand = _digests_by_hand(matched, 10_000)
    assert len(written) == len(by_hand) == 9815 and written == by_hand
    other = _raw_pairs(data_dir / "mnli" / "dev_mismatched.tsv", TRAIN)
    differ = sum(_raw_pairs(matched, TRAIN)[i] != text for i, text in other.items())  # same idx, other texts
    with pytest.raises(
        ValueError,
        match=rf"{re.escape(str(bias))}: {differ} of the {TRAIN} rows joined by id were made on other texts than this "
        r"run's data \(text_digest differs\), first id '0' \(here 'Your contribution helped.*write one with "
        r"run_bias_model\.py from this run's training data",
    ):
        run_glue_sparse.main(_common(small_encoder, data_dir, tmp_path / "poe", "--do_train", "--loss", "poe",
                                     "--bias_predictions", str(bias)))  # fmt: skip
    assert not (tmp_path / "poe" / "all_results.json").exists()


@pytest.mark.slow
def test_teacher_predictions_of_another_mnli_file_are_refused(small_encoder, data_dir, tmp_path, caplog):
    """p_t written by --write_train_predictions in a run on dev-matched is refused by a run on dev-mismatched; an old
    p_b file without digests (made for dev-mismatched) still joins, with a warning."""
    matched = data_dir / "mnli" / "dev_matched.tsv"
    teacher = tmp_path / "teacher.jsonl"
    run_glue_sparse.main(
        _common(small_encoder, data_dir, tmp_path / "teacher_run", "--train_file", str(matched), "--max_steps", "1",
                "--do_train", "--write_train_predictions", str(teacher))
    )  # fmt: skip
    written = {r["id"]: r["text_digest"] for r in map(json.loads, teacher.read_text().splitlines())}
    assert written == _digests_by_hand(matched, TRAIN)
    bias = correct_bias_file(data_dir, tmp_path / "old_bias.jsonl")  # the format before digests
    with (
        caplog.at_level(logging.WARNING),
        pytest.raises(
            ValueError,
            match=rf"{re.escape(str(teacher))}: \d+ of the {TRAIN} rows joined by id were made on other texts.*"
            r"write one with --write_train_predictions from a CE fine-tuned model from this run's training data",
        ),
    ):
        run_glue_sparse.main(_common(small_encoder, data_dir, tmp_path / "confreg", "--do_train", "--loss", "confreg",
                                     "--bias_predictions", bias, "--teacher_predictions", str(teacher)))  # fmt: skip
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and bias in r.getMessage()]
    assert len(warned) == 1 and "does not record the data it was made on" in warned[0]


def test_a_dense_student_with_fewer_layers_and_narrower_ffns_distils_from_its_teacher(
    small_encoder, data_dir, tmp_path
):
    """Issue 69's dense students made with the run's own tools: --student_layers 1 --student_ffn_size 64 of a 2-layer
    teacher with 256 FFN units, trained with ce plus logit and hidden-state distillation from the teacher
    (its layer 2 faces the student's one layer: TinyBERT's uniform map); the saved student is a stock checkpoint."""
    teacher = tmp_path / "teacher"
    AutoModelForSequenceClassification.from_pretrained(small_encoder, num_labels=3).save_pretrained(teacher)
    AutoTokenizer.from_pretrained(small_encoder).save_pretrained(teacher)
    out = tmp_path / "student"
    results = run_glue_sparse.main(_common(
        teacher, data_dir, out, "--do_train", "--pruning", "none", "--student_layers", "1", "--student_ffn_size", "64",
        "--step_objective", "dense_distil", "--teacher_model", str(teacher), "--distil_hidden_weight", "1",
    ))  # fmt: skip
    assert results["student_layers_kept"] == [0] and results["student_ffn_size"] == 64
    assert_logged_components(out, ["loss_dense_kl", "loss_dense_hidden_mse"])
    student = AutoModelForSequenceClassification.from_pretrained(out)
    assert (student.config.num_hidden_layers, student.config.intermediate_size) == (1, 64)
    assert "FFN: a student with 64 FFN units per layer" in (out / "README.md").read_text()
