"""F_bias of a run against a reference run (Du et al., "Robustness Challenges in Model Distillation and Pruning for
Natural Language Understanding", EACL 2023, §3.4).

Δ = (F_dev − F_OOD) / F_dev with accuracy (the paper scores every task by accuracy), and
F_bias = Δ_model / Δ_reference (`hf_srnets.metrics.relative_bias`); > 1: the model loses more out of distribution
than the reference (the uncompressed model) does. Results keys:

* `f_bias_<set>`: F_OOD the accuracy on one OOD set (`eval_<set>_accuracy`);
* `f_bias`: the paper's task value, F_OOD the accuracy over the task's OOD examples pooled,
  Σ_s n_s·acc_s / Σ_s n_s with n_s = `eval_<set>_examples` (FEVER Sym1+Sym2, QQP PAWS-Wiki+PAWS-QQP; MNLI: HANS
  alone); the mean of the accuracies when a count is missing (`f_bias_pooling` says which);
* `f_bias_mean`: the mean of the per-set values;
* `accuracy_gap[_<set>]` and `reference_accuracy_gap[_<set>]`: the Δ's they come from.

A reference whose Δ ≤ 0 (it does as well OOD as ID) leaves F_bias undefined: a warning, and no value.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

from ..data.tasks import TASKS
from ..errors import InputError, MissingInputError
from ..metrics import accuracy_gap, relative_bias
from ..run_files import RESULTS_NAME

logger = logging.getLogger(__name__)

CITATION_KEY = "rmc"  # the key of this paper in hf_srnets.resources.citations.BIBTEX (the RMC loss cites it too)


def read_reference_results(path: str | os.PathLike) -> tuple[dict[str, Any], str]:
    """The reference's results and the file they came from: `path` is an all_results.json or the run dir that
    holds one."""
    path = str(path)
    file = os.path.join(path, RESULTS_NAME) if os.path.isdir(path) else path
    if not os.path.isfile(file):
        raise MissingInputError(
            f"--reference_results {path}: no {RESULTS_NAME} there; give the reference run's {RESULTS_NAME} or its "
            "output dir"
        )
    with open(file, encoding="utf-8") as f:
        results = json.load(f)
    if not isinstance(results, dict):
        raise InputError(f"{file}: expected a JSON object of results, got {type(results).__name__}")
    return results, file


def _value(results: Mapping[str, Any], key: str, source: str) -> float:
    if key not in results:
        raise InputError(
            f"{source} has no {key!r}: F_bias needs the reference's ID accuracy and each OOD set's accuracy. "
            "Evaluate the reference on the same sets (a run of this version records them)"
        )
    return float(results[key])


def pooled_sets(id_name: str, ood_names: Sequence[str]) -> list[str]:
    """The OOD sets the task value pools: the task's own OOD sets among `ood_names` (an `--ood_file` set stays
    out), else all of them (a custom task)."""
    task = TASKS.get(id_name)
    own = [s for s in ood_names if task is not None and s in {e.name for e in task.ood}]
    return own or list(ood_names)


def has_counts(results: Mapping[str, Any], sets: Sequence[str]) -> bool:
    """Whether `results` has an example count `eval_<set>_examples` > 0 for each of `sets`."""
    counts = [results.get(f"eval_{s}_examples") for s in sets]
    return all(isinstance(n, (int, float)) and n > 0 for n in counts)


def pooled_accuracy(results: Mapping[str, Any], sets: Sequence[str], source: str, by_count: bool) -> float:
    """F_OOD over `sets`: Σ_s n_s·acc_s / Σ_s n_s with n_s = `eval_<set>_examples` when `by_count`, else the mean
    accuracy (used for both models when either lacks a count, so the two Δ's are alike)."""
    accuracies = [_value(results, f"eval_{s}_accuracy", source) for s in sets]
    if not by_count:
        return sum(accuracies) / len(accuracies)
    counts = [float(results[f"eval_{s}_examples"]) for s in sets]
    return sum(n * a for n, a in zip(counts, accuracies)) / sum(counts)


@functools.lru_cache(maxsize=1024)
def _warn_once(message: str) -> None:
    """Each warning once a process (as transformers' `warning_once`): a report computes F_bias of every run against
    the same reference runs, which printed one reference's warning 70 times for results/cue_minilm_mnli."""
    logger.warning(message)


def _ratio(name: str, dev: float, ood: float, ref_dev: float, ref_ood: float, source: str) -> dict[str, float]:
    """Δ_model, Δ_reference and, when Δ_reference > 0, F_bias (keys suffixed by `name`)."""
    suffix = f"_{name}" if name else ""
    ref_gap = accuracy_gap(ref_dev, ref_ood)
    out = {f"accuracy_gap{suffix}": accuracy_gap(dev, ood), f"reference_accuracy_gap{suffix}": ref_gap}
    if ref_gap <= 0:
        _warn_once(
            f"F_bias{' of ' + name if name else ''} is undefined: the reference ({source}) has Δ = (F_dev - F_OOD) / "
            f"F_dev = {ref_gap:.4f} <= 0, so Δ_model / Δ_reference means nothing; no value recorded"
        )
        return out
    out[f"f_bias{suffix}"] = relative_bias(dev, ood, ref_dev, ref_ood)
    return out


def f_bias_results(
    results: Mapping[str, Any], reference: Mapping[str, Any], id_name: str, ood_names: Sequence[str], source: str
) -> dict[str, Any]:
    """F_bias of a run's `results` against the `reference` results (read from `source`, named in errors) on the
    ID set `id_name` and the OOD sets `ood_names`: the keys of the module docstring."""
    if not ood_names:
        return {}
    dev_key = f"eval_{id_name}_accuracy"
    dev, ref_dev = _value(results, dev_key, "the run's results"), _value(reference, dev_key, source)
    out: dict[str, Any] = {}
    for name in ood_names:
        key = f"eval_{name}_accuracy"
        ood, ref_ood = _value(results, key, "the run's results"), _value(reference, key, source)
        out.update(_ratio(name, dev, ood, ref_dev, ref_ood, source))
        n, ref_n = results.get(f"eval_{name}_examples"), reference.get(f"eval_{name}_examples")
        if n is not None and ref_n is not None and n != ref_n:
            logger.warning(f"F_bias of {name}: the run scored {n} examples, the reference ({source}) {ref_n}")
    sets = pooled_sets(id_name, ood_names)
    by_count = has_counts(results, sets) and has_counts(reference, sets)
    ood = pooled_accuracy(results, sets, "the run's results", by_count)
    ref_ood = pooled_accuracy(reference, sets, source, by_count)
    out.update(_ratio("", dev, ood, ref_dev, ref_ood, source))
    if len(sets) > 1:
        out["f_bias_pooling"] = "examples" if by_count else "mean"
        if out["f_bias_pooling"] == "mean":
            logger.warning(
                f"F_bias pools {', '.join(sets)} by the mean of their accuracies: an example count "
                f"(eval_<set>_examples) is missing in the run's results or in {source}"
            )
    per_set = [out.get(f"f_bias_{name}") for name in ood_names]
    if all(v is not None for v in per_set):
        out["f_bias_mean"] = sum(per_set) / len(per_set)
    return out


def f_bias_sets(results: Mapping[str, Any]) -> list[str]:
    """The OOD sets of a results dict with F_bias keys (those with a `reference_accuracy_gap_<set>`)."""
    prefix = "reference_accuracy_gap_"
    return [k[len(prefix) :] for k in results if k.startswith(prefix)]


def f_bias_table(results: Mapping[str, Any]) -> str:
    """A markdown table of Δ_model, Δ_reference and F_bias per OOD set, pooled and on average; "" without them."""
    if "reference_accuracy_gap" not in results:
        return ""

    def cell(key: str, digits: int = 3) -> str:
        value = results.get(key)
        return f"{value:.{digits}f}" if value is not None else "undefined"

    lines = ["| OOD set | Δ model | Δ reference | F_bias |", "|---|---|---|---|"]
    for name in f_bias_sets(results):
        row = (cell(f"accuracy_gap_{name}"), cell(f"reference_accuracy_gap_{name}"), cell(f"f_bias_{name}"))
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    pooling = {"examples": " (pooled)", "mean": " (mean accuracy)"}.get(results.get("f_bias_pooling", ""), "")
    lines.append(f"| task{pooling} | {cell('accuracy_gap')} | {cell('reference_accuracy_gap')} | {cell('f_bias')} |")
    if "f_bias_mean" in results:
        lines.append(f"| mean of sets | | | {cell('f_bias_mean')} |")
    return "\n".join(lines)


def check_reference(reference: Mapping[str, Any], id_name: str, ood_names: Sequence[str], source: str) -> None:
    """Fail before training when the reference lacks the ID accuracy or an OOD set's accuracy F_bias reads."""
    for name in (id_name, *ood_names):
        _value(reference, f"eval_{name}_accuracy", source)
