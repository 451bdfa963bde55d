"""The registry of per-example columns: the package's three, a column registered at test time seen by the code that
reads the registry at each call (label alignment, the loss's checks, the CLI's refusals), and duplicates refused."""

import dataclasses

import pytest
import torch
import yaml
from datasets import Dataset

from hf_srnets.arguments import parse_args, validate_args
from hf_srnets.data import EXAMPLE_COLUMNS, ExampleColumn, per_label_columns, register_example_column
from hf_srnets.data.label_alignment import remap_dataset
from hf_srnets.errors import InputError
from hf_srnets.losses import LOSSES, DebiasingLoss, register_loss
from hf_srnets.runner import files_read

BASE = ["--model_name_or_path", "m", "--output_dir", "o"]


def _no_reader(path, num_labels):
    raise AssertionError("not read in these tests")


PRIOR = ExampleColumn(
    name="label_prior",
    flag="label_priors",
    help="JSON lines {id, probs}: a prior over the labels per example (a column registered by a test).",
    per_label=True,
    read=_no_reader,
    hint="write one with the test",
)


class PriorLoss(DebiasingLoss):
    """L = 0·Σ prior: reads the `label_prior` column (a loss registered by a test)."""

    name = "test-prior"
    requires = ("label_prior",)

    def forward(self, logits, labels, label_prior):
        return (0 * label_prior).sum(), {}


@pytest.fixture
def registries():
    """The column and loss registries as they were before the test, restored after it."""
    columns, losses = dict(EXAMPLE_COLUMNS), dict(LOSSES)
    yield
    EXAMPLE_COLUMNS.clear()
    EXAMPLE_COLUMNS.update(columns)
    LOSSES.clear()
    LOSSES.update(losses)


def test_the_package_columns_their_flags_and_kinds():
    got = {name: (c.flag, c.per_label, c.fitted_without_file) for name, c in EXAMPLE_COLUMNS.items()}
    assert got == {
        "bias_probs": ("bias_predictions", True, True),
        "teacher_probs": ("teacher_predictions", True, False),
        "difficulty": ("sample_difficulty", False, False),
    }
    assert per_label_columns() == ("bias_probs", "teacher_probs")


def test_the_refusals_without_a_file_keep_their_words():
    assert EXAMPLE_COLUMNS["teacher_probs"].missing_file_message("distil") == (
        "--loss distil needs --teacher_predictions FILE: write one with --write_train_predictions from a CE "
        "fine-tuned model."
    )
    assert EXAMPLE_COLUMNS["difficulty"].missing_file_message("rmc") == (
        "--loss rmc needs --sample_difficulty FILE (RMC's d_i per training example, Eq. 1): write one with "
        "run_sample_difficulty.py."
    )


def test_a_duplicate_name_is_refused_and_the_same_column_again_changes_nothing(registries):
    register_example_column(PRIOR)
    assert register_example_column(PRIOR) is PRIOR and list(EXAMPLE_COLUMNS).count("label_prior") == 1
    with pytest.raises(ValueError, match="A per-example column named 'label_prior' is already registered"):
        register_example_column(dataclasses.replace(PRIOR, flag="other_priors"))
    with pytest.raises(ValueError, match="A per-example column named 'difficulty' is already registered"):
        register_example_column(dataclasses.replace(PRIOR, name="difficulty"))


def test_a_registered_per_label_column_follows_the_label_order(registries):
    register_example_column(PRIOR)
    assert per_label_columns() == ("bias_probs", "teacher_probs", "label_prior")
    dataset = Dataset.from_dict({"label": [0, 2], "label_prior": [[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]]})
    # perm[j] is the old id of the label that gets id j: new order (old 2, old 0, old 1)
    moved = remap_dataset(dataset, [2, 0, 1])
    assert moved["label"] == [1, 0]
    assert moved["label_prior"] == [[0.1, 0.7, 0.2], [0.6, 0.1, 0.3]]  # the same floats, moved


def test_a_registered_column_is_checked_by_its_kind_and_named_by_its_flag(registries):
    register_example_column(dataclasses.replace(PRIOR, per_label=False))
    register_loss(PriorLoss)
    loss = PriorLoss()
    # one value per example now: a row per example is refused
    with pytest.raises(ValueError, match=r"label_prior has shape \(2, 3\): one value per example expected"):
        loss(torch.zeros(2, 3), torch.tensor([0, 1]), label_prior=torch.ones(2, 3))
    with pytest.raises(ValueError, match="needs the 'label_prior' column; pass --label_priors FILE"):
        loss(torch.zeros(2, 3), torch.tensor([0, 1]))


def test_a_registered_column_gets_its_flag_its_file_and_its_refusals(registries, tmp_path):
    register_example_column(PRIOR)
    register_loss(PriorLoss)
    run = parse_args([*BASE, "--loss", "test-prior", "--label_priors", "p.jsonl", "--teacher_predictions", "t.jsonl"])
    validate_args(run)
    assert run.data.column_files == {"label_prior": "p.jsonl"}
    assert run.data.example_column_files() == {"teacher_probs": "t.jsonl", "label_prior": "p.jsonl"}
    assert {"p.jsonl", "t.jsonl"} <= set(files_read(run))  # --overwrite_output_dir never deletes them
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({"model_name_or_path": "m", "output_dir": "o", "label_priors": "q.jsonl"}))
    assert parse_args([str(config), "--loss", "test-prior"]).data.column_files == {"label_prior": "q.jsonl"}
    with pytest.raises(InputError) as refused:
        validate_args(parse_args([*BASE, "--loss", "test-prior"]))
    assert str(refused.value) == "--loss test-prior needs --label_priors FILE: write one with the test."
    with pytest.raises(InputError) as refused:
        validate_args(parse_args([*BASE, "--loss", "ce", "--label_priors", "p.jsonl"]))
    assert str(refused.value) == (
        "--label_priors gives the 'label_prior' column, which --loss ce does not read: use --loss test-prior, or "
        "drop it."
    )


def test_an_unregistered_column_has_no_flag():
    with pytest.raises(InputError, match="unrecognized arguments: --label_priors"):
        parse_args([*BASE, "--label_priors", "p.jsonl"])
