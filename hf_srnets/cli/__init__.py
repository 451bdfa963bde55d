"""The command lines, parsing only: `run_glue_sparse.py`'s options (`options`, over `parser.SRNetArgumentParser` and
the dataclasses of `arguments` and `training.arguments`) turned into a checked `RunArguments`, and `run_attack.py`'s
(`attack_arguments`), `run_bias_model.py`'s (`bias_model_arguments`) and `run_extract_ticket.py`'s
(`extract_ticket_arguments`).

The commands themselves (`main` of every script) are in `hf_srnets.commands`; one run's phases in
`hf_srnets.runner`."""

from .options import RunArguments, build_parser, parse_args, validate_args
from .parser import SRNetArgumentParser

__all__ = ["RunArguments", "SRNetArgumentParser", "build_parser", "parse_args", "validate_args"]
