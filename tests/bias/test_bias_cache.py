"""The bias-model cache key covers the code that computes p_b, and the package's public names stay importable."""

import ast
from pathlib import Path

import hf_srnets.bias as bias
from hf_srnets.bias import cache

BIAS_DIR = Path(bias.__file__).parent


def bias_modules_needed(start: str) -> set[str]:
    """Files of `hf_srnets.bias` that `start` imports, directly or through each other (relative imports)."""
    needed, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        tree = ast.parse((BIAS_DIR / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                todo.append(f"{node.module}.py")
    return needed


def test_code_version_hashes_every_module_compute_bias_predictions_runs():
    needed = bias_modules_needed("pipeline.py")
    assert {"pipeline.py", "tokens.py", "features.py", "vectors.py", "model.py", "report.py"} <= needed
    assert needed <= set(cache.CODE_MODULES), f"add {sorted(needed - set(cache.CODE_MODULES))} to cache.CODE_MODULES"


def test_code_version_changes_with_the_code(tmp_path):
    for name in cache.CODE_MODULES:
        (tmp_path / name).write_bytes((BIAS_DIR / name).read_bytes())
    assert cache.code_version(str(tmp_path)) == cache.code_version()
    with open(tmp_path / "tokens.py", "a", encoding="utf-8") as f:
        f.write("\n# a change\n")
    assert cache.code_version(str(tmp_path)) != cache.code_version()


def test_public_names_stay_importable_from_the_package():
    names = [
        "BIAS_MODELS", "FASTTEXT_SETTINGS", "OVERLAP_FEATURE_NAMES", "TRAIN_VECTORS", "BiasModel", "VectorsError",
        "WordVectors", "check_split", "choose_bias_model", "claim_features", "compute_bias_predictions",
        "format_report", "load_vectors", "missing_labels_message", "near_uniform_warning", "overlap_features",
        "resolve_vectors", "save_bias_predictions", "select_C", "split_label_names", "split_report", "tokenize",
        "train_vectors", "vocabulary",
    ]  # fmt: skip
    assert sorted(bias.__all__) == sorted(names)
    assert all(callable(getattr(bias, n)) or n.isupper() for n in names)
    from hf_srnets.bias.features import tokenize, vocabulary  # the old home of the tokenizer keeps working

    assert tokenize("Don't stop") == ["don", "t", "stop"] and vocabulary([["a", "b"]], [["b"]]) == {"a", "b"}
