"""`slice_linear`: a smaller `nn.Linear` made of some rows or columns of another (what removing heads and FFN units
does to each projection)."""

from __future__ import annotations

import warnings

import torch
from torch import nn


def slice_linear(linear: nn.Linear, index: torch.Tensor, dim: int) -> nn.Linear:
    """A new `nn.Linear` with the rows (`dim=0`: outputs, and their biases) or columns (`dim=1`: inputs) in
    `index` of `linear`, on its device and in its dtype, its tensors' `requires_grad` kept (width 0 allowed)."""
    weight = linear.weight.detach().index_select(dim, index)
    bias = linear.bias
    if bias is not None:
        bias = bias.detach().index_select(0, index) if dim == 0 else bias.detach()
    with warnings.catch_warnings():  # "Initializing zero-element tensors is a no-op" for width 0
        warnings.simplefilter("ignore", UserWarning)
        out = nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None, device="meta")
    out.weight = nn.Parameter(weight, requires_grad=linear.weight.requires_grad)
    if bias is not None:
        out.bias = nn.Parameter(bias.clone(), requires_grad=linear.bias.requires_grad)
    return out
