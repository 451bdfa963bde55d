"""The bias-only model: multinomial logistic regression on bias features (Win-win appendix B.3.1; Clark et al. 2019).

p_b(y | x) = softmax(W z(x) + b)_y, with z(x) = (f(x) − μ) / σ the features standardised with the
training mean μ and standard deviation σ (σ = 1 for constant features), fitted by L-BFGS on the
L2-regularised cross-entropy (scikit-learn `LogisticRegression`, C = 1). L-BFGS is deterministic, so the
same features give the same p_b.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)


@dataclass
class BiasModel:
    """Multinomial logistic regression over `num_labels` classes (see module doc)."""

    num_labels: int
    C: float = 1.0
    max_iter: int = 1000
    seed: int = 42
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
            raise ValueError(
                f"Training labels must be in [0, {self.num_labels}); found {sorted(set(bad.tolist()))}. "
                "Unlabelled rows (-1) cannot train the bias model."
            )
        missing = sorted(set(range(self.num_labels)) - set(labels.tolist()))
        if missing:
            raise ValueError(
                f"The bias model's training set has no example of label(s) {missing}, so it could never "
                "predict them; use more training data (e.g. a larger --max_train_samples)."
            )
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
