"""Regenerate every table, interval and plot of an experiment from its committed per-example outputs.

    python -m hf_srnets.commands.report results/<experiment>            # writes report.md, report.csv, plots
    python -m hf_srnets.commands.report results/<experiment> --check    # writes nothing: exit 1 if report.md differs
    python -m hf_srnets.commands.report results/<experiment> --collect_from outputs/<sweep> \
        --metrics eval_mnli_accuracy,eval_hans_accuracy --baseline vanilla [--reference full_ce]

`--collect_from` first copies the sweep's per-run `eval_predictions/` into `results/<experiment>/per_example/`
(gzipped, probabilities rounded to 4 digits; `hf_srnets.experiments.per_example`), then regenerates. The statistics
(10,000 seeded paired bootstrap resamples, the seed-level paired t-test, Holm over a table's rows) are those of a
sweep's summary.md: `hf_srnets.experiments.report` says what the files hold.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import InputError, run_script
from ..experiments.paired_table import column_spec, parse_column
from ..experiments.per_example import collect_per_example
from ..experiments.report import REPORT_MARKDOWN, regenerate, report_text
from ..run_files import RESULTS_NAME

REPORT_OUTPUT = "copy of the experiment folder"  # the report is written into it: the OS errors' fixes say so


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("experiment_dir", help="results/<experiment>, holding per_example/")
    parser.add_argument("--check", action="store_true", help="compare with the committed report.md, write nothing")
    parser.add_argument("--no_plots", action="store_true", help="write report.md and report.csv only")
    parser.add_argument("--collect_from", help="a sweep's output_dir: copy its runs' per-example outputs first")
    parser.add_argument("--metrics", help=f"with --collect_from: comma-separated {RESULTS_NAME} keys")
    parser.add_argument("--baseline", help="with --collect_from: the method every other is paired with")
    parser.add_argument("--reference", help="with --collect_from: the full model F_bias and ratios are against")
    parser.add_argument(
        "--extra_run",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="with --collect_from: also copy a run made outside the sweep (the dense model its methods start from) "
        "as method NAME; repeatable",
    )
    parser.add_argument(
        "--columns",
        help="with --collect_from and --baseline: comma-separated TITLE=SET, TITLE=SET:LABEL (accuracy on one gold "
        "label's examples) or TITLE=ID>OOD (F_bias against --reference): a per-column paired section of report.md, "
        "e.g. 'MNLI-m=mnli,HANS non-ent=hans:non-entailment,F_bias=mnli>hans'",
    )
    parser.add_argument(
        "--column_baselines",
        help="with --columns: comma-separated methods, a per-column section against each (default: --baseline)",
    )
    return parser


def check(experiment_dir: str) -> int:
    """0 when the regenerated report.md equals the committed one, else 1 with the first differing line."""
    path = os.path.join(experiment_dir, REPORT_MARKDOWN)
    if not os.path.isfile(path):
        raise InputError(f"{path} not found: run without --check to write it")
    text, _, _ = report_text(experiment_dir)
    with open(path, encoding="utf-8") as f:
        committed = f.read()
    if committed == text:
        print(f"{path}: identical to the regenerated report")
        return 0
    new, old = text.splitlines(), committed.splitlines()
    line = next((i for i, (a, b) in enumerate(zip(new, old)) if a != b), min(len(new), len(old)))
    print(f"{path} differs from the regenerated report at line {line + 1}:")
    print(f"  committed:   {old[line] if line < len(old) else '(end of file)'}")
    print(f"  regenerated: {new[line] if line < len(new) else '(end of file)'}")
    return 1


def extra_run(spec: str) -> tuple[str, str]:
    name, sep, directory = spec.partition("=")
    if not sep or not name or not directory:
        raise InputError(f"--extra_run {spec!r}: expected NAME=DIR, e.g. teacher=outputs/rmc_large_minilm_mnli/teacher")
    return name, directory


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    if not os.path.isdir(args.experiment_dir):
        raise InputError(f"{args.experiment_dir} is not a folder: give results/<experiment>")
    if args.collect_from:
        if not args.metrics:
            raise InputError("--collect_from needs --metrics, e.g. --metrics eval_mnli_accuracy,eval_hans_accuracy")
        metrics = args.metrics.split(",")
        if (args.columns or args.column_baselines) and not args.baseline:
            raise InputError("--columns and --column_baselines pair methods with a baseline: give --baseline METHOD")
        extra = dict(extra_run(spec) for spec in args.extra_run)
        columns = [column_spec(parse_column(c)) for c in args.columns.split(",")] if args.columns else []
        against = args.column_baselines.split(",") if args.column_baselines else []
        collect_per_example(
            args.collect_from, args.experiment_dir, metrics, args.baseline, args.reference, extra, columns, against
        )
    if args.check:
        return check(args.experiment_dir)
    print(regenerate(args.experiment_dir, plots=not args.no_plots))
    return 0


def script_main() -> None:
    code = main()
    if code:
        raise SystemExit(code)


def run() -> int:
    """The command's exit status: `script_main` under `run_script`, whose OS-error fixes name the experiment folder."""
    return run_script(script_main, output=REPORT_OUTPUT)


if __name__ == "__main__":
    raise SystemExit(run())
