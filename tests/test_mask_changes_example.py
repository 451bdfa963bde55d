"""examples/mask_changes.py runs to completion on a tiny model: it counts the mask entries of a search that differ
from magnitude pruning of the same weights (the soft init) at the same sparsity."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from conftest import tiny_model

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import ThresholdConfig

ROOT = Path(__file__).resolve().parents[1]


def load_script():
    spec = importlib.util.spec_from_file_location("mask_changes", ROOT / "examples" / "mask_changes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mask_changes_counts_the_entries_a_search_moved(tmp_path, capsys):
    base = tmp_path / "base"
    tiny_model("bert").save_pretrained(base)
    start = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.7, mask_init="soft"))
    unmoved, moved = tmp_path / "unmoved", tmp_path / "moved"
    start.save_pretrained(unmoved)
    masks = start.binary_masks()
    first, second = sorted(masks)[:2]
    masks[first].view(-1)[:5] ^= True  # 5 entries of one matrix and 3 of another moved
    masks[second].view(-1)[-3:] ^= True
    start.set_masks(masks)
    start.save_pretrained(moved)

    load_script().main([str(base), "0.7", str(unmoved), str(moved)])
    # the tiny BERT masks 2 layers × (4 × 32·32 + 2 × 32·64) = 16,384 weights and the 3×32 classifier: 16,480;
    # 8 of them is 0.0485%
    assert capsys.readouterr().out.splitlines() == [
        f"{unmoved}: 0 of 16,480 mask entries differ from magnitude pruning (0.00%)",
        f"{moved}: 8 of 16,480 mask entries differ from magnitude pruning (0.05%)",
    ]
