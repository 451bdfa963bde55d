"""The flags of the per-example columns (`hf_srnets.data.example_columns`) on `run_glue_sparse.py`'s command line.

The package's columns have fields of `DataArguments` (`--bias_predictions`, `--teacher_predictions`,
`--sample_difficulty`). A column registered by a plugin gets its flag when the parser is built, from a dataclass
made of the registered columns whose flag is not one of `DataArguments` (`column_options_class`), and its file
reaches the run as `DataArguments.column_files`. Its flag given with a `--loss` that does not read the column is
refused (`refuse_unread_columns`), and a `--loss` that reads a column the run does not make itself needs the
column's file (`check_column_files`: "--loss X needs --flag FILE: <how to make it>.").
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..data.example_columns import EXAMPLE_COLUMNS, ExampleColumn
from ..errors import InputError
from ..losses import LOSSES
from .model_data_arguments import DataArguments
from .parser import cli_field_names


def plugin_columns() -> list[ExampleColumn]:
    """The registered columns whose flag is not a field of `DataArguments`, in the registry's order."""
    fields = cli_field_names(DataArguments)
    return [column for column in EXAMPLE_COLUMNS.values() if column.flag not in fields]


def column_options_class() -> type | None:
    """A dataclass with one optional path field per plugin column (its flag, with the column's help), None when
    every registered column is the package's."""
    columns = plugin_columns()
    if not columns:
        return None
    fields = [
        (column.flag, str | None, dataclasses.field(default=None, metadata={"help": column.help})) for column in columns
    ]
    return dataclasses.make_dataclass("ExampleColumnFiles", fields)


def plugin_column_files(given: dict[str, Any]) -> dict[str, str]:
    """The files given for plugin columns (their flags' values), by column name."""
    return {column.name: given[column.flag] for column in plugin_columns() if given.get(column.flag) is not None}


def refuse_unread_columns(loss: str, given: dict[str, Any]) -> None:
    """Raise `InputError` for a plugin column's flag given with a `--loss` that does not read the column."""
    reads = LOSSES[loss].requires
    for column in plugin_columns():
        if given.get(column.flag) is None or column.name in reads:
            continue
        readers = sorted(name for name, cls in LOSSES.items() if column.name in cls.requires)
        use = f"use --loss {' or '.join(readers)}, or drop it" if readers else "drop it"
        raise InputError(f"--{column.flag} gives the {column.name!r} column, which --loss {loss} does not read: {use}.")


def check_column_files(loss: str, data: DataArguments) -> None:
    """Raise `InputError` when `--loss` reads a registered column that the run does not make itself (every one but
    p_b, which the task's bias model gives) and its file is not given."""
    reads, files = LOSSES[loss].requires, data.example_column_files()
    for column in EXAMPLE_COLUMNS.values():
        if column.name in reads and not column.fitted_without_file and column.name not in files:
            raise InputError(column.missing_file_message(loss))
