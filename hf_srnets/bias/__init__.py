"""The bias-only model of Win-win appendix B.3.1 (Clark et al. 2019): p_b for the debiasing losses.

`compute_bias_predictions` (`pipeline`) extracts the bias features of the task's kind of bias model (`kinds`, the
`--bias_model` registry: word overlap for sentence pairs, max-pooled claim word vectors for FEVER, hypothesis-only
for NLI; or a bias known exactly, given by its kind) with word vectors (`hf_srnets.resources.word_vectors`: the
user's fastText/GloVe file, else the installed GloVe 6B package, else fastText trained on the training text), fits
a multinomial logistic regression (`model`, C chosen on held-out training rows) on the ID training set and returns
p_b for the training set and every other split, plus a report (`report`: accuracy, calibration, per-label
breakdown). `save_bias_predictions` (`prediction_files`) writes them as `bias_<split>.jsonl`
(`hf_srnets.data.read_predictions` format) and `bias_report.json`; `cache` keeps fitted predictions keyed by the
data and settings they depend on, and `fit_or_load_bias_predictions` (`fit_or_load`) loads them from there or fits
and caches them (a run joins them to its training set by id with `hf_srnets.data.joins`). This
`__init__` only re-exports: the modules import each other, never the package.
"""

from __future__ import annotations

from ..resources.tokens import tokenize, vocabulary
from . import cue  # noqa: F401  (registers the cue's exact bias model)
from .features import OVERLAP_FEATURE_NAMES, claim_features, overlap_features
from .fit_or_load import fit_or_load_bias_predictions, fitted_bias_description
from .kinds import BIAS_MODELS, ExactBiasModel, FittedBiasModel, get_bias_model, register_bias_model
from .model import BiasModel, missing_labels_message, select_C
from .pipeline import check_split, choose_bias_model, compute_bias_predictions
from .prediction_files import save_bias_predictions
from .report import format_report, near_uniform_warning, split_label_names, split_report

__all__ = [
    "BIAS_MODELS",
    "OVERLAP_FEATURE_NAMES",
    "BiasModel",
    "ExactBiasModel",
    "FittedBiasModel",
    "check_split",
    "choose_bias_model",
    "claim_features",
    "compute_bias_predictions",
    "fit_or_load_bias_predictions",
    "fitted_bias_description",
    "format_report",
    "get_bias_model",
    "missing_labels_message",
    "near_uniform_warning",
    "overlap_features",
    "register_bias_model",
    "save_bias_predictions",
    "select_C",
    "split_label_names",
    "split_report",
    "tokenize",
    "vocabulary",
]
