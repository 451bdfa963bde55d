"""What a process pays for at its start: `import hf_srnets` loads its public names on first use (PEP 562, as
transformers does), and a training run's command imports neither scikit-learn (the metrics are numpy with its
arithmetic, tests/metrics/test_metrics.py) nor the plotting and export packages, which load when used."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import hf_srnets
from hf_srnets.pruning import resolve_pruning
from hf_srnets.training.trainer import SRNetTrainer

DRIVER = """
import json, sys
import hf_srnets
light = sorted(m for m in ("torch", "transformers", "datasets") if m in sys.modules)
import hf_srnets.commands.glue_sparse
unused = sorted(m for m in ("sklearn", "matplotlib", "onnx", "onnxruntime") if m in sys.modules)
resolved = sorted(name for name in hf_srnets.__all__ if getattr(hf_srnets, name) is not None)
print(json.dumps([light, unused, resolved]))
"""


def test_importing_the_package_loads_no_framework_and_the_run_command_no_unused_package():
    result = subprocess.run([sys.executable, "-c", DRIVER], capture_output=True, text=True, check=True)
    light, unused, resolved = json.loads(result.stdout.splitlines()[-1])
    assert light == [], f"`import hf_srnets` imported {light}"
    assert unused == [], f"`import hf_srnets.commands.glue_sparse` imported {unused}"
    assert resolved == sorted(hf_srnets.__all__)


def test_public_names_are_the_objects_of_their_modules():
    assert hf_srnets.SRNetTrainer is SRNetTrainer and hf_srnets.resolve_pruning is resolve_pruning
    assert set(hf_srnets.__all__) == set(hf_srnets._MODULE_OF) | {"__version__"}
    assert set(hf_srnets.__all__) <= set(dir(hf_srnets))


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="module 'hf_srnets' has no attribute 'SRNetTrainr'"):
        hf_srnets.SRNetTrainr  # noqa: B018
    with pytest.raises(ImportError):
        from hf_srnets import SRNetTrainr  # noqa: F401
