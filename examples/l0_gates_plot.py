"""Robust Lottery Tickets, Fig. 1: the share of hard-concrete gates at exactly 0 and exactly 1 over an l0 search,
and the ticket's sparsity per Transformer layer (Fig. 3).

An l0 search logs `l0_gates_zero` / `l0_gates_one` (the deterministic gates of Eq. 5, over every searched weight),
`l0_expected_density` (Eq. 4) and `l0_lambda` at each logging step into the Trainer's `log_history`. This script reads
them from `<search_dir>/trainer_state.json` (a finished search) or from its latest `checkpoint-*/` (one still
running), or from the `gates.csv` this script wrote there (a results folder: the plots regenerate from committed
files), and writes `gates.csv` and `fig1_gates.png`; with `--ticket DIR` (a mask dir, e.g. from
`run_extract_ticket.py`) also `layers.csv`, the share of pruned weights per layer; with `--compare LABEL=DIR` (any
number of other searches) also `fig1_compare.png`, each search's share of gates at 0 or 1 and its λ on one step axis.

    python examples/l0_gates_plot.py outputs/robust_tickets_fig1/search --output results/robust_tickets_fig1 \
        --ticket outputs/robust_tickets_fig1/tickets/sparsity_0.30
    python examples/l0_gates_plot.py outputs/robust_tickets_fig1_authors_lambda/search --label "authors' λ timing" \
        --output results/robust_tickets_fig1/authors_lambda \
        --compare "hf_srnets λ timing=outputs/robust_tickets_fig1/search"
    python examples/l0_gates_plot.py results/robust_tickets_fig1 --output /tmp/fig1 --label "hf_srnets' λ timing" \
        --compare "authors' λ timing=results/robust_tickets_fig1/authors_lambda"   # from the committed curves
"""

from __future__ import annotations

import argparse
import csv
import json
import re
from pathlib import Path

from hf_srnets.errors import InputError

FIELDS = ("step", "l0_gates_zero", "l0_gates_one", "l0_expected_density", "l0_lambda")
PAPER_POLARISED = 0.9  # Fig. 1: more than 90% of the gates end at exactly 0 or 1


def trainer_state(search_dir: Path) -> Path:
    """The search's `trainer_state.json`, else that of its latest checkpoint."""
    if (search_dir / "trainer_state.json").is_file():
        return search_dir / "trainer_state.json"
    checkpoints = sorted(search_dir.glob("checkpoint-*/trainer_state.json"), key=lambda p: int(p.parent.name[11:]))
    if not checkpoints:
        raise InputError(
            f"{search_dir} holds no trainer_state.json (nor a checkpoint-*/ with one, nor this script's gates.csv): "
            "give the output dir of an l0 search or a results folder of this script"
        )
    return checkpoints[-1]


def search_rows(search_dir: Path) -> tuple[Path, list[dict[str, float]]]:
    """The file the curve is read from and its rows: the search's trainer state (`trainer_state`), else the
    `gates.csv` of a results folder."""
    has_state = (search_dir / "trainer_state.json").is_file() or any(search_dir.glob("checkpoint-*/"))
    if not has_state and (search_dir / "gates.csv").is_file():
        return search_dir / "gates.csv", csv_rows(search_dir / "gates.csv")
    state_file = trainer_state(search_dir)
    return state_file, gate_rows(state_file)


def csv_rows(path: Path) -> list[dict[str, float]]:
    """The rows of a `gates.csv` written by `write_csv`, with the types they were written with."""
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != FIELDS:
            raise InputError(f"{path} has the columns {reader.fieldnames}, not those of this script's {FIELDS}")
        return [{key: int(row[key]) if key == "step" else float(row[key]) for key in FIELDS} for row in reader]


def gate_rows(state_file: Path) -> list[dict[str, float]]:
    """One row per logging step that has the gate fractions."""
    history = json.loads(state_file.read_text(encoding="utf-8"))["log_history"]
    rows = [{key: entry[key] for key in FIELDS} for entry in history if "l0_gates_one" in entry]
    if not rows:
        raise InputError(f"{state_file} logs no l0 gate fractions: was it an l0 search (--pruning l0)?")
    return rows


def layer_sparsity(ticket: Path) -> dict[str, float]:
    """Share of pruned weights per Transformer layer (`layer.<i>`) and for the rest (e.g. the classifier)."""
    from hf_srnets.pruning.mask_files import read_mask_dir

    _, masks = read_mask_dir(ticket)  # True = kept
    pruned: dict[str, list[int]] = {}
    for name, mask in masks.items():
        found = re.search(r"layer\.(\d+)\.", name)
        group = f"layer {int(found[1])}" if found else name
        counts = pruned.setdefault(group, [0, 0])
        counts[0] += int((~mask).sum())
        counts[1] += mask.numel()
    return {group: zeros / total for group, (zeros, total) in pruned.items()}


def write_csv(rows: list[dict], path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def plot(rows: list[dict[str, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [row["step"] for row in rows]
    zero = [100 * row["l0_gates_zero"] for row in rows]
    one = [100 * row["l0_gates_one"] for row in rows]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(steps, zero, label="gates = 0")
    ax.plot(steps, one, label="gates = 1")
    ax.plot(steps, [a + b for a, b in zip(zero, one)], label="gates at 0 or 1", color="black")
    ax.axhline(100 * PAPER_POLARISED, ls="--", color="grey", lw=1, label="paper, Fig. 1: > 90%")
    ax.set_xlabel("search step")
    ax.set_ylabel("% of gates")
    ax.set_ylim(0, 100)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_comparison(curves: dict[str, list[dict[str, float]]], path: Path) -> None:
    """Share of gates at 0 or 1 (top) and λ (bottom) over the steps of each labelled search."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 4.5), sharex=True, height_ratios=(3, 1))
    for label, rows in curves.items():
        steps = [row["step"] for row in rows]
        line = top.plot(steps, [100 * (row["l0_gates_zero"] + row["l0_gates_one"]) for row in rows], label=label)
        bottom.plot(steps, [row["l0_lambda"] for row in rows], color=line[0].get_color())
    top.axhline(100 * PAPER_POLARISED, ls="--", color="grey", lw=1, label="paper, Fig. 1: > 90%")
    top.set_ylabel("% of gates at 0 or 1")
    top.set_ylim(0, 100)
    top.legend(loc="lower right", fontsize=8)
    bottom.set_ylabel("λ")
    bottom.set_xlabel("search step")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def labelled_dir(value: str) -> tuple[str, Path]:
    """`LABEL=DIR` of `--compare`."""
    label, sep, path = value.partition("=")
    if not sep or not label or not path:
        raise argparse.ArgumentTypeError(f"--compare takes LABEL=SEARCH_DIR, got {value!r}")
    return label, Path(path)


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "search_dir",
        type=Path,
        help="the output dir of an l0 search (finished or with checkpoints), or a folder holding its gates.csv",
    )
    parser.add_argument("--output", type=Path, required=True, help="folder for gates.csv, fig1_gates.png, layers.csv")
    parser.add_argument("--ticket", type=Path, help="a mask dir whose per-layer sparsity to report (Fig. 3)")
    parser.add_argument("--label", default="this search", help="this search's name in fig1_compare.png")
    parser.add_argument(
        "--compare",
        type=labelled_dir,
        action="append",
        default=[],
        metavar="LABEL=DIR",
        help="another l0 search to draw beside this one in fig1_compare.png (repeatable)",
    )
    args = parser.parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    state_file, rows = search_rows(args.search_dir)
    write_csv(rows, args.output / "gates.csv")
    plot(rows, args.output / "fig1_gates.png")
    summary: dict[str, object] = {"read_from": str(state_file), "last": rows[-1]}
    if args.ticket is not None:
        layers = layer_sparsity(args.ticket)
        write_csv([{"layer": k, "sparsity": v} for k, v in layers.items()], args.output / "layers.csv")
        summary["layers"] = layers
    if args.compare:
        curves = {args.label: rows} | {label: search_rows(path)[1] for label, path in args.compare}
        plot_comparison(curves, args.output / "fig1_compare.png")
        summary["compared"] = {label: curve[-1] for label, curve in curves.items()}
    print(json.dumps(summary, indent=1))
    return summary


if __name__ == "__main__":
    main()
