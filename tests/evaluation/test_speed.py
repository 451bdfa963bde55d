"""`hf_srnets.evaluation.speed`: every (model, batch size) timed on the same inputs in rotating order, ratios
against the reference, refusals of devices and dtypes that cannot run."""

from __future__ import annotations

import pytest
import torch
from conftest import tiny_model

from hf_srnets.errors import InputError
from hf_srnets.evaluation.speed import load_for_speed, measure_speed, speed_table


def test_rounds_rotate_the_models_and_the_ratios_divide_by_the_reference():
    models = {name: tiny_model("bert").eval() for name in ("dense", "a", "b")}
    calls: list[tuple[str, int]] = []
    for name, model in models.items():
        model.register_forward_pre_hook(
            lambda m, args, kw, n=name: calls.append((n, kw["input_ids"].shape)), with_kwargs=True
        )
    rows = measure_speed(models, [1, 3], reference="dense", length=5, rounds=3, batches=2)
    warmup, timed = calls[:6], calls[6:]
    assert [n for n, _ in warmup] == ["dense", "dense", "a", "a", "b", "b"]
    per_round = [[n for n, _ in timed[i : i + 12 : 4]] for i in range(0, 36, 12)]
    assert per_round == [["dense", "a", "b"], ["a", "b", "dense"], ["b", "dense", "a"]]  # rotated by one a round
    assert {shape for _, shape in calls} == {torch.Size([1, 5]), torch.Size([3, 5])}
    assert [(r.model, r.batch_size) for r in rows] == [(n, b) for n in ("dense", "a", "b") for b in (1, 3)]
    for row in rows:
        dense = next(r for r in rows if r.model == "dense" and r.batch_size == row.batch_size)
        assert row.throughput_vs_dense == pytest.approx(row.examples_per_s / dense.examples_per_s)
        assert row.latency_vs_dense == pytest.approx(dense.latency_ms / row.latency_ms)
    assert all(r.throughput_vs_dense == 1.0 and r.latency_vs_dense == 1.0 for r in rows if r.model == "dense")
    assert speed_table(rows).splitlines()[0].split() == [
        "model",
        "batch",
        "examples/s",
        "×dense",
        "latency",
        "ms",
        "×dense",
    ]


def test_devices_and_dtypes_that_cannot_run_are_refused(tmp_path):
    tiny_model("bert").save_pretrained(tmp_path)
    with pytest.raises(InputError, match="--dtype must be one of"):
        load_for_speed(str(tmp_path), "cpu", "fp8")
    with pytest.raises(InputError, match="float16 on CPU"):
        load_for_speed(str(tmp_path), "cpu", "float16")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="sees no CUDA GPU; use --device cpu"):
            load_for_speed(str(tmp_path), "cuda", "float16")
    model = load_for_speed(str(tmp_path), "cpu", "bfloat16")
    assert next(model.parameters()).dtype == torch.bfloat16 and not model.training
