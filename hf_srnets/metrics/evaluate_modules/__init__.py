"""`evaluate` modules shipped with the package, each `<name>/<name>.py`, loadable offline by path:
`evaluate.load(HANS_METRIC_PATH)`, `evaluate.load(RELATIVE_BIAS_METRIC_PATH)`."""

from pathlib import Path

_HERE = Path(__file__).resolve().parent

HANS_METRIC_PATH = str(_HERE / "hans")
RELATIVE_BIAS_METRIC_PATH = str(_HERE / "relative_bias")

__all__ = ["HANS_METRIC_PATH", "RELATIVE_BIAS_METRIC_PATH"]
