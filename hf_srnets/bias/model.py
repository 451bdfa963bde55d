"""The bias-only model: multinomial logistic regression on bias features (Win-win appendix B.3.1; Clark et al. 2019).

p_b(y | x) = softmax(W z(x) + b)_y, with z(x) = (f(x) − μ) / σ the features standardised with the
training mean μ and standard deviation σ (σ = 1 for constant features), fitted by L-BFGS on the
L2-regularised cross-entropy (scikit-learn `LogisticRegression`). L-BFGS is deterministic, so the
same features give the same p_b.

The regularisation strength C is chosen by `select_C`: each C of `C_GRID` is fitted on 80% of the training
set and scored by the log-loss of the other 20% (a split stratified by label and fixed by the seed); the C
with the lowest held-out log-loss is then refitted on the whole training set. Log-loss rather than accuracy,
because the debiasing losses use p_b's probabilities, not its argmax.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError

logger = logging.getLogger(__name__)

C_GRID = (0.001, 0.01, 0.1, 1.0, 10.0)
HOLDOUT_FRACTION = 0.2


@dataclass
class BiasModel:
    """Multinomial logistic regression over `num_labels` classes (see module doc)."""

    num_labels: int
    C: float = 1.0
    max_iter: int = 1000
    seed: int = 42
    label_names: tuple[str, ...] | None = None
    _mean: np.ndarray | None = field(default=None, repr=False)
    _scale: np.ndarray | None = field(default=None, repr=False)
    _classifier: Any = field(default=None, repr=False)

    def fit(self, features: np.ndarray, labels: np.ndarray) -> BiasModel:
        """Fit on `features` `(n, f)` and integer `labels` in `[0, num_labels)`; every label must occur."""
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import LogisticRegression

        features = np.asarray(features, dtype=np.float64)
        labels = np.asarray(labels)
        if features.ndim != 2 or len(features) != len(labels):
            raise ValueError(f"features {features.shape} and labels {labels.shape} do not match")
        bad = labels[(labels < 0) | (labels >= self.num_labels)]
        if bad.size:
            raise InputError(
                f"Training labels must be in [0, {self.num_labels}); found {sorted(set(bad.tolist()))}. "
                "Unlabelled rows (-1) cannot train the bias model."
            )
        missing = sorted(set(range(self.num_labels)) - set(labels.tolist()))
        if missing:
            raise InputError(missing_labels_message(missing, self.label_names, labels))
        self._mean = features.mean(axis=0)
        scale = features.std(axis=0)
        self._scale = np.where(scale > 0, scale, 1.0)
        self._classifier = LogisticRegression(C=self.C, solver="lbfgs", max_iter=self.max_iter, random_state=self.seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            self._classifier.fit(self._standardize(features), labels)
        for warning in caught:
            if issubclass(warning.category, ConvergenceWarning):
                logger.warning("Bias model: L-BFGS did not converge in %d iterations", self.max_iter)
        return self

    def _standardize(self, features: np.ndarray) -> np.ndarray:
        return (np.asarray(features, dtype=np.float64) - self._mean) / self._scale

    def predict_proba(self, features: np.ndarray) -> np.ndarray:
        """p_b for each row: an `(n, num_labels)` array whose rows sum to 1, columns in label order."""
        if self._classifier is None:
            raise RuntimeError("BiasModel.predict_proba called before fit")
        probs = self._classifier.predict_proba(self._standardize(features))
        out = np.zeros((len(probs), self.num_labels), dtype=np.float64)
        out[:, self._classifier.classes_] = probs
        return out


def missing_labels_message(missing: list[int], label_names: tuple[str, ...] | None, labels: np.ndarray) -> str:
    """The error for training labels that never occur: name them and the labels present, and say which flag fixes it."""
    names = label_names or tuple(str(k) for k in range(max(missing) + 1))
    present = [names[k] for k in sorted(set(np.asarray(labels).tolist())) if 0 <= k < len(names)]
    return (
        f"The bias model's training set has no example of label(s) {missing} "
        f"({', '.join(repr(names[k]) for k in missing if k < len(names))}), so it could never predict them. "
        f"If the data has only the labels {present} (e.g. two-way FEVER: SUPPORTS and REFUTES), pass --task_labels "
        f"naming only those: --task_labels {','.join(present)}. If --max_train_samples cut the missing labels off, "
        "use more training data (a larger --max_train_samples)."
    )


def stratified_holdout(labels: np.ndarray, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices `(fit, held_out)`: `fraction` of each label's rows held out (at least one row of each label kept
    for fitting), chosen by a seeded permutation so the split is deterministic."""
    labels = np.asarray(labels)
    rng = np.random.default_rng(seed)
    held: list[np.ndarray] = []
    for label in np.unique(labels):
        rows = rng.permutation(np.flatnonzero(labels == label))
        held.append(rows[: min(round(fraction * len(rows)), len(rows) - 1)])
    held_out = np.sort(np.concatenate(held)) if held else np.zeros(0, dtype=np.int64)
    fit = np.setdiff1d(np.arange(len(labels)), held_out)
    return fit, held_out


def select_C(
    features: np.ndarray,
    labels: np.ndarray,
    num_labels: int,
    *,
    grid: tuple[float, ...] = C_GRID,
    seed: int = 42,
    label_names: tuple[str, ...] | None = None,
) -> tuple[float, dict[str, Any]]:
    """Choose C on held-out training rows (module doc); return it and a JSON-serialisable record of the search.

    With fewer than 5 held-out rows per label the held-out score is noise: C = 1 is used and the record says so.
    """
    features = np.asarray(features, dtype=np.float64)
    labels = np.asarray(labels)
    fit, held_out = stratified_holdout(labels, HOLDOUT_FRACTION, seed)
    counts = np.bincount(labels[held_out], minlength=num_labels) if held_out.size else np.zeros(num_labels)
    if held_out.size == 0 or counts.min() < 5 or len(set(labels[fit].tolist())) < num_labels:
        return 1.0, {"C": 1.0, "selected_by": "default (too few training rows to hold some out)", "grid": list(grid)}
    rows = []
    for C in grid:
        model = BiasModel(num_labels, C=C, seed=seed, label_names=label_names).fit(features[fit], labels[fit])
        probs = np.clip(model.predict_proba(features[held_out]), 1e-12, 1.0)
        gold = probs[np.arange(held_out.size), labels[held_out]]
        rows.append(
            {
                "C": C,
                "held_out_log_loss": float(-np.log(gold).mean()),
                "held_out_accuracy": float((probs.argmax(axis=1) == labels[held_out]).mean()),
                "held_out_mean_gold_prob": float(gold.mean()),
            }
        )
    best = min(rows, key=lambda r: (r["held_out_log_loss"], -r["C"]))
    logger.info(
        "Bias model: C=%g chosen on %d held-out training rows (log-loss %.4f; grid %s)",
        best["C"],
        held_out.size,
        best["held_out_log_loss"],
        ", ".join(f"{r['C']:g}: {r['held_out_log_loss']:.4f}" for r in rows),
    )
    record = {
        "C": best["C"],
        "selected_by": f"lowest log-loss on {held_out.size} held-out training rows ({HOLDOUT_FRACTION:.0%}, "
        f"stratified by label, seed {seed}), then refitted on all training rows",
        "grid": rows,
    }
    return float(best["C"]), record
