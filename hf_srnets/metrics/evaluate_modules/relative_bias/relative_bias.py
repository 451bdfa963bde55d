"""The relative bias F_bias (Du et al., EACL 2023, §3.4) as an `evaluate` module.

Load it offline from the installed package: `evaluate.load(hf_srnets.metrics.RELATIVE_BIAS_METRIC_PATH)`.
The computation is `hf_srnets.metrics.relative_bias.relative_bias`.
"""

import datasets
import evaluate

from hf_srnets.metrics.relative_bias import relative_bias

_DESCRIPTION = """
How much more a compressed model loses out of distribution than its uncompressed base. For each model,
Δ = (F_dev − F_OOD) / F_dev; F_bias = Δ_compressed / Δ_base. F_bias > 1: the compressed model is more biased.
Each input row is one (compressed model, task) pair with its base model's scores on the same task.
"""

_KWARGS_DESCRIPTION = """
Args:
    dev (`list` of `float`): the compressed model's ID dev score F_dev.
    ood (`list` of `float`): the compressed model's OOD score F_OOD (over all OOD sets of the task together).
    base_dev (`list` of `float`): the base model's F_dev on the same task.
    base_ood (`list` of `float`): the base model's F_OOD on the same task.
Returns:
    `f_bias`: F_bias of each row; `average_f_bias`: their mean (the paper's "Average F_bias" over tasks).
Examples:
    >>> f_bias = evaluate.load(RELATIVE_BIAS_METRIC_PATH)
    >>> f_bias.compute(dev=[84.4], ood=[55.5], base_dev=[84.2], base_ood=[59.8])  # Table 1, MNLI, 20% sparse
    {'f_bias': [1.18...], 'average_f_bias': 1.18...}
"""

_CITATION = """@inproceedings{du2023robustness,
  title     = {Robustness Challenges in Model Distillation and Pruning for Natural Language Understanding},
  author    = {Du, Mengnan and Mukherjee, Subhabrata and Cheng, Yu and Shokouhi, Milad and Hu, Xia and
               Awadallah, Ahmed Hassan},
  booktitle = {EACL},
  year      = {2023}
}"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class RelativeBias(evaluate.Metric):
    """F_bias = Δ_compressed / Δ_base with Δ = (F_dev − F_OOD) / F_dev, per row and on average."""

    def _info(self) -> evaluate.MetricInfo:
        score = datasets.Value("float64")
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"dev": score, "ood": score, "base_dev": score, "base_ood": score}),
        )

    def _compute(self, dev, ood, base_dev, base_ood) -> dict:
        values = [relative_bias(*row) for row in zip(dev, ood, base_dev, base_ood)]
        return {"f_bias": values, "average_f_bias": sum(values) / len(values) if values else float("nan")}
