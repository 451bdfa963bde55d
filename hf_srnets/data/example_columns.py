"""The registry of per-example columns a loss may read (`DebiasingLoss.requires`), each joined to the training set
by example id from a file that a `run_glue_sparse.py` flag names.

An `ExampleColumn` says everything the rest of the package needs of a column: its name (the dataset column and the
`requires` entry), its flag and the flag's help, whether it holds one value per label (a row of probabilities,
reordered with the labels when a checkpoint's label order differs, `label_alignment.remap_dataset`) or one value per
example, its reader (path, number of labels -> {example id: value}), the reader of the texts' digests its file
records (`hf_srnets.data.text_digests`: a join refuses values made on other data) and how to make its file (the
refusal of a run whose loss needs the column without the file says it). The collator stacks every registered
column as float32, the trainer keeps them, the run joins each column its loss requires by id (`runner/columns.py`)
and never deletes its file (`runner.files_read`).

The three columns of the package are registered here: `bias_probs` (p_b, `--bias_predictions`; without the file the
run fits the task's bias model), `teacher_probs` (p_t, `--teacher_predictions`) and `difficulty` (RMC's d_i,
`--sample_difficulty`). A plugin registers its own with `register_example_column`; a flag that is not one of the
package's gets its option when `run_glue_sparse.py`'s parser is built (`hf_srnets.arguments.column_options`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..registry import register
from .columns import BIAS_COLUMN, DIFFICULTY_COLUMN, TEACHER_COLUMN, read_difficulty, read_predictions
from .text_digests import read_text_digests

ColumnReader = Callable[[str | os.PathLike, int], dict[str, Any]]
DigestReader = Callable[[str | os.PathLike], dict[str, str]]


@dataclass(frozen=True)
class ExampleColumn:
    """A per-example column: `name` (the dataset column, a loss's `requires` entry, the keyword `forward` gets),
    `flag` (the `run_glue_sparse.py` option naming its file, without dashes), `help` (that option's help),
    `per_label` (True: one value per label, a row reordered with the label order, like probabilities; False: one
    value per example), `read` (path, number of labels -> {example id: value}; errors name the file), `hint` (how to
    make the file, ending the refusal "--loss X needs --flag FILE: <hint>."), `what` (optional words on the value,
    in parentheses after "FILE"), `fitted_without_file` (the run makes the column itself when the flag is not
    given: p_b, from the task's bias model) and `read_digests` (path -> {example id: text digest}, `{}` for a file
    that records none: the run checks each joined row's text against it; None: the file's format has no digests,
    the join is by id alone)."""

    name: str
    flag: str
    help: str
    per_label: bool
    read: ColumnReader
    hint: str
    what: str = ""
    fitted_without_file: bool = False
    read_digests: DigestReader | None = None

    def missing_file_message(self, loss: str) -> str:
        """The refusal of `--loss loss` without this column's file, naming the flag and how to make the file."""
        what = f" ({self.what})" if self.what else ""
        return f"--loss {loss} needs --{self.flag} FILE{what}: {self.hint}."


EXAMPLE_COLUMNS: dict[str, ExampleColumn] = {}


def register_example_column(column: ExampleColumn) -> ExampleColumn:
    """Register `column` under its name (another column of that name is refused, `hf_srnets.registry.register`)."""
    return register(EXAMPLE_COLUMNS, column.name, column, "per-example column")


def per_label_columns() -> tuple[str, ...]:
    """The registered columns with one value per label (probabilities), as they are now."""
    return tuple(name for name, column in EXAMPLE_COLUMNS.items() if column.per_label)


def _read_difficulty(path: str | os.PathLike, num_labels: int) -> dict[str, float]:
    """`read_difficulty` as a column reader (d_i does not depend on the number of labels)."""
    return read_difficulty(path)


BIAS = register_example_column(
    ExampleColumn(
        name=BIAS_COLUMN,
        flag="bias_predictions",
        help="JSON lines {id, probs} of p_b on train.",
        per_label=True,
        read=read_predictions,
        hint="write one with run_bias_model.py",
        fitted_without_file=True,
        read_digests=read_text_digests,
    )
)
TEACHER = register_example_column(
    ExampleColumn(
        name=TEACHER_COLUMN,
        flag="teacher_predictions",
        help="JSON lines {id, probs} of p_t on train.",
        per_label=True,
        read=read_predictions,
        hint="write one with --write_train_predictions from a CE fine-tuned model",
        read_digests=read_text_digests,
    )
)
DIFFICULTY = register_example_column(
    ExampleColumn(
        name=DIFFICULTY_COLUMN,
        flag="sample_difficulty",
        help="JSON lines {id, difficulty} of RMC's d_i on train (Eq. 1), written by run_sample_difficulty.py; "
        "needed by --loss rmc.",
        per_label=False,
        read=_read_difficulty,
        hint="write one with run_sample_difficulty.py",
        what="RMC's d_i per training example, Eq. 1",
        read_digests=read_text_digests,
    )
)
