"""Task registry, data loading into a canonical schema, and id-keyed probability columns."""

from .attack_samples import read_attack_sample
from .canonical import canonicalize
from .columns import (
    BIAS_COLUMN,
    DIFFICULTY_COLUMN,
    TEACHER_COLUMN,
    add_probability_column,
    read_difficulty,
    read_predictions,
    write_difficulty,
    write_predictions,
)
from .cues import ControlledCue, CueOptions  # registers --data_transform cue
from .example_columns import EXAMPLE_COLUMNS, ExampleColumn, per_label_columns, register_example_column
from .file_readers import read_rows
from .joins import extra_names, extra_sets, join_probabilities, row_sources
from .loading import load_file, load_source
from .tasks import (
    TASKS,
    EvalSet,
    FileFormat,
    SplitSource,
    TaskSpec,
    custom_task,
    get_task,
    id_set_name,
    ood_file_set,
    resolve_task,
)
from .transforms import DATA_TRANSFORMS, DataTransform, get_data_transform, register_data_transform

__all__ = [
    "BIAS_COLUMN",
    "DATA_TRANSFORMS",
    "DIFFICULTY_COLUMN",
    "EXAMPLE_COLUMNS",
    "TASKS",
    "TEACHER_COLUMN",
    "ControlledCue",
    "CueOptions",
    "DataTransform",
    "EvalSet",
    "ExampleColumn",
    "FileFormat",
    "SplitSource",
    "TaskSpec",
    "add_probability_column",
    "canonicalize",
    "custom_task",
    "extra_names",
    "extra_sets",
    "get_data_transform",
    "get_task",
    "id_set_name",
    "join_probabilities",
    "load_file",
    "load_source",
    "ood_file_set",
    "per_label_columns",
    "read_attack_sample",
    "read_difficulty",
    "read_predictions",
    "read_rows",
    "register_data_transform",
    "register_example_column",
    "resolve_task",
    "row_sources",
    "write_difficulty",
    "write_predictions",
]
