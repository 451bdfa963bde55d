"""The run configuration of every command, and its parsing: the dataclasses a command's options become, checked as
they are parsed, which the work below takes (`hf_srnets.runner`, `hf_srnets.jobs`, `hf_srnets.experiments`, and
`bench/`). One module per command, `<command>_arguments`: `run_glue_sparse.py`'s (`glue_sparse_arguments`: a checked
`RunArguments` over `parser.SRNetArgumentParser`, the dataclasses of `model_data_arguments` and
`training.arguments`, and each registered method's, loss's and column's options), and `run_attack.py`'s,
`run_bias_model.py`'s, `run_export.py`'s, `run_extract_ticket.py`'s, `run_sample_difficulty.py`'s,
`run_sweep.py`'s, the report's and the Hub upload's.

The commands themselves (`main` of every script) are in `hf_srnets.commands`."""

from .glue_sparse_arguments import RunArguments, build_parser, parse_args, validate_args
from .parser import SRNetArgumentParser

__all__ = ["RunArguments", "SRNetArgumentParser", "build_parser", "parse_args", "validate_args"]
