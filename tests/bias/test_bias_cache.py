"""The bias-model cache key covers the code that computes p_b, and the package's public names stay importable."""

import ast
from pathlib import Path

import hf_srnets.bias as bias
from hf_srnets.bias import cache

PACKAGE_DIR = Path(bias.__file__).parent.parent
# the folders whose modules compute p_b (data/ only reads the task's files and names, which the key covers)
CODE_FOLDERS = ("bias/", "resources/")


def modules_needed(start: str) -> set[str]:
    """Files of `CODE_FOLDERS` (paths under the package's folder) that `start` imports, directly or through each
    other (relative imports, as the package writes them)."""
    needed, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        tree = ast.parse((PACKAGE_DIR / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level and node.module:
                folder = Path(name).parent
                for _ in range(node.level - 1):
                    folder = folder.parent
                path = (folder / node.module.replace(".", "/")).with_suffix(".py")
                if (PACKAGE_DIR / path).is_file() and path.as_posix().startswith(CODE_FOLDERS):
                    todo.append(path.as_posix())
    return needed


def test_code_version_hashes_every_module_compute_bias_predictions_runs():
    needed = modules_needed("bias/pipeline.py")
    assert {"bias/pipeline.py", "resources/tokens.py", "bias/features.py", "resources/word_vectors.py"} <= needed
    assert needed <= set(cache.CODE_MODULES), f"add {sorted(needed - set(cache.CODE_MODULES))} to cache.CODE_MODULES"


def test_code_version_changes_with_the_code(tmp_path):
    for name in cache.CODE_MODULES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes((PACKAGE_DIR / name).read_bytes())
    assert cache.code_version(str(tmp_path)) == cache.code_version()
    with open(tmp_path / "resources/tokens.py", "a", encoding="utf-8") as f:
        f.write("\n# a change\n")
    assert cache.code_version(str(tmp_path)) != cache.code_version()


def test_public_names_stay_importable_from_the_package():
    names = [
        "BIAS_MODELS", "OVERLAP_FEATURE_NAMES", "BiasModel", "check_split", "choose_bias_model", "claim_features",
        "compute_bias_predictions", "fit_or_load_bias_predictions", "fitted_bias_description", "format_report",
        "missing_labels_message", "near_uniform_warning", "ExactBiasModel", "FittedBiasModel", "get_bias_model",
        "register_bias_model",
        "overlap_features", "save_bias_predictions", "select_C", "split_label_names", "split_report", "tokenize",
        "vocabulary",
    ]  # fmt: skip
    assert sorted(bias.__all__) == sorted(names)
    assert all(callable(getattr(bias, n)) or n.isupper() for n in names)
