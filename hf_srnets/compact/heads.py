"""Structured pruning of attention heads (Du et al. 2023, §3.1 and appendix A; Michel et al. 2019).

Each head `h` of layer `l` gets a gate `ξ^(h,l)` multiplying its attention output before the output projection:
`MHA_l(x) = W_O^l [ξ^(1,l)·Att_1(x); ...; ξ^(H,l)·Att_H(x)] + b_O^l`. The head's importance is the expected
sensitivity of the loss to its gate (Du et al. 2023, appendix A, following Michel et al. 2019, Eq. 4 and
Prasanna et al. 2020):

    I_h^(h,l) = E_{x∼X} |∂L(x) / ∂ξ^(h,l)|   at ξ = 1,

and the heads with the lowest score are pruned (Du et al. prune 28 of BERT-base's 144, about 20%). Pruned heads
are removed physically (`prune_heads`): the rows of Q, K and V and the columns of the output projection that belong
to them are dropped, so the model is smaller and computes exactly what the model with `ξ = 0` on those heads
computes. The removed heads are recorded in `config.srnet_pruned_heads` (saved in config.json), from which
`hf_srnets.compact.load_pretrained_model` rebuilds the smaller model before loading its weights.
"""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import torch
from torch import nn

from .layout import PRUNED_HEADS_ATTR, AttentionSite, attention_sites
from .linear import slice_linear

logger = logging.getLogger(__name__)

MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def heads_per_layer(model: Any) -> list[int]:
    """The number of attention heads each encoder layer has now."""
    return [site.num_heads for site in attention_sites(model)]


def _gate_hook(site: AttentionSite, gates: torch.Tensor, layer: int) -> Any:
    def hook(module: nn.Module, args: tuple) -> tuple:
        hidden = args[0]
        heads = site.num_heads
        if gates.shape != (heads,):
            raise ValueError(f"Layer {layer} has {heads} heads but its gates have shape {tuple(gates.shape)}")
        split = hidden.view(*hidden.shape[:-1], heads, site.head_size)
        return ((split * gates.to(hidden.dtype).unsqueeze(-1)).view(hidden.shape), *args[1:])

    return hook


class HeadMask:
    """Within `with HeadMask(model, xi):`, multiply each head's attention output by its gate `ξ^(h,l)` = `xi[l][h]`.

    `xi` is a (layers, heads) tensor (or one 1-D tensor per layer when layers hold different numbers of heads):
    0/1 to mask heads, or `requires_grad` to take `∂L/∂ξ`. A forward pre-hook on each layer's output projection
    reshapes its input (B, T, H·d) to (B, T, H, d) and scales head h by `xi[l][h]`; leaving the context removes
    the hooks.
    """

    def __init__(self, model: Any, xi: torch.Tensor | Sequence[torch.Tensor]) -> None:
        self.sites = attention_sites(model)
        if len(xi) != len(self.sites):
            raise ValueError(f"xi has {len(xi)} rows but the model has {len(self.sites)} layers: one row per layer")
        self.model, self.xi, self.handles = model, xi, []

    def __enter__(self) -> Any:
        for i, site in enumerate(self.sites):
            self.handles.append(site.output.register_forward_pre_hook(_gate_hook(site, self.xi[i], i)))
        return self.model

    def __exit__(self, *exc: object) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles = []


def _uniform_heads(model: Any) -> int:
    counts = set(heads_per_layer(model))
    if len(counts) != 1:
        raise ValueError(
            f"Layers hold different numbers of heads ({heads_per_layer(model)}): the model is already head-pruned; "
            "compute importance on the model before pruning"
        )
    return counts.pop()


def _model_batch(batch: Mapping[str, Any], device: torch.device, limit: int | None) -> tuple[dict, torch.Tensor]:
    labels = batch["labels"] if "labels" in batch else batch["label"]
    inputs = {k: batch[k] for k in MODEL_INPUTS if k in batch}
    if limit is not None:
        inputs, labels = {k: v[:limit] for k, v in inputs.items()}, labels[:limit]
    return {k: v.to(device) for k, v in inputs.items()}, labels.to(device)


def head_importance(
    model: Any, dataloader: Iterable[Mapping[str, Any]], max_examples: int | None = None, normalize: bool = True
) -> torch.Tensor:
    """`I_h^(h,l) = E_x |∂L(x)/∂ξ^(h,l)|` (Du et al. 2023, appendix A; Michel et al. 2019, Eq. 4), (layers, heads).

    As in Michel et al.'s released code (and Prasanna et al.'s, who use it), the expectation is over batches: `L`
    is the mean cross-entropy of a batch of the `dataloader` (dicts with `input_ids`, `attention_mask`,
    [`token_type_ids`], `labels`), `|∂L/∂ξ|` is taken per batch at `ξ = 1` and averaged over the batches. Only the
    first `max_examples` examples are used (the last batch is cut), if given. The model runs in eval mode (no
    dropout), its parameters' gradients are untouched.

    `normalize` (default, as Michel et al.'s code): each layer's scores are divided by their ℓ2 norm over the
    layer's heads. Pruning then ranks heads of all layers together, and Michel et al. (§6.1, after Molchanov et al.
    2017) found that without it the global ranking is dominated by the layers whose gradients are largest.
    """
    heads = _uniform_heads(model)
    device = next(model.parameters()).device
    xi = torch.ones(len(attention_sites(model)), heads, device=device, requires_grad=True)
    total = torch.zeros_like(xi, requires_grad=False)
    was_training, seen, batches = model.training, 0, 0
    model.eval()
    try:
        with HeadMask(model, xi):
            for batch in dataloader:
                left = None if max_examples is None else max_examples - seen
                if left is not None and left <= 0:
                    break
                inputs, labels = _model_batch(batch, device, left)
                loss = nn.functional.cross_entropy(model(**inputs).logits.float(), labels)
                (grad,) = torch.autograd.grad(loss, xi)
                total += grad.abs()
                seen, batches = seen + len(labels), batches + 1
    finally:
        model.train(was_training)
    if batches == 0:
        raise ValueError("head_importance: the dataloader gave no examples; pass training data (or a larger cap)")
    importance = total / batches
    if normalize:
        importance = importance / importance.norm(dim=1, keepdim=True).clamp_min(1e-20)
    return importance.detach()


def heads_to_prune(importance: torch.Tensor, fraction: float) -> dict[int, list[int]]:
    """The `⌊fraction·H_total⌋` heads of lowest importance, as {layer: [heads]} (heads ascending).

    Heads are taken in order of (importance, layer, head), so ties go to the earlier layer, then the lower head.
    No layer loses all its heads: a head that is the last one left in its layer is skipped and the next lowest
    taken instead. A count that cannot leave one head per layer (more than `H_total − layers`) raises `ValueError`.
    `fraction·H_total` is floored after adding 1e-9, so 0.29·100 gives 29 despite rounding to 28.999….
    """
    if importance.dim() != 2:
        raise ValueError(f"importance must be (layers, heads), got shape {tuple(importance.shape)}")
    if not 0.0 <= fraction < 1.0:
        raise ValueError(f"--prune_heads must be in [0, 1), got {fraction}: it is the fraction of heads removed")
    if torch.isnan(importance).any():
        raise ValueError("importance has NaN scores: check the data the importance was computed on")
    layers, heads = importance.shape
    count = math.floor(fraction * layers * heads + 1e-9)
    if count > layers * (heads - 1):
        most = layers * (heads - 1)
        raise ValueError(
            f"--prune_heads {fraction} removes {count} of {layers * heads} heads, but every layer keeps at least one: "
            f"at most {most} heads (pass a fraction below {(most + 1) / (layers * heads):.3f})"
        )
    scores = importance.detach().cpu().tolist()
    order = sorted((scores[l][h], l, h) for l in range(layers) for h in range(heads))  # noqa: E741
    left, chosen, taken = [heads] * layers, {}, 0
    for _, layer, head in order:
        if taken == count:
            break
        if left[layer] > 1:
            chosen.setdefault(layer, []).append(head)
            left[layer] -= 1
            taken += 1
    return {layer: sorted(hs) for layer, hs in sorted(chosen.items())}


def _prune_site(site: AttentionSite, positions: list[int], whole_layers: bool) -> None:
    """Remove the heads at current `positions` from one layer (Q/K/V rows, output projection columns, counts)."""
    keep = [h for h in range(site.num_heads) if h not in set(positions)]
    if not keep and not whole_layers:
        raise ValueError("Pruning would remove every head of a layer; keep at least one head per layer")
    d = site.head_size
    device = site.output.weight.device
    index = torch.tensor([h * d + i for h in keep for i in range(d)], dtype=torch.long, device=device)
    for name in site.qkv:
        setattr(site.attention, name, slice_linear(getattr(site.attention, name), index, 0))
    setattr(site.output_holder, site.output_name, slice_linear(site.output, index, 1))
    setattr(site.attention, site.count_attr, len(keep))
    if hasattr(site.attention, "all_head_size"):
        site.attention.all_head_size = len(keep) * d
    if not keep:
        _attend_eagerly(site.attention)


def _attend_eagerly(attention: nn.Module) -> None:
    """Give a layer left with no heads the eager attention (plain matmuls, here of width 0: the exact empty result
    on every torch). The fused kernel is not safe at 0 heads: torch 2.11's CPU SDPA stops the whole process with
    SIGFPE (results/gpu/2026-11-27_NVIDIA_H100_80GB_HBM3). The module reads `self.config._attn_implementation` at
    each call, so it gets a copy of the config of its own; the model's config and the other layers are unchanged."""
    config = getattr(attention, "config", None)
    if config is not None and getattr(config, "_attn_implementation", "eager") != "eager":
        attention.config = copy.deepcopy(config)
        attention.config._attn_implementation = "eager"


def pruned_heads(model: Any) -> dict[str, list[int]]:
    """The heads removed so far, from `config.srnet_pruned_heads`: {"<layer>": [original head indices]}."""
    return {
        str(k): sorted(int(h) for h in v) for k, v in (getattr(model.config, PRUNED_HEADS_ATTR, None) or {}).items()
    }


def prune_heads(model: Any, heads: Mapping[int | str, Iterable[int]], *, whole_layers: bool = False) -> Any:
    """Remove `heads` ({layer: [head indices]}, indices in the original model's numbering) in place; return it.

    Heads already removed are ignored. Every layer keeps at least one head (`ValueError` otherwise), unless
    `whole_layers`: then a layer may lose all of them, and its attention block adds only the output projection's
    bias b_O to the residual path (Q, K, V of width 0, W_O reading 0 columns; transformers 5's BERT-family and
    DistilBERT attention run at 0 heads). The record in `config.srnet_pruned_heads` is updated, so
    `save_pretrained` writes it to config.json for the loader.
    """
    sites = attention_sites(model)
    record = pruned_heads(model)
    original = model.config.num_attention_heads
    for layer, chosen in heads.items():
        index = int(layer)
        if not 0 <= index < len(sites):
            raise ValueError(f"Layer {layer} does not exist: the model has {len(sites)} layers")
        done = set(record.get(str(index), []))
        new = sorted({int(h) for h in chosen} - done)
        if any(not 0 <= h < original for h in new):
            raise ValueError(f"Layer {index}: head indices must be in [0, {original}), got {new}")
        if not new:
            continue
        alive = [h for h in range(original) if h not in done]  # current position j holds original head alive[j]
        try:
            _prune_site(sites[index], [alive.index(h) for h in new], whole_layers)
        except ValueError as err:
            raise ValueError(f"Layer {index}: {err}") from None
        record[str(index)] = sorted(done | set(new))
    setattr(model.config, PRUNED_HEADS_ATTR, dict(sorted(record.items(), key=lambda kv: int(kv[0]))))
    return model
