"""HANS accuracy as an `evaluate` module: overall, per gold label and per heuristic × gold label.

Load it offline from the installed package: `evaluate.load(hf_srnets.metrics.HANS_METRIC_PATH)`.
The computation is `hf_srnets.metrics.hans.hans_scores`, the one the package's HANS evaluator uses.
"""

import datasets
import evaluate

from hf_srnets.metrics.hans import hans_scores

_DESCRIPTION = """
HANS (McCoy et al. 2019) tests whether an NLI model relies on three syntactic heuristics (lexical overlap,
subsequence, constituent). Labels are 0 = entailment, 1 = non-entailment. A 3-way NLI model's predictions are
collapsed (neutral and contradiction count as non-entailment) when `label_names` gives the model's labels.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `int`): HANS ids (0 entailment, 1 non-entailment), or the model's 3-way label ids
        together with `label_names`.
    references (`list` of `int`): gold HANS ids (0 entailment, 1 non-entailment).
    heuristics (`list` of `str`, optional): each example's heuristic (`lexical_overlap`, `subsequence`,
        `constituent`); with it, the accuracy of each heuristic × gold label cell is reported.
    label_names (`list` of `str`, optional): the model's label names in id order, e.g.
        `["entailment", "neutral", "contradiction"]`, to collapse 3-way predictions.
Returns:
    `accuracy`, `entailment_accuracy`, `non-entailment_accuracy` and, with `heuristics`,
    `<heuristic>_<label>_accuracy` for each cell with examples.
Examples:
    >>> hans = evaluate.load(HANS_METRIC_PATH)
    >>> hans.compute(predictions=[0, 2], references=[0, 1], label_names=["entailment", "neutral", "contradiction"])
    {'accuracy': 1.0, 'entailment_accuracy': 1.0, 'non-entailment_accuracy': 1.0}
"""

_CITATION = """@inproceedings{mccoy2019right,
  title     = {Right for the Wrong Reasons: Diagnosing Syntactic Heuristics in Natural Language Inference},
  author    = {McCoy, Tom and Pavlick, Ellie and Linzen, Tal},
  booktitle = {ACL},
  pages     = {3428--3448},
  year      = {2019}
}"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Hans(evaluate.Metric):
    """HANS accuracy overall, per gold label and per heuristic × gold label."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("int64"), "references": datasets.Value("int64")}),
            reference_urls=["https://github.com/tommccoy1/hans"],
        )

    def _compute(self, predictions, references, heuristics=None, label_names=None) -> dict:
        return hans_scores(predictions, references, heuristics, label_names)
