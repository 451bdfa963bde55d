"""The command line of `run_glue_sparse.py`: its options (`options`, over `parser.SRNetArgumentParser`) and a run
as package phases (`run.main`: parse -> validate -> output dir -> `data` -> `model` -> trainer -> train ->
evaluate -> `outputs`)."""

from .glue_sparse import main, run
from .options import RunArguments, build_parser, parse_args, validate_args
from .parser import SRNetArgumentParser

__all__ = ["RunArguments", "SRNetArgumentParser", "build_parser", "main", "parse_args", "run", "validate_args"]
