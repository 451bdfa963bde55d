"""Regenerate every table, interval and plot of an experiment from its committed per-example outputs.

    python -m hf_srnets.commands.report results/<experiment>            # writes report.md, report.csv, plots
    python -m hf_srnets.commands.report results/<experiment> --check    # writes nothing: exit 1 if report.md differs
    python -m hf_srnets.commands.report results/<experiment> --collect_from outputs/<sweep> \
        --metrics eval_mnli_accuracy,eval_hans_accuracy --baseline vanilla [--reference full_ce]

`--collect_from` first copies the sweep's per-run `eval_predictions/` into `results/<experiment>/per_example/`
(gzipped, probabilities rounded to 4 digits; `hf_srnets.experiments.per_example`), then regenerates. The statistics
(10,000 seeded paired bootstrap resamples, the seed-level paired t-test, Holm over a table's rows) are those of a
sweep's summary.md: `hf_srnets.experiments.report` says what the files hold.

`main` parses the options (`hf_srnets.arguments.report_arguments`) and runs the report (`hf_srnets.experiments.report`).
"""

from __future__ import annotations

from ..arguments.report_arguments import parse_args
from ..errors import run_script
from ..experiments.report import run_report

REPORT_OUTPUT = "copy of the experiment folder"  # the report is written into it: the OS errors' fixes say so


def main(argv: list[str] | None = None) -> int:
    """Parse the options, collect, check or regenerate, and print the result; return the exit status (`--check`: 1
    when the committed report.md differs)."""
    status, text = run_report(parse_args(argv, description=__doc__))
    print(text)
    return status


def script_main() -> None:
    code = main()
    if code:
        raise SystemExit(code)


def run() -> int:
    """The command's exit status: `script_main` under `run_script`, whose OS-error fixes name the experiment folder."""
    return run_script(script_main, output=REPORT_OUTPUT)


if __name__ == "__main__":
    raise SystemExit(run())
