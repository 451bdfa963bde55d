"""The relative bias F_bias of a compressed model (Du et al., "Robustness Challenges in Model Distillation and
Pruning for Natural Language Understanding", EACL 2023, §3.4).

Δ = (F_dev − F_OOD) / F_dev is a model's relative drop from its ID dev score to its OOD score, and
F_bias = Δ_compressed / Δ_base compares a compressed model with its uncompressed base (BERT-base in the paper):
F_bias > 1 means the compressed model is more biased than the base. With several OOD sets (FEVER-Symmetric v1/v2,
PAWS-QQP/Wiki) F_OOD is the accuracy over all their examples together.
"""

from __future__ import annotations


def accuracy_gap(dev: float, ood: float) -> float:
    """Δ = (F_dev − F_OOD) / F_dev (§3.4)."""
    if dev == 0:
        raise ValueError("the relative gap (F_dev - F_OOD) / F_dev needs F_dev != 0")
    return (dev - ood) / dev


def relative_bias(dev: float, ood: float, base_dev: float, base_ood: float) -> float:
    """F_bias = Δ_compressed / Δ_base (§3.4): `dev`/`ood` of the compressed model, `base_*` of the base model."""
    base_gap = accuracy_gap(base_dev, base_ood)
    if base_gap == 0:
        raise ValueError("F_bias is undefined when the base model has no ID-OOD gap (Δ_base = 0)")
    return accuracy_gap(dev, ood) / base_gap
