"""`--help` of every script: the first command a user types must list the options, not crash."""

from pathlib import Path

import pytest
from prewarmed import run_python

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p.name for p in REPO_ROOT.glob("*.py"))
# an option each script must list: a sign that the whole parser was built, not just the usage line
EXPECTED = {
    "run_glue_sparse.py": ["--pruning", "--imp_prune_ratio", "--sparsity", "--loss", "--ood_file"],
    "run_bias_model.py": ["--task", "--output_dir", "--vectors"],
    "run_sweep.py": ["--sparsities", "--seeds"],
    "run_extract_ticket.py": ["--search_dir", "--sparsity", "--scope", "--output_dir"],
    "run_export.py": ["--model_dir", "--format", "--output_dir", "--sparsity_format", "--opset", "--tolerance"],
    "run_sample_difficulty.py": ["--output_dir", "--sparsities", "--alpha", "--hard_fraction", "--model_dirs"],
    "run_attack.py": ["--model_name_or_path", "--recipes", "--num_examples", "--attack_file", "--query_budget"],
}


def test_every_script_is_covered():
    assert set(SCRIPTS) == set(EXPECTED), "add the new script's options to EXPECTED"


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_help_lists_the_options(script):
    done = run_python(REPO_ROOT / script, "--help", cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage:")
    for option in EXPECTED[script]:
        assert option in done.stdout, option
