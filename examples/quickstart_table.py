"""The quickstart's last step: the README's table of its two runs and a JSON summary a test compares.

    python examples/quickstart_table.py outputs/quickstart

prints the table (full fine-tuning and the SRNet: sparsity, MNLI-m and HANS accuracy, HANS by gold label) and
writes `quickstart_results.json` into the same folder: per run the metrics as `all_results.json` holds them, the
torch thread count, and the sha256 of the decoded masks (over module names and kept/pruned entries, so it does not
depend on how the mask file encodes them); beside them the torch version and CPU capability, since bit-identical
numbers are promised only for the same torch build, CPU kind and thread count.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import torch

from hf_srnets.pruning.mask_files import read_mask_dir

RUNS = {"full_ce": "full fine-tuning, `ce`", "mask_poe_50": "SRNet: mask training, `poe`"}
TABLE_KEYS = ("eval_mnli_accuracy", "eval_hans_accuracy", "eval_hans_entailment_accuracy")
TABLE_KEYS += ("eval_hans_non-entailment_accuracy",)
SUMMARY_KEYS = ("sparsity", *TABLE_KEYS, "eval_mnli_loss", "train_loss", "train_steps", "torch_num_threads")
SUMMARY_KEYS += ("precision", "train_runtime")
SUMMARY_NAME = "quickstart_results.json"


def masks_sha256(run_dir: Path) -> str | None:
    """sha256 over each masked module's name and its bool mask (C order), modules sorted; None without masks."""
    if not (run_dir / "srnet_config.json").is_file():
        return None
    _, masks = read_mask_dir(run_dir)
    digest = hashlib.sha256()
    for name in sorted(masks):
        digest.update(name.encode())
        digest.update(masks[name].to(torch.bool).contiguous().numpy().tobytes())
    return digest.hexdigest()


def summarize(out: Path) -> dict[str, Any]:
    runs = {}
    for name in RUNS:
        path = out / name / "all_results.json"
        if not path.is_file():
            raise SystemExit(f"error: {path} not found: run examples/quickstart.sh (its steps 2 and 3) first")
        results = json.loads(path.read_text(encoding="utf-8"))
        runs[name] = {key: results.get(key) for key in SUMMARY_KEYS}
        runs[name]["masks_sha256"] = masks_sha256(out / name)
    environment = {"torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability()}
    return {"environment": environment, "runs": runs}


def table(summary: dict[str, Any]) -> str:
    lines = [
        "| run | sparsity | MNLI-m acc (ID) | HANS acc (OOD) | HANS entailment | HANS non-entailment |",
        "|---|---|---|---|---|---|",
    ]
    for name, title in RUNS.items():
        run = summary["runs"][name]
        cells = [f"{100 * run['sparsity']:.0f}%"] + [f"{100 * run[key]:.2f}" for key in TABLE_KEYS]
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the quickstart's output folder (OUT)")
    args = parser.parse_args(argv)
    summary = summarize(args.out)
    (args.out / SUMMARY_NAME).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    threads = {run["torch_num_threads"] for run in summary["runs"].values()}
    sys.stdout.write(table(summary) + f"\n\n(torch threads: {', '.join(map(str, sorted(threads)))}; ")
    sys.stdout.write(f"written to {args.out / SUMMARY_NAME})\n")


if __name__ == "__main__":
    main()
