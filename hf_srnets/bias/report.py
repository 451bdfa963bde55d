"""How well the bias model fits each split, per gold label, and a readable table of it.

For HANS-like splits, whose labels are (entailment, non-entailment) while the task has the three NLI
labels, predictions are collapsed the way HANS is scored (`hf_srnets.metrics.hans`): the predicted label is
the 3-way argmax with neutral and contradiction both mapped to non-entailment, and
P(non-entailment) = 1 − P(entailment). A split is taken to be HANS-like when its `label` column is a
`datasets.ClassLabel` named (entailment, non-entailment), or when it has a `heuristic` column (the HANS
files' per-example heuristic). The per-label breakdown then shows the overlap bias model's signature:
high mean P(entailment) and low accuracy on gold non-entailment pairs, which all overlap heavily.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from datasets import ClassLabel, Dataset

from ..errors import InputError
from ..metrics.hans import HANS_LABELS, collapse_nli_predictions

# p_b counts as near uniform when its mean probability of the gold label is within NEAR_UNIFORM_MARGIN of 1/K
# (K labels) and its mean confidence within NEAR_UNIFORM_CONFIDENCE of 1/K (a confidently wrong p_b, e.g. the
# overlap model on HANS, also averages 1/K on the gold label but is far from uniform)
NEAR_UNIFORM_MARGIN = 0.05
NEAR_UNIFORM_CONFIDENCE = 0.15
CALIBRATION_BINS = 10


def _lower(names: Sequence[str]) -> list[str]:
    return [n.lower().replace("_", "-") for n in names]


def split_label_names(dataset: Dataset, task_label_names: Sequence[str], *, name: str) -> tuple[str, ...]:
    """The label names of `dataset`'s gold labels (see module doc for how HANS-like splits are recognised)."""
    feature = dataset.features.get("label")
    if isinstance(feature, ClassLabel):
        names = tuple(feature.names)
    elif "heuristic" in dataset.column_names:
        names = HANS_LABELS
    else:
        return tuple(task_label_names)
    if _lower(names) == _lower(task_label_names) or is_collapsed(names, task_label_names):
        return names
    raise InputError(
        f"{name}: labels {list(names)} are neither the task's {list(task_label_names)} nor "
        f"HANS's {list(HANS_LABELS)}; the bias report cannot score them. Cast the split's 'label' "
        "column to the task's labels."
    )


def is_collapsed(label_names: Sequence[str], task_label_names: Sequence[str]) -> bool:
    """True for 2-way entailment/non-entailment gold labels with a task that has an 'entailment' label."""
    return (
        _lower(label_names) == _lower(HANS_LABELS)
        and "entailment" in _lower(task_label_names)
        and len(task_label_names) > 2
    )


def _cell(
    preds: np.ndarray,
    probs: np.ndarray,
    labels: np.ndarray,
    gold: int,
    names: Sequence[str],
    with_predicted: bool = True,
) -> dict[str, Any]:
    mask = labels == gold
    n = int(mask.sum())
    cell: dict[str, Any] = {"count": n, "accuracy": float((preds[mask] == gold).mean()) if n else None}
    if with_predicted:
        cell["predicted_fraction"] = {
            names[k]: (float((preds[mask] == k).mean()) if n else None) for k in range(len(names))
        }
    cell["mean_prob"] = {names[k]: (float(probs[mask, k].mean()) if n else None) for k in range(len(names))}
    return cell


def split_report(
    probs: np.ndarray,
    labels: Sequence[int],
    task_label_names: Sequence[str],
    label_names: Sequence[str] | None = None,
    heuristics: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Accuracy, and per gold label: count, accuracy, fraction predicted as each label, mean p_b of each label.

    `probs` are the bias model's `(n, K)` probabilities over the task's labels; `labels` the gold ids in
    `label_names` (default: the task's), −1 for unlabelled rows (ignored). HANS-like labels are collapsed
    (module doc). With `heuristics`, the same per-label cells are also given per heuristic.
    """
    probs = np.asarray(probs, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    names = tuple(label_names) if label_names is not None else tuple(task_label_names)
    collapse = is_collapsed(names, task_label_names)
    if collapse:
        ent = _lower(task_label_names).index("entailment")
        preds = collapse_nli_predictions(probs.argmax(axis=1), task_label_names)
        view = np.stack([probs[:, ent], 1.0 - probs[:, ent]], axis=1)
    else:
        preds, view = probs.argmax(axis=1), probs
    labelled = labels >= 0
    out: dict[str, Any] = {
        "num_examples": len(labels),
        "num_labelled": int(labelled.sum()),
        "label_names": list(names),
        "accuracy": float((preds[labelled] == labels[labelled]).mean()) if labelled.any() else None,
    }
    if collapse:
        others = [n for n in task_label_names if n.lower() != "entailment"]
        out["collapsed"] = {names[0]: [task_label_names[ent]], names[1]: others}
    out["calibration"] = calibration(view[labelled], preds[labelled], labels[labelled])
    out["per_label"] = {names[k]: _cell(preds, view, labels, k, names) for k in range(len(names))}
    if heuristics is not None:
        heuristics = np.asarray([str(h) for h in heuristics])
        out["per_heuristic"] = {}
        for heuristic in dict.fromkeys(heuristics.tolist()):
            m = heuristics == heuristic
            out["per_heuristic"][heuristic] = {
                names[k]: _cell(preds[m], view[m], labels[m], k, names, with_predicted=False) for k in range(len(names))
            }
    return out


def calibration(probs: np.ndarray, preds: np.ndarray, labels: np.ndarray) -> dict[str, Any] | None:
    """How p_b's probabilities compare with its accuracy, on labelled rows (None if there are none).

    `mean_gold_prob`: mean p_b of the gold label (what PoE/reweighting feel: 1/K means no bias signal);
    `mean_confidence`: mean p_b of the predicted label, which equals `accuracy` for a calibrated model
    (`overconfidence` = their difference); `ece`: expected calibration error over 10 equal-width confidence bins;
    `near_uniform`: `mean_gold_prob` less than `NEAR_UNIFORM_MARGIN` above 1/K and `mean_confidence` less than
    `NEAR_UNIFORM_CONFIDENCE` above it: p_b says little beyond "every label is about as likely".
    """
    if len(labels) == 0:
        return None
    k = probs.shape[1]
    rows = np.arange(len(labels))
    gold = probs[rows, labels]
    confidence = probs[rows, preds]
    correct = preds == labels
    bins = np.minimum((confidence * CALIBRATION_BINS).astype(int), CALIBRATION_BINS - 1)
    ece = sum(
        abs(confidence[bins == b].mean() - correct[bins == b].mean()) * (bins == b).mean()
        for b in range(CALIBRATION_BINS)
        if (bins == b).any()
    )
    accuracy = float(correct.mean())
    return {
        "uniform_prob": 1.0 / k,
        "mean_gold_prob": float(gold.mean()),
        "mean_confidence": float(confidence.mean()),
        "accuracy": accuracy,
        "overconfidence": float(confidence.mean()) - accuracy,
        "ece": float(ece),
        "near_uniform": bool(
            gold.mean() - 1.0 / k < NEAR_UNIFORM_MARGIN and confidence.mean() - 1.0 / k < NEAR_UNIFORM_CONFIDENCE
        ),
    }


def near_uniform_warning(report: dict[str, Any], split: str = "train") -> str | None:
    """A warning text when p_b of `split` is near uniform (see `calibration`), else None."""
    cal = report.get("splits", {}).get(split, {}).get("calibration")
    if not cal or not cal["near_uniform"]:
        return None
    return (
        f"The bias model's p_b is near uniform on {split}: mean p_b of the gold label {cal['mean_gold_prob']:.3f} "
        f"vs 1/K = {cal['uniform_prob']:.3f} (accuracy {cal['accuracy']:.3f}). PoE adds log p_b to the logits and "
        "reweighting weights examples by 1 - p_b(gold): with a near-constant p_b both are close to plain "
        "cross-entropy, so a debiased run will barely differ from a CE run. Use better word vectors (--vectors), "
        "more training data, or another bias model before drawing conclusions about debiasing."
    )


def _fmt(value: float | None, width: int = 6) -> str:
    return f"{value:>{width}.3f}" if value is not None else f"{'-':>{width}}"


def format_report(report: dict[str, Any]) -> str:
    """The bias report as a plain-text table: one block per split, one row per gold label (and heuristic)."""
    vectors = report.get("vectors", {})
    lines = [
        f"Bias model for {report.get('task', '?')}: {report.get('features', {}).get('kind', '?')} features, "
        f"logistic regression; vectors: {vectors.get('kind', '?')} (dim {vectors.get('dim', '?')}, "
        f"coverage {vectors.get('coverage', '?')}) {vectors.get('path', '')}".rstrip()
    ]
    for split, rep in report.get("splits", {}).items():
        names = rep["label_names"]
        short = [n[:8] for n in names]
        lines.append("")
        header = f"{split:<20} {'n':>7} {'acc':>6} | pred as: " + " ".join(f"{s:>8}" for s in short)
        header += " | mean p_b: " + " ".join(f"{s:>8}" for s in short)
        lines.append(header)
        cal = rep.get("calibration")
        summary = f"{'  all':<20} {rep['num_labelled']:>7} {_fmt(rep['accuracy'])}"
        if cal:
            summary += (
                f" | mean p_b(gold) {cal['mean_gold_prob']:.3f} (uniform {cal['uniform_prob']:.3f}), "
                f"mean confidence {cal['mean_confidence']:.3f} vs accuracy {cal['accuracy']:.3f}, "
                f"ECE {cal['ece']:.3f}" + (" -- NEAR UNIFORM" if cal["near_uniform"] else "")
            )
        lines.append(summary)
        for gold, cell in rep["per_label"].items():
            row = f"  gold {gold[:14]:<14} {cell['count']:>7} {_fmt(cell['accuracy'])} | {'':>8} "
            row += " ".join(_fmt(v, 8) for v in cell["predicted_fraction"].values())
            row += f" | {'':>9} " + " ".join(_fmt(v, 8) for v in cell["mean_prob"].values())
            lines.append(row)
        if "collapsed" in rep:
            lines.append(
                "  (3-way predictions collapsed: "
                + "; ".join(f"{' + '.join(src)} -> {dst}" for dst, src in rep["collapsed"].items())
                + ")"
            )
        for heuristic, cells in rep.get("per_heuristic", {}).items():
            for gold, cell in cells.items():
                label = f"  {heuristic[:10]}/{gold[:7]}"
                row = f"{label:<20} {cell['count']:>7} {_fmt(cell['accuracy'])} | {'':>8} {'':>{9 * len(names) - 1}}"
                row += f" | {'':>9} " + " ".join(_fmt(v, 8) for v in cell["mean_prob"].values())
                lines.append(row)
    return "\n".join(lines)
