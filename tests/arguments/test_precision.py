"""The CPU's bf16 support read from /proc/cpuinfo, and what a run logs and records about its precision."""

import json
import logging
from types import SimpleNamespace

import pytest
import torch
from conftest import mnli_run_args

from hf_srnets.commands.glue_sparse import main
from hf_srnets.training.precision import (
    check_precision,
    cpu_bf16,
    cpu_flags,
    cpu_kind,
    cpu_model,
    training_precision,
)

# The shape of Linux's /proc/cpuinfo: "key<TAB>: value" lines, one block per logical CPU.
AVX2_CPU = "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse sse2 avx avx2 fma\n\nprocessor\t: 1\n"
SAPPHIRE_RAPIDS = "processor\t: 0\nflags\t\t: sse avx2 avx512f avx512_bf16 amx_bf16 amx_tile amx_int8\n"
COOPER_LAKE = "processor\t: 0\nflags\t\t: sse avx2 avx512f avx512bw avx512_vnni avx512_bf16\n"


@pytest.mark.parametrize(
    ("cpuinfo", "expected"),
    [(AVX2_CPU, "emulated"), (SAPPHIRE_RAPIDS, "native (amx_bf16)"), (COOPER_LAKE, "native (avx512_bf16)")],
)
def test_bf16_support_from_cpuinfo_flags(tmp_path, cpuinfo, expected):
    path = tmp_path / "cpuinfo"
    path.write_text(cpuinfo)
    assert cpu_bf16(cpu_flags(str(path))) == expected


def test_no_cpuinfo_means_unknown(tmp_path):
    assert cpu_flags(str(tmp_path / "missing")) is None
    assert cpu_bf16(None) == "unknown"
    assert cpu_model(str(tmp_path / "missing")) is None


def test_the_cpu_kind_is_the_model_name_and_torchs_kernels_on_it(tmp_path):
    path = tmp_path / "cpuinfo"
    path.write_text(AVX2_CPU)
    assert cpu_model(str(path)) == "AMD EPYC"
    path.write_text(SAPPHIRE_RAPIDS)  # no model name line
    assert cpu_model(str(path)) is None
    capability = torch.backends.cpu.get_cpu_capability()
    assert cpu_kind("AMD EPYC") == f"AMD EPYC ({capability})"


def _args(device: str, bf16: bool = False, fp16: bool = False) -> SimpleNamespace:
    return SimpleNamespace(device=SimpleNamespace(type=device), bf16=bf16, fp16=fp16)


def test_bf16_on_a_cpu_that_emulates_it_warns_and_is_recorded(caplog):
    with caplog.at_level(logging.INFO, logger="hf_srnets.training.precision"):
        record = check_precision(_args("cpu", bf16=True), flags={"avx2"}, cpu="AMD EPYC (AVX2)")
    assert record == {"precision": "bf16", "cpu_bf16": "emulated", "cpu": "AMD EPYC (AVX2)"}
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "drop --bf16" in warnings[0].getMessage()


def test_fp32_on_a_cpu_with_bf16_says_what_bf16_would_do_without_turning_it_on(caplog):
    args = _args("cpu")
    with caplog.at_level(logging.INFO, logger="hf_srnets.training.precision"):
        record = check_precision(args, flags={"avx512_bf16"}, cpu="Intel Xeon (AVX512)")
    assert record == {"precision": "fp32", "cpu_bf16": "native (avx512_bf16)", "cpu": "Intel Xeon (AVX512)"}
    assert args.bf16 is False  # the user's choice stands
    assert "--bf16 true" in caplog.text and not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_gpu_runs_record_their_precision_only():
    assert check_precision(_args("cuda", fp16=True), flags=set()) == {"precision": "fp16"}


def test_a_run_records_its_precision_in_results_and_card(pretrained, data_dir, tmp_path):
    out = tmp_path / "run"
    main(mnli_run_args(pretrained, data_dir, out, "--pruning", "none", train=32, eval=32, ood=30, batch=16))
    results = json.loads((out / "all_results.json").read_text())
    assert results["precision"] == "fp32"
    assert results["cpu_bf16"] == cpu_bf16(cpu_flags())  # this machine's, read independently of the run
    assert results["cpu"].endswith(f"({torch.backends.cpu.get_cpu_capability()})")
    assert "| precision | fp32 |" in (out / "README.md").read_text()
    assert training_precision(SimpleNamespace(bf16=False, fp16=True)) == "fp16"


@pytest.mark.parametrize("mixed", ["bf16", "fp16"])
def test_the_precision_accelerate_launch_gives_is_the_one_recorded(monkeypatch, tmp_path, mixed):
    """`accelerate launch --mixed_precision bf16` (or `single_gpu_fp16.yaml`) sets ACCELERATE_MIXED_PRECISION; the
    Trainer trains in that precision without `--bf16`/`--fp16` set, and the run records it (it recorded fp32)."""
    from hf_srnets.training.arguments import SRNetTrainingArguments

    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", mixed)
    args = SRNetTrainingArguments(output_dir=str(tmp_path), use_cpu=True, report_to="none")
    assert not args.bf16 and not args.fp16 and args.mixed_precision == mixed
    assert training_precision(args) == mixed
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "no")
    assert training_precision(SRNetTrainingArguments(output_dir=str(tmp_path), use_cpu=True)) == "fp32"
    assert training_precision(SimpleNamespace(bf16=True, fp16=False, mixed_precision="bf16")) == "bf16"


def simulate_machine(monkeypatch, cuda: bool, bf16_gpu: bool) -> None:
    """Make torch and transformers answer as on a machine with or without a CUDA GPU (with or without bf16), whatever
    this machine has: the checks read `torch.cuda.is_available` and `transformers.utils.is_torch_bf16_gpu_available`
    at call time, and the latter's cache is bypassed by replacing it."""
    import torch
    import transformers.utils

    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(transformers.utils, "is_torch_bf16_gpu_available", lambda: bf16_gpu)
    monkeypatch.setattr(transformers.utils, "is_torch_xla_available", lambda: False)


@pytest.mark.parametrize(
    ("cuda", "bf16_gpu", "expected"),
    [(False, False, {"use_cpu": True}), (True, True, {}), (True, False, {})],
    ids=["no_gpu", "bf16_gpu", "gpu_without_bf16"],
)
def test_bf16_alone_adds_use_cpu_only_on_a_machine_without_gpu(monkeypatch, cuda, bf16_gpu, expected):
    """An H200 runs `--bf16 true` on the GPU (nothing added); a V100 (no bf16) gets the Trainer's own refusal."""
    from hf_srnets.training.precision import cpu_bf16_overrides

    simulate_machine(monkeypatch, cuda, bf16_gpu)
    assert cpu_bf16_overrides({"bf16": True}) == expected
    assert cpu_bf16_overrides({"bf16_full_eval": True}) == expected
    assert cpu_bf16_overrides({"bf16": True, "use_cpu": False}) == {}  # the user's explicit choice stands
    assert cpu_bf16_overrides({}) == {}


def test_bf16_on_a_machine_without_gpu_is_a_cpu_run(monkeypatch, pretrained, data_dir, tmp_path):
    """`--bf16 true` alone works on a machine without a GPU (the Trainer wants `use_cpu` then; the parser adds it),
    masks keep exactly ⌊s·n⌋ zeros per matrix and the run records bf16. A GPU machine runs it as one without."""
    from hf_srnets.arguments import parse_args

    simulate_machine(monkeypatch, cuda=False, bf16_gpu=False)
    parsed = parse_args(
        ["--model_name_or_path", str(pretrained), "--task", "mnli", "--output_dir", "o", "--bf16", "true"]
    )
    assert parsed.training.bf16 and parsed.training.use_cpu
    with pytest.raises(ValueError, match="use_cpu"):  # an explicit --use_cpu false is the user's: the Trainer refuses
        parse_args(
            ["--model_name_or_path", "m", "--task", "mnli", "--output_dir", "o", "--bf16", "true", "--use_cpu", "false"]
        )
    out = tmp_path / "run"
    argv = mnli_run_args(
        pretrained, data_dir, out, "--pruning", "mask", "--sparsity", "0.5", train=32, eval=32, ood=30, batch=16
    )
    main([*argv, "--bf16", "true"])
    results = json.loads((out / "all_results.json").read_text())
    assert results["precision"] == "bf16"
    from hf_srnets.pruning.mask_files import read_mask_dir

    _, masks = read_mask_dir(out)  # True = kept
    assert masks and all(int((~m).sum()) == m.numel() // 2 for m in masks.values())


@pytest.mark.parametrize(
    ("pruning", "extra"),
    [("imp", []), ("l0", ["--step_objective", "freelb", "--adv_steps", "2"])],
    ids=["imp", "l0_freelb"],
)
def test_bf16_runs_of_the_other_methods_and_freelb(pretrained, data_dir, tmp_path, pruning, extra):
    import math

    from hf_srnets.pruning.mask_files import read_mask_dir

    out = tmp_path / pruning
    argv = mnli_run_args(
        pretrained,
        data_dir,
        out,
        "--pruning",
        pruning,
        "--sparsity",
        "0.5",
        *extra,
        train=32,
        eval=32,
        ood=30,
        batch=16,
    )
    main([*argv, "--bf16", "true"])
    results = json.loads((out / "all_results.json").read_text())
    assert results["precision"] == "bf16" and math.isfinite(results["train_loss"])
    if pruning == "l0":  # the saved ticket ranks log α over all of θ_pr (global scope): exactly ⌊s·N⌋ zeros in all
        _, masks = read_mask_dir(out)
        assert sum(int((~m).sum()) for m in masks.values()) == sum(m.numel() for m in masks.values()) // 2
