"""The command line of `run_glue_sparse.py`, parsing only: its options (`options`, over `parser.SRNetArgumentParser`
and the dataclasses of `arguments` and `training.arguments`) turned into a checked `RunArguments`.

The commands themselves (`main` of every script) are in `hf_srnets.commands`; one run's phases in
`hf_srnets.runner`."""

from .options import RunArguments, build_parser, parse_args, validate_args
from .parser import SRNetArgumentParser

__all__ = ["RunArguments", "SRNetArgumentParser", "build_parser", "parse_args", "validate_args"]
