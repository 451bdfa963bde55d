"""The controlled cue (`--data_transform cue`, `hf_srnets.data.cues`) and its exact bias-only model (`--bias_model
cue`, `hf_srnets.bias.cue`), issue 52: the draws against their probabilities, the three evaluation sets, p_b counted
by hand, the options' checks, and a run that names the sets in its results."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import mnli_run_args
from datasets import Dataset

from hf_srnets.arguments import parse_args, validate_args
from hf_srnets.bias import BIAS_MODELS, ExactBiasModel
from hf_srnets.bias.cue import cue_probabilities
from hf_srnets.commands.glue_sparse import main
from hf_srnets.data import DATA_TRANSFORMS, CueOptions, get_data_transform, get_task
from hf_srnets.data.cues import CUE_COLUMN, NO_CUE, cue_labels, other_labels, with_cues
from hf_srnets.errors import InputError

MNLI = get_task("mnli")


def pairs(n: int, k: int = 3) -> Dataset:
    return Dataset.from_dict(
        {
            "id": [f"p{i}" for i in range(n)],
            "sentence1": [f"premise {i}" for i in range(n)],
            "sentence2": [f"hypothesis {i}" for i in range(n)],
            "label": [i % k for i in range(n)],
        }
    )


def cue(rho: float = 0.8, **options) -> object:
    return get_data_transform("cue", CueOptions(cue_rho=rho, **options))


def test_the_cue_is_registered_as_a_data_transform_and_its_exact_model_as_a_bias_model():
    assert "cue" in DATA_TRANSFORMS and isinstance(BIAS_MODELS["cue"], ExactBiasModel)
    assert "hypothesis" in BIAS_MODELS  # the hypothesis-only NLI model beside it


@pytest.mark.parametrize("rho", [0.0, 0.6, 0.9, 1.0])
def test_the_cue_agrees_with_probability_rho_plus_the_chance_of_a_uniform_draw(rho):
    """P(agree) = ρ + (1 − ρ)/K; over 30,000 ids the rate is within 4 binomial standard deviations of it."""
    n, k = 30_000, 3
    ids, labels = [f"x{i}" for i in range(n)], [i % k for i in range(n)]
    cues = cue_labels(ids, labels, k, rho, seed=0, stream="train")
    expected = rho + (1 - rho) / k
    rate = sum(c == y for c, y in zip(cues, labels)) / n
    assert abs(rate - expected) <= 4 * math.sqrt(expected * (1 - expected) / n) + 1e-12
    wrong = [c for c, y in zip(cues, labels) if c != y]
    if wrong:  # a disagreeing cue is any other label, uniformly: each of the 3 shows up
        assert set(wrong) == {0, 1, 2}
    assert cue_labels(ids[:50], labels[:50], k, rho, seed=0, stream="train") == cues[:50]  # fixed by id and seed


def test_other_labels_are_never_the_gold_one_and_cover_the_others():
    labels = [i % 3 for i in range(3000)]
    others = other_labels([f"x{i}" for i in range(3000)], labels, 3, seed=0)
    assert all(o != y for o, y in zip(others, labels))
    assert {(y, o) for y, o in zip(labels, others)} == {(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)}


def test_the_cue_goes_in_front_of_the_hypothesis_and_is_recorded():
    data = with_cues(pairs(3), [2, NO_CUE, 0], ("zebra", "quartz", "falcon"))
    assert data["sentence2"] == ["falcon hypothesis 0", "hypothesis 1", "zebra hypothesis 2"]
    assert data["sentence1"] == ["premise 0", "premise 1", "premise 2"] and data[CUE_COLUMN] == [2, NO_CUE, 0]
    single = with_cues(pairs(2).remove_columns("sentence2"), [1, 1], ("a", "b", "c"))
    assert single["sentence1"] == ["b premise 0", "b premise 1"]


def test_the_evaluation_sets_agree_disagree_and_lack_the_cue_and_other_sets_keep_their_text():
    train, validation = pairs(300), pairs(90)
    hans = pairs(12, k=2)
    transform = cue(0.9)
    ood_set = MNLI.ood[0]
    new_train, new_validation, ood = transform.apply(MNLI, train, validation, [(ood_set, hans)])
    sets = {s.name: d for s, d in ood}
    assert list(sets) == ["hans", "cue_agree", "cue_disagree", "cue_absent"]
    gold = validation["label"]
    assert sets["cue_agree"][CUE_COLUMN] == gold
    assert all(c != y and c >= 0 for c, y in zip(sets["cue_disagree"][CUE_COLUMN], gold))
    assert sets["cue_absent"][CUE_COLUMN] == [NO_CUE] * 90
    assert sets["cue_absent"]["sentence2"] == validation["sentence2"]
    assert sets["hans"]["sentence2"] == hans["sentence2"] and sets["hans"][CUE_COLUMN] == [NO_CUE] * 12
    words = ("zebra", "quartz", "falcon")
    for name in ("cue_agree", "cue_disagree"):
        for text, c, plain in zip(sets[name]["sentence2"], sets[name][CUE_COLUMN], validation["sentence2"]):
            assert text == f"{words[c]} {plain}"
    agree = sum(c == y for c, y in zip(new_train[CUE_COLUMN], train["label"])) / 300
    assert agree > 0.8  # ρ + (1 − ρ)/3 = 0.933 expected; far above the 1/3 of no cue
    assert len(new_validation) == 90 and set(new_validation[CUE_COLUMN]) <= {0, 1, 2}
    assert [s.name for s in transform.eval_sets(MNLI)] == ["cue_agree", "cue_disagree", "cue_absent"]


def test_the_exact_bias_model_is_the_label_distribution_of_each_cue_counted_by_hand():
    # training set: cue 0 on labels 0,0,0,1; cue 1 on labels 1,2; cue 2 never; no cue on labels 2,2
    train = Dataset.from_dict({"label": [0, 0, 0, 1, 1, 2, 2, 2], CUE_COLUMN: [0, 0, 0, 0, 1, 1, NO_CUE, NO_CUE]})
    split = Dataset.from_dict({CUE_COLUMN: [0, 1, 2, NO_CUE]})
    prior = [3 / 8, 2 / 8, 3 / 8]
    expected = np.array([[3 / 4, 1 / 4, 0.0], [0.0, 1 / 2, 1 / 2], prior, prior])
    assert np.allclose(cue_probabilities(MNLI, train, split), expected)


def test_the_bias_model_refuses_data_without_cues():
    with pytest.raises(InputError, match="--data_transform cue"):
        cue_probabilities(MNLI, pairs(3), pairs(3))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"cue_rho": 1.5}, "--cue_rho must be in"),
        ({"cue_tokens": ["a b", "c", "d"]}, "single words"),
        ({"cue_tokens": ["a", "a", "b"]}, "repeats a word"),
    ],
)
def test_bad_cue_options_are_refused(options, message):
    with pytest.raises(InputError, match=message):
        CueOptions(**options)


def test_cue_tokens_must_give_one_word_per_label():
    with pytest.raises(InputError, match="gives 2 words for the 3 labels of mnli"):
        cue(cue_tokens=["a", "b"]).apply(MNLI, pairs(3), pairs(3), [])


def test_cue_flags_without_the_transform_are_refused(tmp_path):
    base = ["--model_name_or_path", "m", "--task", "mnli", "--output_dir", str(tmp_path)]
    with pytest.raises(InputError, match="--cue_rho configure --data_transform cue and would do nothing without"):
        parse_args([*base, "--cue_rho", "0.9"])
    with pytest.raises(InputError, match="is not a data transform"):
        parse_args([*base, "--data_transform", "shuffle"])
    run = parse_args([*base, "--data_transform", "cue", "--cue_rho", "0.9", "--cue_tokens", "a", "b", "c"])
    assert run.transform_options == CueOptions(cue_rho=0.9, cue_tokens=["a", "b", "c"])
    with pytest.raises(InputError, match="no bias model"):
        validate_args(parse_args([*base, "--bias_model", "tokens"]))


@pytest.mark.slow
def test_a_run_with_the_cue_and_its_exact_bias_model_reports_the_three_sets(small_encoder, data_dir, tmp_path):
    out = tmp_path / "cue"  # MiniLM's tokenizer: the cue words are words it knows (check_tokenizer)
    args = mnli_run_args(small_encoder, data_dir, out, train=64, eval=32, ood=30, batch=16)
    main([*args, "--data_transform", "cue", "--cue_rho", "0.9", "--loss", "poe", "--bias_model", "cue",
          "--num_train_epochs", "1", "--do_train"])  # fmt: skip
    results = json.loads((out / "all_results.json").read_text())
    for name in ("cue_agree", "cue_disagree", "cue_absent", "hans"):
        assert 0.0 <= results[f"eval_{name}_accuracy"] <= 1.0, name
    card = (out / "README.md").read_text()
    assert "then a controlled cue (--data_transform cue): a word per label, 'zebra' (entailment)" in card
    assert "| cue_disagree | the ID evaluation set, changed by `--data_transform` (cue disagree) |" in card
    report = json.loads(next((out / "bias_model").rglob("bias_report.json")).read_text())
    assert report["model"]["type"].startswith("exact")
    # the training set's p_b: ρ = 0.9 makes the cue's label far more likely than 1/3
    train_pb = [json.loads(line) for line in next((out / "bias_model").rglob("bias_train.jsonl")).open()]
    assert np.mean([max(row["probs"]) for row in train_pb]) > 0.8


def test_a_card_claims_no_published_split_for_data_the_transform_changed():
    """The whole official dev set, read from --data_dir, is a model-index claim; with its cues it is no longer the
    published split."""
    from hf_srnets.publish.card_data import DataSources, describe_splits

    rows = MNLI.validation.official_rows
    kwargs = {"train_rows": 100, "train_total": 100, "validation_rows": rows, "ood": []}
    plain = describe_splits(MNLI, DataSources(), **kwargs)
    changed = describe_splits(MNLI, DataSources(transform="a cue"), **kwargs)
    assert plain[1].hub is not None and plain[1].model_index_dataset() is not None  # the claim without a transform
    assert changed[1].hub is None and changed[0].origin.endswith("; then a cue")


def test_tables_name_the_cue_sets_as_the_transform_names_them():
    from hf_srnets.experiments.sweep_summary import metric_title

    assert metric_title("eval_cue_disagree_accuracy") == "cue disagree accuracy"  # was "CUE disagree accuracy"
    assert metric_title("f_bias_cue_disagree") == "F_bias cue disagree"  # was "F_bias CUE_DISAGREE"


def test_the_card_does_not_say_the_extra_training_sets_were_changed():
    """`--extra_train` rows are mixed in after the transform, unchanged: only the task's own sets say it."""
    from hf_srnets.publish.card_data import DataSources, describe_splits

    sources = DataSources(transform="a cue", extra_train=("hans=h.tsv",))
    splits = describe_splits(MNLI, sources, train_rows=150, train_total=100, validation_rows=10, ood=[])
    own, extra, dev = splits
    assert own.origin.endswith("; then a cue") and dev.origin.endswith("; then the same `--data_transform`")
    assert extra.name == "extra" and "then" not in extra.origin


def test_cue_words_the_tokenizer_reads_as_one_are_refused():
    """Issue 70 (silent): `--cue_tokens zebra quartz ZEBRA` was accepted, but an uncased tokenizer reads ZEBRA as
    zebra, so two labels shared a cue while the card said one word per label. A cased tokenizer tells them apart;
    two words unknown to the vocabulary are both [UNK] and refused too."""
    from transformers import BertTokenizerFast

    vocab = {
        w: i for i, w in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "zebra", "ZEBRA", "quartz", "falcon"])
    }
    uncased = BertTokenizerFast(vocab=vocab, do_lower_case=True)
    cased = BertTokenizerFast(vocab=vocab, do_lower_case=False)
    with pytest.raises(InputError, match=r"--cue_tokens zebra and ZEBRA are read by the model's tokenizer as the same"):
        cue(cue_tokens=["zebra", "quartz", "ZEBRA"]).check_tokenizer(MNLI, uncased)
    cue(cue_tokens=["zebra", "quartz", "ZEBRA"]).check_tokenizer(MNLI, cased)
    cue(cue_tokens=["zebra", "quartz", "falcon"]).check_tokenizer(MNLI, uncased)
    with pytest.raises(InputError, match=r"--cue_tokens okapi and lemur .* same tokens \['\[UNK\]'\]"):
        cue(cue_tokens=["okapi", "lemur", "falcon"]).check_tokenizer(MNLI, uncased)
