"""The command line of `python -m hf_srnets.commands.report`, parsing only: `ReportArguments` (the experiment folder,
check or write, and what to collect from a sweep first), checked as they are parsed. The report itself is
`hf_srnets.experiments.report`."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..errors import InputError
from ..run_files import RESULTS_NAME
from .parser import parse_command


@dataclass
class ReportArguments:
    """The experiment folder, whether to check or write, and the sweep to collect per-example outputs from first."""

    experiment_dir: str = field(
        metadata={"help": "results/<experiment>, holding per_example/ (also the first argument)."}
    )
    check: bool = field(default=False, metadata={"help": "Compare with the committed report.md, write nothing."})
    no_plots: bool = field(default=False, metadata={"help": "Write report.md and report.csv only."})
    collect_from: str | None = field(
        default=None, metadata={"help": "A sweep's output_dir: copy its runs' per-example outputs first."}
    )
    metrics: str | None = field(
        default=None, metadata={"help": f"With --collect_from: comma-separated {RESULTS_NAME} keys."}
    )
    baseline: str | None = field(
        default=None, metadata={"help": "With --collect_from: the method every other is paired with."}
    )
    reference: str | None = field(
        default=None, metadata={"help": "With --collect_from: the full model F_bias and ratios are against."}
    )
    extra_run: list[str] = field(
        default_factory=list,
        metadata={
            "help": "With --collect_from: NAME=DIR, also copy a run made outside the sweep (the dense model its "
            "methods start from) as method NAME; repeatable, or several after one flag.",
            "action": "extend",
            "metavar": "NAME=DIR",
        },
    )
    columns: str | None = field(
        default=None,
        metadata={
            "help": "With --collect_from and --baseline: comma-separated TITLE=SET, TITLE=SET:LABEL (accuracy on one "
            "gold label's examples) or TITLE=ID>OOD (F_bias against --reference): a per-column paired section of "
            "report.md, e.g. 'MNLI-m=mnli,HANS non-ent=hans:non-entailment,F_bias=mnli>hans'."
        },
    )
    column_baselines: str | None = field(
        default=None,
        metadata={"help": "With --columns: comma-separated methods, a per-column section against each (default: "
                  "--baseline)."},
    )  # fmt: skip

    def __post_init__(self) -> None:
        if not os.path.isdir(self.experiment_dir):
            raise InputError(f"{self.experiment_dir} is not a folder: give results/<experiment>")
        if self.collect_from and not self.metrics:
            raise InputError("--collect_from needs --metrics, e.g. --metrics eval_mnli_accuracy,eval_hans_accuracy")
        if self.collect_from and (self.columns or self.column_baselines) and not self.baseline:
            raise InputError("--columns and --column_baselines pair methods with a baseline: give --baseline METHOD")
        self.extra_runs()  # a malformed NAME=DIR is refused before anything is copied

    def extra_runs(self) -> dict[str, str]:
        """`--extra_run` as method name -> run folder."""
        return dict(_extra_run(spec) for spec in self.extra_run)


def _extra_run(spec: str) -> tuple[str, str]:
    name, sep, directory = spec.partition("=")
    if not sep or not name or not directory:
        raise InputError(f"--extra_run {spec!r}: expected NAME=DIR, e.g. teacher=outputs/rmc_large_minilm_mnli/teacher")
    return name, directory


def parse_args(argv: list[str] | None = None, description: str | None = None) -> ReportArguments:
    """`ReportArguments` from `argv` (default: the command line); the experiment folder may come first."""
    (args,) = parse_command([ReportArguments], argv, first="experiment_dir", description=description)
    return args
