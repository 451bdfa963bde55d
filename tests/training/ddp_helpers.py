"""What the multi-process CPU tests share (torchrun, gloo): the launch, the training arguments of a small run that
gives the same steps with N processes of B/N examples as with one of B, and a model without dropout (its draws
differ between 1×8 and 2×4 examples; the tests are about synchronisation)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import torch

from hf_srnets.training.arguments import SRNetTrainingArguments


def without_dropout(model: torch.nn.Module) -> torch.nn.Module:
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    return model


def ddp_cpu_args(output_dir: str, per_device_batch: int, **options: Any) -> SRNetTrainingArguments:
    """A quiet, seeded CPU run of `per_device_batch` examples per process; gloo when torchrun started several."""
    defaults = dict(
        output_dir=output_dir,
        report_to="none",
        per_device_train_batch_size=per_device_batch,
        save_strategy="no",
        seed=0,
        disable_tqdm=True,
        use_cpu=True,
        dataloader_pin_memory=False,
        ddp_backend="gloo" if int(os.environ.get("WORLD_SIZE", 1)) > 1 else None,
    )
    return SRNetTrainingArguments(**{**defaults, **options})


def without_inference_kernel() -> None:
    """DeepSpeed builds its CPU shared-memory all-reduce (a C++ op, about 2 minutes on the first use on a machine)
    when its communication starts; only its inference all-reduce uses it (training's collectives are torch's, gloo
    here). The tests skip the build: DeepSpeed then falls back to gloo for that too."""
    import deepspeed.ops

    deepspeed.ops.__compatible_ops__["deepspeed_shm_comm"] = False


def launch(worker: Path, nproc: int, *args: object, timeout: int = 600) -> None:
    """Run `worker ARGS...` as `torchrun --standalone --nproc_per_node nproc` runs it (one: a plain process), one
    thread each: forks of the warm test server given torchrun's variables (tests/prewarmed.py), which spares each
    process its ~4 s of imports."""
    from prewarmed import SERVER_ENV, run_distributed, run_python

    env = {**os.environ, **SERVER_ENV, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    if nproc > 1:
        results = run_distributed(worker, *args, nproc=nproc, env=env, timeout=timeout)
    else:
        results = [run_python(worker, *args, env=env, timeout=timeout)]
    for rank, result in enumerate(results):
        assert result.returncode == 0, f"rank {rank}: {result.stderr[-3000:]}"


def launched_once(tmp_path_factory: Any, name: str, worker: Path, nproc: int, *args: object) -> Path:
    """The folder of `launch(worker, nproc, FOLDER, *args)`, run once per test run and shared by the pytest-xdist
    workers through a lock (the recipe of pytest-xdist's docs): tests of one launch that different workers run wait
    for it instead of launching it again."""
    from filelock import FileLock

    # under pytest-xdist the workers' temporary folders share this run's parent; without it, the parent holds every
    # run's folder, and a launch left by an earlier run (of older code) would be read
    run_folder = tmp_path_factory.getbasetemp()
    folder = (run_folder.parent if "PYTEST_XDIST_WORKER" in os.environ else run_folder) / name
    with FileLock(f"{folder}.lock"):
        if not (folder / "done").is_file():
            folder.mkdir(exist_ok=True)
            launch(worker, nproc, folder, *args)
            (folder / "done").touch()
    return folder


def launch_nodes(worker: Path, nodes: int, port: int, out: Path, *args: object, timeout: int = 600) -> None:
    """Run `worker OUT ARGS...` as `nodes` torchrun "nodes" of one process each on this machine, started side by side:
    a static rendezvous at 127.0.0.1:`port`, node ranks 0..nodes-1 (what several machines run, one command each);
    each node's output goes to OUT/node<R>.log."""
    from prewarmed_path import client_python

    env = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    python = client_python() or sys.executable  # each node's agent and its worker forks of a warm server
    commands = [
        [python, "-m", "torch.distributed.run", f"--nnodes={nodes}", "--nproc_per_node=1",
         f"--node_rank={rank}", "--master_addr=127.0.0.1", f"--master_port={port}",
         str(worker), str(out), *map(str, args)]
        for rank in range(nodes)
    ]  # fmt: skip
    logs = [Path(out) / f"node{rank}.log" for rank in range(nodes)]
    files = [log.open("w") for log in logs]  # files, not pipes: a full pipe would stall a node inside a collective
    try:
        processes = [subprocess.Popen(c, env=env, stdout=f, stderr=subprocess.STDOUT) for c, f in zip(commands, files)]
        codes = [process.wait(timeout=timeout) for process in processes]
    finally:
        for f in files:
            f.close()
    for rank, (code, log) in enumerate(zip(codes, logs)):
        assert code == 0, f"node {rank}: {log.read_text()[-3000:]}"


BOOKKEEPING = ("world_size", "flipped", "sharded", "deepspeed")


def masks_of(state: dict) -> dict:
    """The masks of a state `ddp_worker.py` wrote (its bookkeeping and thresholds left out)."""
    return {k: v for k, v in state.items() if k not in BOOKKEEPING and not k.endswith(("threshold", "base_weight"))}


def mask_agreement(a: dict, b: dict) -> float:
    """The share of mask positions where `a` and `b` agree."""
    return sum(int((a[k] == b[k]).sum()) for k in a) / sum(a[k].numel() for k in a)


def assert_weights_match(state: dict, single: dict) -> None:
    """The masked layers' base weights of a multi-process run's state as one process's (trained by IMP, kept by the
    other methods; float sums in another order differ in the last bits)."""
    for name in masks_of(single):
        torch.testing.assert_close(state[f"{name}.base_weight"], single[f"{name}.base_weight"], atol=1e-5, rtol=0)


def pruned_but_nonzero(state: dict) -> int:
    """Weights a state's masks prune that are not 0 (0 for the methods that zero them: IMP, the one-shot ones)."""
    masks = masks_of(state)
    return sum(int(((~masks[name].bool()) & (state[f"{name}.base_weight"] != 0)).sum()) for name in masks)


WRITES_WEIGHTS = {"imp", "wanda"}  # the methods that set pruned weights to 0 between steps


def engine_states(tmp_path_factory: Any, prefix: str, launches: dict[str, str], worker: Path):
    """(engine, method) -> the two ranks' states and the run folder; each engine's `launches[engine]` methods are
    searched in one two-process `worker` launch of 4 examples per process, run once per test run."""

    def states(engine: str, method: str) -> tuple[dict, dict, Path]:
        launched = launched_once(tmp_path_factory, f"{prefix}_{engine}", worker, 2, 4, engine, launches[engine])
        folder = launched / method
        return torch.load(folder / "rank0.pt"), torch.load(folder / "rank1.pt"), folder / "run"

    return states


def assert_matches_one_process(rank0: dict, rank1: dict, run: Path, single: dict, method: str) -> None:
    """Two processes of a sharded engine against one process of 8 examples: the ranks agree, the masks are one
    process's after a search that moved them, the weights too (pruned ones 0 where the method zeroes them), and the
    masks were saved once from the whole tensors."""
    from hf_srnets.pruning.random.method import read_masks

    assert int(rank0["world_size"]) == 2
    for key in rank0:
        assert torch.equal(rank0[key], rank1[key]), key
    assert float(single["flipped"]) > 0.02  # the search moved the masks: agreement below is not trivial
    assert mask_agreement(masks_of(rank0), masks_of(single)) >= 0.99
    assert_weights_match(rank0, single)
    if method in WRITES_WEIGHTS:
        assert pruned_but_nonzero(rank0) == 0
    _, saved = read_masks(run)  # written once, by the main process
    assert set(saved) == set(masks_of(rank0))
    assert all(torch.equal(saved[k].bool(), rank0[k].bool()) for k in saved)
