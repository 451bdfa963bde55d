"""How far a mask search moved from its start: the fraction of mask entries that differ from magnitude pruning
of the same weights at the same sparsity (the soft init, appendix Eq. 2; the hard init, Eq. 1, prunes the same
entries). Used in results/README.md for the short-run study (`short_run_hparams.yaml`), which gives the command:

    python examples/mask_changes.py BASE_MODEL SPARSITY RUN_DIR [RUN_DIR ...]
"""

from __future__ import annotations

import argparse

from transformers import AutoModelForSequenceClassification

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import ThresholdConfig
from hf_srnets.resources.auto_loading import auto_from_pretrained


def main(argv: list[str] | None = None) -> None:
    """Print, for each run, how many mask entries differ from the soft init's (argv: as on the command line)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base", help="the model the searches started from")
    parser.add_argument("sparsity", type=float)
    parser.add_argument("runs", nargs="+", help="output dirs of mask searches on that model")
    args = parser.parse_args(argv)
    start = SRNetModel(
        auto_from_pretrained(AutoModelForSequenceClassification, args.base),
        ThresholdConfig(sparsity=args.sparsity, mask_init="soft"),
    ).binary_masks()
    total = sum(mask.numel() for mask in start.values())
    for run in args.runs:
        base = auto_from_pretrained(AutoModelForSequenceClassification, args.base)
        found = SRNetModel.from_pretrained(base, run).binary_masks()
        changed = sum(int((found[name] ^ mask).sum()) for name, mask in start.items())
        share = 100 * changed / total
        print(f"{run}: {changed:,} of {total:,} mask entries differ from magnitude pruning ({share:.2f}%)")


if __name__ == "__main__":
    main()
