"""Whole tensors of a sharded model, for the pruning code that runs outside the forward pass (issue 53).

Under FSDP2 (`torch.distributed.fsdp.fully_shard`, what accelerate and the Trainer apply for `--fsdp`) every process
holds a shard of each parameter (a `DTensor`) except inside a module's forward. The code that reads or writes
parameters between steps would then see one shard: an exact ⌊s·n⌋ threshold over a matrix (or all matrices) needs
every shard's scores, and a selection by weight magnitude (alone or times input norms) every shard's weights.
`full_parameters(model)` gives that code whole parameters: on entering, every sharded parameter is gathered (an
all-gather: every process must enter) and put in its module as a plain tensor; on leaving, each process copies its
own slice of the (possibly changed) whole tensor back into its shard and puts the shard back. Every process computes
the same whole tensors (the gradients are averaged), so the shards stay consistent. Nothing happens for a model
without `DTensor` parameters (one process, DDP). Do not run a forward pass of the sharded modules inside: FSDP's
hooks would swap its own parameters in.

Under DeepSpeed ZeRO (`training.deepspeed`) the block gathers stage 3's partitioned parameters (DeepSpeed's
`GatheredParameters`; on leaving, the main process's values are partitioned again), and at every stage a trainable
parameter changed inside is also written into the optimizer's fp32 copy, which would otherwise put the old value back
at the next step.

`all_reduce_sum` sums a tensor over the processes (a no-op in one process): calibration statistics gathered on each
process's own batches become those of all of them, so every process chooses the same masks.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from torch import nn

try:  # torch >= 2.6
    from torch.distributed.fsdp import FSDPModule
    from torch.distributed.tensor import DTensor, distribute_tensor
except ImportError:  # pragma: no cover - older torch has no public DTensor, hence no FSDP2
    DTensor = FSDPModule = None  # type: ignore[assignment,misc]
    distribute_tensor = None  # type: ignore[assignment]


def _sharded_parameters(model: nn.Module) -> list[tuple[nn.Module, str, nn.Parameter]]:
    if DTensor is None:
        return []
    return [
        (module, name, param)
        for module in model.modules()
        for name, param in module.named_parameters(recurse=False)
        if isinstance(param, DTensor)
    ]


def is_sharded(model: nn.Module) -> bool:
    """Whether any parameter of `model` is a `DTensor` (FSDP2, or another tensor-parallel plan) or partitioned by
    DeepSpeed ZeRO-3."""
    return bool(_sharded_parameters(model)) or any(hasattr(p, "ds_id") for p in model.parameters())


def _reshard(model: nn.Module) -> None:
    """Every FSDP2 module of `model` back to its shards (the root stays whole after a forward without backward, e.g.
    a calibration pass), so that all of its parameters are `DTensor`s."""
    if FSDPModule is None:
        return
    for module in model.modules():
        if isinstance(module, FSDPModule):
            module.reshard()


def _zero_parameters(model: nn.Module) -> list[nn.Parameter]:
    """The parameters of `model` DeepSpeed ZeRO holds: partitioned (stage 3, `ds_id`), or with an fp32 copy in the
    optimizer (stages 1 and 2, `_hp_mapping`)."""
    return [p for p in model.parameters() if hasattr(p, "ds_id") or hasattr(p, "_hp_mapping")]


@contextlib.contextmanager
def _zero_full_parameters(params: list[nn.Parameter]) -> Iterator[None]:
    """`full_parameters` under DeepSpeed ZeRO: stage 3's partitions gathered (and re-partitioned on leaving, from the
    main process's values: every process computes the same); a trainable parameter changed in the block is also
    written into the optimizer's fp32 copy, which would otherwise put the old value back at the next step."""
    from deepspeed.runtime.zero import GatheredParameters

    partitioned = [p for p in params if hasattr(p, "ds_id")]
    with GatheredParameters(partitioned, modifier_rank=0, enabled=bool(partitioned)):
        trainable = [p for p in params if p.requires_grad]
        before = [p.detach().clone() for p in trainable]
        yield
        with torch.no_grad():
            for param, old in zip(trainable, before):
                if not torch.equal(param, old):
                    _set_fp32_copy(param, param.detach())


def _set_fp32_copy(param: nn.Parameter, value: torch.Tensor) -> None:
    """Write `value` (the whole parameter) into this process's part of ZeRO's fp32 copy of `param`."""
    if not hasattr(param, "ds_id"):  # stages 1 and 2
        from deepspeed.utils import safe_set_full_fp32_param

        safe_set_full_fp32_param(param, value)
        return
    # stage 3: DeepSpeed 0.19's `set_full_hp_param` reads past the end of a parameter whose size the number of
    # processes does not divide (the last partition is padded), so this process's slice is copied here
    optimizer = param._z3_optimizer
    partition, _ = optimizer._get_fp32_opt_state_partition(param, release_swap_buffers=False)
    size = partition.numel()
    piece = value.flatten()[size * optimizer._get_param_partition_rank(param) :][:size]
    partition.data[: piece.numel()].copy_(piece)


@contextlib.contextmanager
def full_parameters(model: nn.Module) -> Iterator[None]:
    """Within the block, every sharded parameter of `model` is whole; changes to them reach the shards on leaving.

    A parameter several modules share (the scores of a unit spanning several matrices) is one whole tensor in all of
    them, written back once."""
    zero = _zero_parameters(model)
    if zero:
        with _zero_full_parameters(zero):
            yield
        return
    _reshard(model)
    sharded = _sharded_parameters(model)
    whole: dict[int, nn.Parameter] = {}
    for module, name, param in sharded:
        if id(param) not in whole:
            whole[id(param)] = nn.Parameter(param.full_tensor().detach().clone(), requires_grad=param.requires_grad)
        module._parameters[name] = whole[id(param)]
    try:
        yield
    finally:
        with torch.no_grad():
            for module, name, param in sharded:
                module._parameters[name] = param
            for param in {id(p): p for _, _, p in sharded}.values():
                # each process slices the whole tensor it holds (src_data_rank=None: no communication)
                full = whole[id(param)].detach()
                mine = distribute_tensor(full, param.device_mesh, param.placements, src_data_rank=None)
                param.to_local().copy_(mine.to_local())


def whole(tensor: torch.Tensor) -> torch.Tensor:
    """A `DTensor` result (a sum over a sharded parameter) as the plain tensor every process holds, gradients kept
    (each process's shard gets the gradient of its own entries); any other tensor as it is."""
    return tensor.full_tensor() if DTensor is not None and isinstance(tensor, DTensor) else tensor


@torch.no_grad()
def copy_state(module: nn.Module, state: dict[str, torch.Tensor]) -> None:
    """`module.load_state_dict(state)` as in-place copies into its tensors, no load hooks run: inside
    `full_parameters`, where FSDP's hooks would expect its shards."""
    current = module.state_dict(keep_vars=True)
    missing = sorted(set(current) ^ set(state))
    if missing:
        raise KeyError(f"state and module differ in {len(missing)} key(s), e.g. {missing[0]}")
    for key, tensor in current.items():
        tensor.copy_(state[key])


def _process() -> tuple[int, int]:
    """(rank, world size) of the default process group; (0, 1) without one."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return 0, 1


def all_reduce_sum(tensor: torch.Tensor) -> torch.Tensor:
    """`tensor` summed over the processes of the default group (in place); unchanged in one process."""
    if _process()[1] > 1:
        torch.distributed.all_reduce(tensor)
    return tensor


def process_share(total: int) -> int:
    """This process's part of `total` examples split over the processes (the first `total mod N` take one more):
    each process reads its own batches, so together they read `total`, the first global batches of a one-process
    run of the same global batch."""
    rank, world = _process()
    return total // world + (rank < total % world)
