"""A loss registered from this file alone gets the plugin contract the other registries keep: its option is a flag of
`run_glue_sparse.py` (declared once, in a JSON/YAML config too) that reaches the loss the trainer builds, and is
refused by name with another `--loss`; a loss that reads a per-example column of its own, registered from this file
too (`register_example_column`), gets that column, and only it, in `forward`, through the Python API and through
`run_glue_sparse.py` (the column's flag names a file joined by example id). No package file changes."""

import json
import math
from dataclasses import dataclass, field
from typing import ClassVar

import pytest
import torch
import torch.nn.functional as F
import yaml
from conftest import mnli_run_args, tiny_model
from training.helpers import cpu_args, synthetic_nli, tiny_tokenizer

from hf_srnets.arguments import build_parser, parse_args, validate_args
from hf_srnets.commands.glue_sparse import main
from hf_srnets.data import EXAMPLE_COLUMNS, ExampleColumn, get_task, load_file, register_example_column
from hf_srnets.errors import InputError
from hf_srnets.losses import LOSSES, DebiasingLoss, register_loss
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer

BASE = ["--model_name_or_path", "m"]
WEIGHT_COLUMN = "example_weight"


@dataclass
class ScaledOptions:
    """The one setting of `ScaledCrossEntropyLoss`."""

    ce_scale: float = field(default=1.0, metadata={"help": "s of L = s·CE (a loss registered by a test); > 0."})

    def __post_init__(self) -> None:
        if not self.ce_scale > 0:
            raise InputError(f"--ce_scale must be > 0 (the factor s of L = s·CE), got {self.ce_scale}")


class ScaledCrossEntropyLoss(DebiasingLoss):
    """L = s·(−y·log p_m), averaged over the batch, s = `ce_scale`: a loss with one option. Logs `scaled`."""

    name = "test-scaled-ce"
    options_class = ScaledOptions
    ce_scale: float

    def forward(self, logits: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        loss = self.ce_scale * F.cross_entropy(logits.float(), labels)
        return loss, {"scaled": loss.detach()}


def read_weights(path: str, num_labels: int) -> dict[str, float]:
    """JSON lines `{"id": ..., "weight": w}` -> id -> w; a duplicate id is refused naming the file."""
    weights: dict[str, float] = {}
    with open(path, encoding="utf-8") as f:
        for row in map(json.loads, filter(str.strip, f)):
            if str(row["id"]) in weights:
                raise InputError(f"{path}: duplicate id {row['id']!r}")
            weights[str(row["id"])] = float(row["weight"])
    return weights


WEIGHTS = ExampleColumn(
    name=WEIGHT_COLUMN,
    flag="example_weights",
    help="JSON lines {id, weight}: w_i of --loss test-weighted-ce (a column registered by a test).",
    per_label=False,
    read=read_weights,
    hint="write one with the test",
)


class WeightedCrossEntropyLoss(DebiasingLoss):
    """L = (1/N) Σ_i w_i·(−y_i·log p_m,i), w_i the `example_weight` column: a loss reading a column of its own.
    Logs the batch-mean weight `mean_weight`; records the weights of each training batch in `received`."""

    name = "test-weighted-ce"
    requires = (WEIGHT_COLUMN,)
    received: ClassVar[list[float]] = []  # evaluation sets have no weights: their batches are scored by CE

    def forward(
        self, logits: torch.Tensor, labels: torch.Tensor, example_weight: torch.Tensor
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        WeightedCrossEntropyLoss.received += example_weight.tolist()
        per_example = F.cross_entropy(logits.float(), labels, reduction="none")
        return (example_weight * per_example).mean(), {"mean_weight": example_weight.mean()}


@pytest.fixture
def registry():
    """The loss and column registries as they were before the test, restored after it."""
    saved, saved_columns = dict(LOSSES), dict(EXAMPLE_COLUMNS)
    yield LOSSES
    LOSSES.clear()
    LOSSES.update(saved)
    EXAMPLE_COLUMNS.clear()
    EXAMPLE_COLUMNS.update(saved_columns)


def _option_strings() -> set[str]:
    return {option for action in build_parser()._actions for option in action.option_strings}


def test_a_loss_with_one_option_gets_its_flag_and_the_trainer_builds_it_with_the_value(registry, tmp_path):
    assert "--ce_scale" not in _option_strings()
    register_loss(ScaledCrossEntropyLoss)
    assert "--ce_scale" in _option_strings() and "s of L = s·CE" in build_parser().format_help()

    run = parse_args([*BASE, "--output_dir", str(tmp_path), "--loss", "test-scaled-ce", "--ce_scale", "3"])
    validate_args(run)
    assert run.loss_options == ScaledOptions(3.0)
    assert run.training.loss_options == {"ce_scale": 3.0}
    trainer = SRNetTrainer(model=tiny_model("bert"), args=run.training)
    loss = trainer.objective.loss
    assert isinstance(loss, ScaledCrossEntropyLoss) and loss.ce_scale == 3.0
    # 3 classes, equal logits: CE = ln 3, so L = 3·ln 3
    value, parts = loss(torch.zeros(1, 3), torch.tensor([0]))
    assert value.item() == pytest.approx(3 * math.log(3)) and set(parts) == {"scaled", "ce"}
    assert parts["ce"].item() == pytest.approx(math.log(3))  # logged for every loss, by the base class
    assert loss.get_config_dict() == {"loss": "test-scaled-ce", "requires": [], "ce_scale": 3.0}


def test_a_registered_loss_option_in_a_config_file_and_its_checks(registry, tmp_path):
    register_loss(ScaledCrossEntropyLoss)
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({"model_name_or_path": "m", "output_dir": "o", "loss": "test-scaled-ce"}))
    assert parse_args([str(config), "--ce_scale", "0.5"]).training.loss_settings() == {"ce_scale": 0.5}
    config.write_text(yaml.safe_dump({"model_name_or_path": "m", "output_dir": "o", "ce_scale": 0.25}))
    assert parse_args([str(config), "--loss", "test-scaled-ce"]).loss_options == ScaledOptions(0.25)
    assert parse_args([*BASE, "--output_dir", "o", "--loss", "test-scaled-ce"]).loss_options == ScaledOptions(1.0)
    with pytest.raises(InputError, match="--ce_scale must be > 0"):
        parse_args([*BASE, "--output_dir", "o", "--loss", "test-scaled-ce", "--ce_scale", "-1"])


@pytest.mark.parametrize("other", ["ce", "focal", "distil"])
def test_a_registered_loss_option_with_another_loss_is_refused_by_name(registry, other):
    register_loss(ScaledCrossEntropyLoss)
    run = parse_args(
        [*BASE, "--output_dir", "o", "--teacher_predictions", "t.jsonl", "--loss", other, "--ce_scale", "2"]
    )
    with pytest.raises(InputError) as refused:
        validate_args(run)
    assert str(refused.value) == (
        f"--ce_scale configures --loss test-scaled-ce and would do nothing with --loss {other}: use --loss "
        "test-scaled-ce, or drop it."
    )


def test_a_loss_reading_a_column_of_its_own_gets_only_that_column(registry, tmp_path):
    register_example_column(WEIGHTS)
    register_loss(WeightedCrossEntropyLoss)
    loss = LOSSES["test-weighted-ce"]()
    # equal logits: CE_i = ln 3; weights 2 and 0 give (2·ln 3 + 0)/2 = ln 3; other columns are not passed on
    value, _ = loss(torch.zeros(2, 3), torch.tensor([0, 1]), example_weight=torch.tensor([2.0, 0.0]), bias_probs=None)
    assert value.item() == pytest.approx(math.log(3))
    with pytest.raises(ValueError, match="needs the 'example_weight' column; pass --example_weights FILE"):
        loss(torch.zeros(2, 3), torch.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"example_weight has shape \(3,\): one value per example expected"):
        loss(torch.zeros(2, 3), torch.tensor([0, 1]), example_weight=torch.ones(3))

    tokenizer = tiny_tokenizer(tmp_path)
    data = synthetic_nli(tokenizer, n=32)  # with a bias_probs column, which this loss must not receive
    # integer weights: as an example column the collator stacks them as float32 (the tokenizer's padding would not)
    train = data.add_column(WEIGHT_COLUMN, [2] * 32)
    trainer = SRNetTrainer(
        model=tiny_model("bert"),
        args=cpu_args(tmp_path / "out", loss="test-weighted-ce", max_steps=2, logging_steps=1),
        train_dataset=train,
        eval_dataset=data,  # no weights: evaluation reports cross-entropy
        data_collator=SRNetDataCollator(tokenizer),
    )
    batch = next(iter(trainer.get_train_dataloader()))
    assert batch[WEIGHT_COLUMN].dtype == torch.float32 and batch[WEIGHT_COLUMN].shape == (8,)
    trainer.train()
    logs = [entry for entry in trainer.state.log_history if "loss" in entry]
    assert len(logs) == 2 and all(entry["loss_mean_weight"] == 2.0 for entry in logs)
    assert math.isfinite(trainer.evaluate()["eval_loss"])


def _weights_file(data_dir, path, drop: str | None = None) -> tuple[list[str], dict[str, float]]:
    """A weights file for every row of the run's training file (MNLI dev-mismatched), written in reverse row order
    (a join by position would give the last rows' weights), w = 1 + k/1000 for the row k; `drop` leaves one id out.
    Returns the rows' ids in file order and the weights written."""
    task = get_task("mnli")
    ids = load_file(str(data_dir / "mnli" / "dev_mismatched.tsv"), task.label_names, aliases=task.label_aliases)["id"]
    weights = {ex_id: 1 + k / 1000 for k, ex_id in enumerate(ids) if ex_id != drop}
    with open(path, "w", encoding="utf-8") as f:
        for ex_id in reversed(ids):
            if ex_id in weights:
                f.write(json.dumps({"id": ex_id, "weight": weights[ex_id]}) + "\n")
    return ids, weights


def test_a_column_registered_in_a_test_reaches_the_loss_through_the_script(registry, pretrained, data_dir, tmp_path):
    register_example_column(WEIGHTS)
    register_loss(WeightedCrossEntropyLoss)
    assert "--example_weights" in _option_strings()
    assert "(a column registered by a test)" in " ".join(build_parser().format_help().split())  # help lines wrap
    ids, weights = _weights_file(data_dir, tmp_path / "weights.jsonl")
    WeightedCrossEntropyLoss.received = []
    args = mnli_run_args(pretrained, data_dir, tmp_path / "out", train=64, eval=32, ood=60, batch=16)
    main(
        [
            *args,
            "--do_train",
            "--num_train_epochs",
            "1",
            "--loss",
            "test-weighted-ce",
            "--example_weights",
            str(tmp_path / "weights.jsonl"),
        ]
    )
    # one epoch over the first 64 rows: each row's weight once (in the shuffled order of the batches)
    expected = sorted(weights[ex_id] for ex_id in ids[:64])
    assert sorted(WeightedCrossEntropyLoss.received) == pytest.approx(expected)
    assert (tmp_path / "weights.jsonl").is_file()


def test_a_registered_column_with_a_missing_id_or_an_unreading_loss_is_refused(
    registry, pretrained, data_dir, tmp_path
):
    register_example_column(WEIGHTS)
    register_loss(WeightedCrossEntropyLoss)
    ids, _ = _weights_file(data_dir, tmp_path / "weights.jsonl", drop=None)
    missing = ids[5]
    _weights_file(data_dir, tmp_path / "missing.jsonl", drop=missing)
    args = mnli_run_args(pretrained, data_dir, tmp_path / "out", train=64, eval=32, ood=60, batch=16)
    with pytest.raises(
        InputError, match=rf"missing\.jsonl: no prediction for 1 of 64 examples, first missing id '{missing}'"
    ):
        main([*args, "--loss", "test-weighted-ce", "--example_weights", str(tmp_path / "missing.jsonl")])
    with pytest.raises(InputError) as refused:
        main([*args, "--loss", "ce", "--example_weights", str(tmp_path / "weights.jsonl")])
    assert str(refused.value) == (
        "--example_weights gives the 'example_weight' column, which --loss ce does not read: use --loss "
        "test-weighted-ce, or drop it."
    )
