"""Which linear layers form θ_pr for each architecture (Win-win §3.1).

θ_pr = {W_cls} ∪ {W_Q, W_K, W_V, W_AO, W_in, W_out} of every Transformer layer. Biases, embeddings,
LayerNorms and the pooler are never masked.

ModernBERT and the Llama-family decoders (Llama, Qwen2, Qwen3, Gemma, Mistral, and any model with their module
layout) are recognised from their modules rather than from `model_type` (`hf_srnets.compact.families`): θ_pr is
every layer's `Wqkv`, `Wo`, `Wi`, `mlp.Wo` (ModernBERT) or `q_proj`, `k_proj`, `v_proj`, `o_proj`, `gate_proj`,
`up_proj`, `down_proj` (decoders), and the classifier is `head.dense` + `classifier` (ModernBERT) or `score`.
"""

from __future__ import annotations

import re

from torch import nn

from ..compact.families import SUPPORTED_FAMILIES, family_targets
from ..errors import InputError

# One regular expression per architecture over module names, matched with `re.search`.
_BERT_LAYER = (
    r"encoder\.layer\.\d+\.(attention\.self\.(query|key|value)|attention\.output\.dense"
    r"|intermediate\.dense|output\.dense)$"
)
_DEBERTA_LAYER = (
    r"encoder\.layer\.\d+\.(attention\.self\.(query_proj|key_proj|value_proj)|attention\.output\.dense"
    r"|intermediate\.dense|output\.dense)$"
)
_DISTILBERT_LAYER = r"transformer\.layer\.\d+\.(attention\.(q_lin|k_lin|v_lin|out_lin)|ffn\.(lin1|lin2))$"

LAYER_PATTERNS: dict[str, str] = {
    "bert": _BERT_LAYER,
    "roberta": _BERT_LAYER,
    "xlm-roberta": _BERT_LAYER,
    "electra": _BERT_LAYER,
    "deberta-v2": _DEBERTA_LAYER,
    "distilbert": _DISTILBERT_LAYER,
}

CLASSIFIER_PATTERNS: dict[str, str] = {
    "bert": r"^classifier$",
    "roberta": r"^classifier\.(dense|out_proj)$",
    "xlm-roberta": r"^classifier\.(dense|out_proj)$",
    "electra": r"^classifier\.(dense|out_proj)$",
    "deberta-v2": r"^classifier$",
    "distilbert": r"^(pre_classifier|classifier)$",
}


def _linear_names(model: nn.Module) -> list[str]:
    return [name for name, module in model.named_modules() if isinstance(module, nn.Linear)]


def _select(names: list[str], spec: list[str] | str) -> list[str]:
    if isinstance(spec, str):
        pattern = re.compile(spec)
        return [n for n in names if pattern.search(n)]
    wanted = list(spec)
    return [n for n in names if any(n == w or n.endswith("." + w) for w in wanted)]


def resolve_target_modules(
    model: nn.Module,
    model_type: str | None,
    target_modules: list[str] | str | None,
    mask_classifier: bool,
    classifier_modules: list[str] | None,
) -> tuple[list[str], list[str]]:
    """Return `(layer_targets, classifier_targets)`: the module names to mask, in model order.

    Raises `InputError` (a `ValueError`) when the architecture is unknown and no explicit targets are given, or when
    the selection matches no `nn.Linear`.
    """
    names = _linear_names(model)
    family = None if model_type in LAYER_PATTERNS else family_targets(model)
    if target_modules is None:
        if model_type not in LAYER_PATTERNS and family is None:
            raise InputError(
                f"No default pruning targets for model_type={model_type!r} (known: {sorted(LAYER_PATTERNS)} and "
                f"the {SUPPORTED_FAMILIES} layouts). Pass target_modules as a list of module names or a regular "
                "expression."
            )
        layer_targets = family[0] if family else _select(names, LAYER_PATTERNS[model_type])
    else:
        layer_targets = _select(names, target_modules)
    if classifier_modules is not None:
        cls_targets = _select(names, classifier_modules)
    elif model_type in CLASSIFIER_PATTERNS:
        cls_targets = _select(names, CLASSIFIER_PATTERNS[model_type])
    else:
        cls_targets = family[1] if family else []
    layer_targets = [n for n in layer_targets if n not in cls_targets]
    if not layer_targets:
        raise InputError(
            f"target_modules={target_modules!r} (--target_modules) matched no nn.Linear layer of this "
            f"{type(model).__name__}: give names or a regular expression (re.search) that match some, e.g. "
            f"{names[0] if names else 'a linear layer'!r}; some linear layers are: {names[:8]}."
        )
    if mask_classifier and not cls_targets:
        raise InputError(
            "mask_classifier=True but no classifier layer was found; pass classifier_modules=[...] "
            "or set mask_classifier=False."
        )
    return layer_targets, cls_targets
