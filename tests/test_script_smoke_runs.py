"""Every `bench/*.py` and `examples/*.py` script runs to completion in the suite on tiny settings (a tiny random BERT,
a handful of real examples, one round), and writes or prints what it should: renaming or moving an option, a module
or a file name the scripts use then fails here, not in a user's hands.

`SMOKE_RUNS` maps each script to the test that runs it to completion (here or in another test file);
`NOT_RUN` names the scripts that cannot run in the suite, and why. A new script in neither fails
`test_every_script_has_a_run_to_completion_test`."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA_DIR, tiny_model
from prewarmed import run_python
from training.helpers import tiny_tokenizer

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
SCRIPTS = sorted(str(p.relative_to(ROOT)) for d in ("bench", "examples") for p in (ROOT / d).glob("*.py"))
HERE = "test_script_smoke_runs.py"

# script -> the test (a path under tests/ :: its function) that runs it to completion on tiny settings
SMOKE_RUNS = {
    "bench/bench_attack.py": f"{HERE}::test_bench_attack_times_each_recipe_with_and_without_the_cache",
    "bench/bench_bf16_cpu.py": f"{HERE}::test_bench_bf16_cpu_measures_every_workload_in_both_precisions",
    "bench/bench_bias_model.py": f"{HERE}::test_bench_bias_model_times_the_fit",
    "bench/bench_eval.py": f"{HERE}::test_bench_eval_compares_sorted_and_dataset_order",
    "bench/bench_inference.py": f"{HERE}::test_bench_inference_times_every_granularity_and_kernel",
    "bench/bench_speed.py": f"{HERE}::test_bench_speed_times_a_compact_model_against_the_dense_one",
    "bench/bench_runtimes.py": f"{HERE}::test_bench_runtimes_times_every_model_in_each_runtime_process",
    "bench/bench_mask_overhead.py": f"{HERE}::test_bench_mask_overhead_gives_both_ratios",
    "bench/bench_mask_size.py": f"{HERE}::test_bench_mask_size_writes_every_table",
    "bench/bench_trainer_overhead.py": f"{HERE}::test_bench_trainer_overhead_compares_each_variant_with_plain",
    "bench/bench_threshold_update.py": f"{HERE}::test_bench_threshold_update_times_the_update_and_the_masked_step",
    "bench/bench_textattack_side_by_side.py": f"{HERE}::test_bench_textattack_side_by_side_compares_the_two_sides",
    "examples/int8_table.py": (
        "test_results_text.py::test_the_int8_table_regenerates_from_its_folder_with_f_bias_by_hand"
    ),
    "examples/l0_gates_plot.py": (
        "test_l0_gates_plot.py::test_the_latest_checkpoint_gives_the_curve_of_a_running_search"
    ),
    "examples/mask_changes.py": "test_mask_changes_example.py::test_mask_changes_counts_the_entries_a_search_moved",
    "examples/quickstart_table.py": (
        "scripts/test_quickstart_quick.py::test_quick_quickstart_reproduces_its_committed_results"
    ),
    "examples/rmc_table.py": (
        "test_example_table_intervals.py::test_rmc_table_gives_accuracy_and_f_bias_differences_from_vanilla"
    ),
    "examples/robust_tickets_mnli_table.py": (
        "test_example_table_intervals.py::test_robust_tickets_mnli_table_gives_poe_minus_ce_on_every_measure"
    ),
    "examples/robust_tickets_table.py": (
        "test_example_table_intervals.py::test_robust_tickets_table_gives_clean_aua_and_suc_differences_from_fine_tune"
    ),
    "examples/structured_large_summary.py": f"{HERE}::test_structured_large_summary_writes_a_row_per_model",
    "examples/structured_table.py": f"{HERE}::test_structured_table_times_the_dense_and_the_compact_model",
}
# scripts the suite cannot run to completion, and why (test_examples_and_bench.py still imports them)
NOT_RUN = {
    "bench/textattack_worker.py": "runs only inside the TextAttack venv that bench_textattack_side_by_side.py builds "
    "(TextAttack is no dependency of this project); the bench's own test reads back a worker output",
}


def test_every_script_has_a_run_to_completion_test():
    assert not set(SMOKE_RUNS) & set(NOT_RUN)
    assert set(SCRIPTS) == set(SMOKE_RUNS) | set(NOT_RUN), "add a run-to-completion test to SMOKE_RUNS"
    for script, test in SMOKE_RUNS.items():
        path, name = test.split("::")
        source = (TESTS / path).read_text(encoding="utf-8")
        assert re.search(rf"^def {name}\(", source, re.M), f"{script}: {test} is not a test function"


def run_script(script: str, *argv: object, timeout: int = 600) -> subprocess.CompletedProcess:
    """`python <script> argv` from the repository root on one thread (a fork of the warm server: tests/prewarmed.py);
    it must exit 0."""
    env = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1")
    result = run_python(ROOT / script, *argv, cwd=ROOT, env=env, timeout=timeout)  # the script's own children: plain
    assert result.returncode == 0, f"{script} exited {result.returncode}:\n{result.stderr[-4000:]}"
    return result


@pytest.mark.slow
def test_bench_bf16_cpu_measures_every_workload_in_both_precisions(pretrained):
    sizes = ["--batch_size", 2, "--eval_batch_size", 4, "--warmup", 1, "--steps", 1, "--eval_examples", 4]
    out = run_script(
        "bench/bench_bf16_cpu.py", "--model", pretrained, "--data_dir", DATA_DIR, *sizes, "--max_length", 16,
        "--rounds", 1,
    ).stdout  # fmt: skip
    rows = out.split("workload    variant", 1)[1].splitlines()[1:]
    assert [row.split()[:2] for row in rows] == [
        [w, v] for w in ("finetune", "mask", "l0_freelb") for v in ("fp32", "bf16")
    ]


@pytest.mark.slow
def test_bench_eval_compares_sorted_and_dataset_order(pretrained):
    out = run_script(
        "bench/bench_eval.py", "--model", pretrained, "--data_dir", DATA_DIR, "--set", "mnli", "--max_examples", 8,
        "--batch_size", 4, "--max_length", 16, "--masked",
    ).stdout  # fmt: skip
    summary = json.loads(out[out.index("\n{") :])
    assert summary["set"] == "mnli" and summary["examples"] == 8 and summary["batch_size"] == 4
    assert len(summary["seconds_sorted"]) == len(summary["seconds_dataset_order"]) == 1
    assert summary["argmax_identical"] == 1.0 and summary["max_abs_logit_diff"] < 1e-4  # the order changes nothing


@pytest.mark.slow
def test_bench_inference_times_every_granularity_and_kernel(pretrained, tmp_path):
    sizes = ["--b32_examples", 4, "--b1_examples", 2, "--batch_size", 2, "--check_batches", 1, "--max_length", 16]
    run_script(
        "bench/bench_inference.py", "--model", pretrained, "--data_dir", DATA_DIR, "--sparsities", 0.5, *sizes,
        "--rounds", 1, "--threads", 1, "--json", tmp_path / "rows.json",
    )  # fmt: skip
    rows = json.loads((tmp_path / "rows.json").read_text())["rows"]
    assert [r["variant"] for r in rows] == [
        "dense", "element 50% zeros", "element 50% csr", "block 50% zeros", "block 50% bsr", "neuron 50% compact",
        "head 50% compact",
    ]  # fmt: skip
    assert all(r["max_abs_logit_diff"] < 1e-4 for r in rows), "each kernel or compact model gives its masked logits"


@pytest.mark.slow
def test_bench_mask_overhead_gives_both_ratios(pretrained, tmp_path):
    out = run_script(
        "bench/bench_mask_overhead.py", "--model", pretrained, "--data_dir", DATA_DIR, "--batch_size", 2,
        "--warmup", 1, "--steps", 1, "--repeats", 1, "--output_dir", tmp_path / "out",
    ).stdout.splitlines()  # fmt: skip
    assert [line.split(":")[0] for line in out] == [
        "full", "mask", out[2].split(":")[0], "step time ratio (mask / fine-tune)",
        "peak memory ratio (mask / fine-tune)",
    ]  # fmt: skip
    assert out[2].startswith("fine-tuning ") and "mask training" in out[2]


@pytest.mark.slow
def test_bench_trainer_overhead_compares_each_variant_with_plain(pretrained, tmp_path):
    """Two alternating repetitions of the three variants on a tiny BERT; the ratios are the per-repetition ratios
    of the recorded times, recomputed here."""
    import statistics

    run_script(
        "bench/bench_trainer_overhead.py", "--tokenizer", pretrained, "--data_dir", DATA_DIR, "--batch_size", 4,
        "--max_length", 16, "--warmup", 1, "--steps", 2, "--repeats", 2, "--threshold_update_interval", 1,
        "--json", tmp_path / "overhead.json",
    )  # fmt: skip
    result = json.loads((tmp_path / "overhead.json").read_text())
    assert list(result["summary"]) == ["plain", "full-ce", "mask-poe"]
    assert result["machine"]["device"] == "cpu" and result["machine"]["OMP_NUM_THREADS"] == "1"
    plain = [r["seconds_per_step"] for r in result["runs"]["plain"]]
    for variant, runs in result["runs"].items():
        seconds = [r["seconds_per_step"] for r in runs]
        assert len(seconds) == 2 and all(s > 0 for s in seconds)
        ratios = [s / p for s, p in zip(seconds, plain)]
        row = result["summary"][variant]
        assert row["ratio_to_plain_median"] == pytest.approx(statistics.median(ratios))
        assert row["seconds_per_step_min"] == min(seconds) and row["seconds_per_step_max"] == max(seconds)
    assert set(result["collate_ms_per_batch"]) == {"plain", "srnet"}


@pytest.mark.slow
def test_bench_threshold_update_times_the_update_and_the_masked_step(tmp_path):
    run_script(
        "bench/bench_threshold_update.py", "--shape", "tiny", "--batch_size", 2, "--max_length", 8, "--warmup", 1,
        "--repeats", 2, "--json", tmp_path / "update.json",
    )  # fmt: skip
    result = json.loads((tmp_path / "update.json").read_text())
    selection = result["selection"]
    # the tiny BERT masks 2 layers x (4 x 64*64 + 2 x 64*256) weights and the 3x64 classifier; the largest is 64*256
    assert (selection["layers"], selection["scores"], selection["largest_layer"]) == (13, 98_496, 16_384)
    assert set(selection["primitive_ms"]) == {"kthvalue", "sort", "topk"}
    times = [*selection["primitive_ms"].values(), selection["update_local_ms"], selection["update_global_ms"]]
    assert all(t > 0 for t in [*times, *result["step"].values()])


@pytest.mark.slow
def test_bench_mask_size_writes_every_table(pretrained, tmp_path):
    run_script(
        "bench/bench_mask_size.py", "--model", pretrained, "--sparsities", 0.5, "--structured_sparsities", 0.5,
        "--skip_timing", "--output_json", tmp_path / "sizes.json",
    )  # fmt: skip
    result = json.loads((tmp_path / "sizes.json").read_text())
    assert [r["kind"] for r in result["sizes"]] == ["iid", "magnitude"]
    assert result["sizes"][1]["sparsity"] == 0.5  # ⌊s·n⌋ of every matrix, all of even size
    assert [r["unit"] for r in result["structured"]] == ["neuron", "head", "tile"]
    # the tiny BERT masks 2 layers × (4 × 32·32 + 2 × 32·64) weights and the 3×32 classifier
    assert result["sizes"][0]["n"] == 16_480


@pytest.mark.slow
def test_bench_bias_model_times_the_fit():
    out = run_script("bench/bench_bias_model.py", "--pairs", 300, "--runs", 1).stdout.splitlines()
    assert out[0].startswith("300 MNLI pairs")
    assert out[-1].startswith("bias model features+fit on 300 pairs: ") and out[-1].endswith("(target < 60 s)")


@pytest.mark.slow
def test_bench_attack_times_each_recipe_with_and_without_the_cache(sst2_classifier):
    out = run_script(
        "bench/bench_attack.py", "--model", sst2_classifier, "--data_dir", DATA_DIR, "--num_examples", 2,
        "--recipes", "textbugger", "--batch_size", 8,
    ).stdout.splitlines()  # fmt: skip
    assert out[0].startswith(f"victim: {sst2_classifier}; 2 SST-2 dev sentences")
    table = out[out.index("") + 1 :]
    assert table[0].split()[:3] == ["recipe", "cache", "ex/min"]
    assert [row.split()[:2] for row in table[1:]] == [["textbugger", "on"], ["textbugger", "off"]]


def ta_record(index: int, outcome: str, queries: int) -> dict:
    """One example of the TextAttack worker's output (bench/textattack_worker.py `result_record`)."""
    return {"index": index, "outcome": outcome, "num_queries": queries, "queries_spent": queries, "perturbed": ["x"]}


@pytest.mark.slow
def test_bench_textattack_side_by_side_compares_the_two_sides(sst2_classifier, tmp_path):
    """The hf_srnets side runs (run_attack.py on 2 SST-2 dev sentences); the TextAttack side is a worker output
    written here (--skip_textattack, which needs no TextAttack venv)."""
    out = tmp_path / "side"
    out.mkdir()
    worker = {"resources": {"word_vectors": "test"}, "results": {"textbugger": [ta_record(0, "skipped", 1)]}}
    worker["results"]["textbugger"].append(ta_record(1, "failed", 9))
    for record, seconds in zip(worker["results"]["textbugger"], (0.5, 1.5)):
        record["seconds"] = seconds
    (out / "worker_out.json").write_text(json.dumps(worker))
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("film 1 0\nmovie 0.9 0.1\ngood 0 1\nbad 0.1 -1\n")
    run_script(
        "bench/bench_textattack_side_by_side.py", "--model", sst2_classifier, "--task", "sst2", "--data_dir", DATA_DIR,
        "--num_examples", 2, "--recipes", "textbugger", "--output_dir", out, "--word_vectors", vectors,
        "--venv", tmp_path / "no_venv", "--skip_textattack", "--results_json", tmp_path / "report.json",
    )  # fmt: skip
    assert not (tmp_path / "no_venv").exists()
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["num_examples"] == 2 and report["task"] == "sst2"
    compared = report["recipes"]["textbugger"]
    assert compared["examples"] == 2 and compared["hf_srnets"]["n"] == 2
    # the worker output above: one skipped, one failed → Clean 50%, Aua 50%, Suc 0%, #Query 9 (the attacked one)
    ta = compared["textattack"]
    assert (ta["clean"], ta["aua"], ta["suc"], ta["query"]) == (0.5, 0.5, 0.0, 9.0)
    # examples/minute from the examples' attack seconds: TextAttack's 2 in 0.5 + 1.5 s -> 60; hf_srnets' its own
    speed = compared["speed"]
    assert speed["textattack"]["examples_per_minute"] == 60.0 and speed["textattack"]["attack_seconds"] == 2.0
    hf_rows = (out / "hf_textbugger/attack_textbugger.jsonl").read_text().splitlines()[1:]  # after the header
    hf_seconds = [json.loads(line)["seconds"] for line in hf_rows]
    assert speed["hf_srnets"]["examples_per_minute"] == round(60 * 2 / sum(hf_seconds), 2)
    assert speed["hf_srnets"]["wall_seconds"] > sum(hf_seconds)  # the process: loading included
    assert json.loads((out / "side_by_side.json").read_text()) == report
    rows = [line.split("|")[1:4] for line in report["table"].splitlines()[2:]]
    assert [[cell.strip() for cell in row] for row in rows] == [
        ["textbugger", "TextAttack", "2"],
        ["textbugger", "hf_srnets", "2"],
    ]


def write_structured_runs(root: Path) -> None:
    """full_ce (a tiny classifier) and one neuron-granularity search over it, merged and compacted, as
    structured_minilm_mnli.sh leaves them."""
    from hf_srnets.masking import SRNetModel
    from hf_srnets.pruning import ThresholdConfig

    results = {"eval_mnli_accuracy": 0.5, "eval_hans_accuracy": 0.4, "eval_hans_entailment_accuracy": 0.6}
    results["eval_hans_non-entailment_accuracy"] = 0.2
    dense = root / "full_ce" / "s0" / "seed42"
    tiny_model("bert").save_pretrained(dense)
    tiny_tokenizer(dense).save_pretrained(dense)
    (dense / "all_results.json").write_text(json.dumps(results))
    search = root / "mask_poe_neuron" / "s0.5" / "seed42"
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5, mask_granularity="neuron"))
    srnet.save_pretrained(search)
    srnet.merge_and_unload(compact=True).save_pretrained(search / "merged")
    (search / "all_results.json").write_text(json.dumps(results | {"sparsity": 0.5}))


@pytest.mark.slow
def test_structured_table_times_the_dense_and_the_compact_model(tmp_path):
    write_structured_runs(tmp_path / "runs")
    run_script(
        "examples/structured_table.py", tmp_path / "runs", "--output", tmp_path / "table", "--data_dir", DATA_DIR,
        "--examples", 4, "--latency_examples", 2, "--rounds", 1,
    )  # fmt: skip
    with open(tmp_path / "table" / "runs.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["method"], r["granularity"], r["target_sparsity"]) for r in rows] == [
        ("full_ce", "dense", "0.0"),
        ("mask_poe_neuron", "neuron", "0.5"),
    ]
    assert float(rows[1]["max_logit_diff"]) < 1e-4, "the compact model gives its masked model's logits"
    assert int(rows[1]["parameters"]) < int(rows[0]["parameters"]), "half the FFN units are removed"
    table = (tmp_path / "table" / "table.md").read_text().splitlines()
    assert [line.split("|")[1].strip() for line in table[2:4]] == ["dense", "neuron"]


@pytest.mark.slow
def test_bench_speed_times_a_compact_model_against_the_dense_one(tmp_path):
    from hf_srnets.compact import compact_model, ffn_sites

    dense, compact = tmp_path / "dense", tmp_path / "compact"
    tiny_model("bert").save_pretrained(dense)
    model = tiny_model("bert")
    for site in ffn_sites(model):
        site.w_out.weight.data[:, ::2] = 0.0  # every other FFN unit contributes 0: compact removes half
    compact_model(model)
    model.save_pretrained(compact)
    out = run_script(
        "bench/bench_speed.py", "--dense", dense, "--models", compact, "--batch_sizes", 1, 2, "--seq_length", 8,
        "--rounds", 2, "--batches", 1, "--threads", 1, "--json", tmp_path / "speed.json",
    ).stdout  # fmt: skip
    record = json.loads((tmp_path / "speed.json").read_text())
    assert [(r["model"], r["batch_size"]) for r in record["rows"]] == [
        ("dense", 1), ("dense", 2), (str(compact), 1), (str(compact), 2),
    ]  # fmt: skip
    assert all(r["throughput_vs_dense"] > 0 and r["latency_vs_dense"] > 0 for r in record["rows"])
    assert out.splitlines()[1].split()[:3] == ["model", "batch", "examples/s"] and "1 threads" in out


@pytest.mark.slow
def test_bench_runtimes_times_every_model_in_each_runtime_process(tmp_path, monkeypatch):
    """A compact model (per-layer FFN widths, a head removed) against the dense one in eager and ONNX Runtime, each in
    its own worker process, built from their configs (`--shapes_only`, as for the committed experiment's models).
    `compile` is not run here: inductor took 35 s to compile two tiny BERTs on the 2-core test machine; its error
    path (a failing `torch.compile` is recorded for that runtime, not a crash) is run in-process instead."""
    import hf_srnets
    from hf_srnets.compact import attention_sites, ffn_sites

    dense, compact = tmp_path / "dense", tmp_path / "compact"
    tiny_model("bert").save_pretrained(dense)
    model = tiny_model("bert")
    for layer, site in enumerate(ffn_sites(model)):
        site.w_out.weight.data[:, :: 2 + layer] = 0.0  # units that contribute 0: widths 32 and 42 of 64
    attention = attention_sites(model)[0]
    attention.output.weight.data[:, : attention.head_size] = 0.0  # layer 0's first head contributes 0
    hf_srnets.compact_model(model)
    hf_srnets.save_pretrained_model(model, str(compact))
    flags = ["--seq_length", 8, "--rounds", 1, "--batches", 1, "--batch_sizes", "1,2", "--threads", 1, "--shapes_only"]
    models = ["--models", f"compact={compact}", f"dense={dense}", "--reference", "dense"]
    out = run_script(
        "bench/bench_runtimes.py", *models, *flags, "--runtimes", "eager,onnxruntime,onnxruntime-int8,torch-int8",
        "--output", tmp_path / "out",
    ).stdout  # fmt: skip
    record = json.loads((tmp_path / "out" / "runtimes.json").read_text())
    assert list(record["runtimes"]) == ["eager", "onnxruntime", "onnxruntime-int8", "torch-int8"]
    assert record["threads"] == 1
    assert isinstance(record["cpu_integer_instructions"], list)
    for int8 in ("onnxruntime-int8", "torch-int8"):
        int8_setup = record["runtimes"][int8]["setup_seconds"]
        assert all(0 <= s["int8_label_agreement"] <= 1 and s["int8_max_abs_diff"] > 0 for s in int8_setup.values())
    for runtime in record["runtimes"].values():
        assert runtime["error"] is None
        rows = {(r["model"], r["batch_size"]): r for r in runtime["rows"]}
        assert sorted(rows) == [("compact", 1), ("compact", 2), ("dense", 1), ("dense", 2)]
        assert all(
            rows[("dense", b)]["throughput_vs_dense"] == rows[("dense", b)]["latency_vs_dense"] == 1.0 for b in (1, 2)
        )
        assert all(r["examples_per_s"] > 0 and r["latency_ms"] > 0 for r in rows.values())
    assert max(s["max_abs_logit_diff"] for s in record["runtimes"]["onnxruntime"]["setup_seconds"].values()) < 1e-4
    assert set(record["speedups"]["compact"]["throughput_vs_dense_b2"]) == set(record["runtimes"])
    table = (tmp_path / "out" / "runtimes.md").read_text()
    assert table == out and "1 threads" in table and "--shapes_only" in table
    assert [line.split("|")[1:3] for line in table.splitlines() if line.startswith("| ") and "ms" not in line] == [
        [" compact ", " eager "], [" compact ", " onnxruntime "], [" compact ", " onnxruntime-int8 "],
        [" compact ", " torch-int8 "], [" dense ", " eager "], [" dense ", " onnxruntime "],
        [" dense ", " onnxruntime-int8 "], [" dense ", " torch-int8 "],
    ]  # fmt: skip
    assert "- compact: the speed-up " in table
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import bench_runtimes as bench
    finally:
        sys.path.remove(str(ROOT / "bench"))
    built = bench.load_model(str(compact), shapes_only=True)
    assert [p.shape for p in built.parameters()] == [p.shape for p in model.parameters()]  # the compact shapes

    def no_compiler(model):
        raise RuntimeError("no compiler\nthe rest of its message")

    monkeypatch.setattr(bench.torch, "set_num_threads", lambda threads: None)  # this process's threads stay
    monkeypatch.setattr(bench.torch, "compile", no_compiler)
    argv = [*map(str, models + flags), "--output", str(tmp_path / "unused")]
    failed = bench.run_worker(bench.parse_args([*argv, "--worker", "compile"]))
    assert (failed["error"], failed["rows"]) == ("RuntimeError: no compiler", [])
    results = {"eager": record["runtimes"]["eager"], "compile": failed}
    args = bench.parse_args([*argv, "--runtimes", "eager,compile"])
    text = bench.markdown(record | {"runtimes": results, "speedups": bench.speedups(results, args)}, args)
    assert "| dense | compile | not measured |" in text and "- compile: not measured: RuntimeError: no compiler" in text


def write_structured_large_runs(root: Path) -> Path:
    """A tiny sweep as structured_large_minilm_mnli.sh leaves it: dense (evaluated, seeds 42 and 43) and a hybrid
    search at 50% (seeds 42 and 43: masks, compact merged model, results); returns the dense model's dir."""
    from hf_srnets.masking import SRNetModel
    from hf_srnets.pruning import ThresholdConfig

    dense = root / "teacher"
    tiny_model("bert").save_pretrained(dense)
    for seed, mnli, non in ((42, 0.5, 0.1), (43, 0.6, 0.2)):
        run = root / "dense" / "s0.0" / f"seed{seed}"
        run.mkdir(parents=True)
        results = {"eval_mnli_accuracy": mnli, "eval_hans_non-entailment_accuracy": non}
        (run / "all_results.json").write_text(json.dumps(results | {"eval_hans_entailment_accuracy": 0.9}))
    for seed, mnli, non in ((42, 0.4, 0.2), (43, 0.45, 0.3)):
        run = root / "hybrid" / "s0.5" / f"seed{seed}"
        config = ThresholdConfig(sparsity=0.5, mask_granularity="hybrid", sparsity_scope="global", mask_init="soft")
        srnet = SRNetModel(tiny_model("bert"), config)
        srnet.save_pretrained(run)
        srnet.merge_and_unload(compact=True).save_pretrained(run / "merged")
        results = {"eval_mnli_accuracy": mnli, "eval_hans_non-entailment_accuracy": non, "train_steps": 616}
        (run / "all_results.json").write_text(
            json.dumps(results | {"eval_hans_entailment_accuracy": 0.7, "train_runtime": 100.0})
        )
    return dense


def write_weights_and_recovery_runs(root: Path) -> None:
    """Beside `write_structured_large_runs`' sweep, as structured_weights_large_minilm_mnli.sh leaves them: an ffn
    search with trained weights at 50% (seed 42) and the recovery run that fine-tuned its compact model (a plain
    model saved in its run dir, its sweep record naming the search's merged/ as its starting model)."""
    from hf_srnets.masking import SRNetModel
    from hf_srnets.pruning import ThresholdConfig

    search = root / "ffn_weights" / "s0.5" / "seed42"
    config = ThresholdConfig(sparsity=0.5, mask_granularity="ffn", sparsity_scope="global", train_weights=True)
    srnet = SRNetModel(tiny_model("bert"), config)
    srnet.save_pretrained(search)
    srnet.merge_and_unload(compact=True).save_pretrained(search / "merged")
    results = {
        "eval_mnli_accuracy": 0.3,
        "eval_hans_non-entailment_accuracy": 0.4,
        "eval_hans_entailment_accuracy": 0.5,
    }
    (search / "all_results.json").write_text(json.dumps(results | {"train_steps": 616, "train_runtime": 200.0}))
    recovered = root / "ffn_recovered" / "s0.5" / "seed42"
    from hf_srnets import load_pretrained_model

    load_pretrained_model(str(search / "merged")).save_pretrained(recovered)
    results = {
        "eval_mnli_accuracy": 0.35,
        "eval_hans_non-entailment_accuracy": 0.45,
        "eval_hans_entailment_accuracy": 0.6,
    }
    (recovered / "all_results.json").write_text(json.dumps(results | {"train_steps": 308, "train_runtime": 50.0}))
    argv = ["--model_name_or_path", str(search / "merged"), "--pruning", "none"]
    (recovered / "sweep_run.json").write_text(json.dumps({"method": "ffn_recovered", "argv": argv}))


@pytest.mark.slow
def test_structured_large_summary_writes_a_row_per_model(tmp_path):
    dense = write_structured_large_runs(tmp_path / "sweep")
    run_script(
        "examples/structured_large_summary.py", tmp_path / "sweep", "--dense", dense, "--output", tmp_path / "results",
        "--threads", 1, "--seq_length", 8, "--rounds", 1, "--batches", 1,
    )  # fmt: skip
    rows = json.loads((tmp_path / "results" / "summary.json").read_text())
    speed = [row.pop("cpu_throughput_vs_dense_b32") for row in rows]
    latency = [row.pop("cpu_latency_vs_dense_b1") for row in rows]
    by_seed = rows[1].pop("cpu_throughput_vs_dense_b32_by_seed"), rows[1].pop("cpu_latency_vs_dense_b1_by_seed")
    assert rows == [
        {
            "method": "dense",
            "granularity": "dense",
            "recipe": "dense",
            "sparsity": 0.0,
            "mnli_m": 55.0,
            "hans_non_entailment": 15.0,
            "hans_entailment": 90.0,
            "seeds": [42, 43],
            "recipe_train_steps": 0,
            "recipe_train_runtime_s": 0.0,
        },
        {
            "method": "hybrid",
            "granularity": "hybrid",
            "recipe": "frozen",
            "sparsity": 0.5,
            "mnli_m": 42.5,
            "hans_non_entailment": 25.0,
            "hans_entailment": 70.0,
            "seeds": [42, 43],
            "recipe_train_steps": 616,
            "recipe_train_runtime_s": 100.0,
        },
    ]  # fmt: skip  (means over the two seeds, by hand)
    assert speed[0] == 1.0 and speed[1] > 0
    assert latency[0] == 1.0 and latency[1] > 0
    assert all(len(ratios) == 2 and min(ratios) > 0 for ratios in by_seed)  # each seed's saved model is timed
    assert speed[1] == pytest.approx(sum(by_seed[0]) / 2, abs=1.5e-3)  # the row is their mean (rounded to 3)
    assert latency[1] == pytest.approx(sum(by_seed[1]) / 2, abs=1.5e-3)
    table = (tmp_path / "results" / "speed.md").read_text()
    timed = [line.split()[0] for line in table.splitlines() if line.startswith("hybrid")]
    assert timed == ["hybrid@0.5/seed42", "hybrid@0.5/seed42", "hybrid@0.5/seed43", "hybrid@0.5/seed43"]
    assert "1 threads" in table and [line.split()[:2] for line in table.splitlines() if line.startswith("dense")] == [
        ["dense", "32"], ["dense", "1"],
    ]  # fmt: skip
    assert (tmp_path / "results" / "pareto.png").stat().st_size > 0


@pytest.mark.slow
def test_structured_large_summary_names_each_recipe_and_times_shapes_alone(tmp_path):
    """A search with trained weights is `weights`, the run that fine-tuned its compact model `weights+recovery` of
    the search's granularity, its budget the two runs' steps and seconds added; `--shapes_only` times models of the
    saved shapes, and says so."""
    dense = write_structured_large_runs(tmp_path / "sweep")
    write_weights_and_recovery_runs(tmp_path / "sweep")
    run_script(
        "examples/structured_large_summary.py", tmp_path / "sweep", "--dense", dense, "--output", tmp_path / "results",
        "--threads", 1, "--seq_length", 8, "--rounds", 1, "--batches", 1, "--shapes_only",
    )  # fmt: skip
    rows = {row["method"]: row for row in json.loads((tmp_path / "results" / "summary.json").read_text())}
    assert list(rows) == ["dense", "ffn_weights", "ffn_recovered", "hybrid"]  # the recipes' order
    described = {
        m: (r["granularity"], r["recipe"], r["recipe_train_steps"], r["recipe_train_runtime_s"])
        for m, r in rows.items()
    }
    assert described == {
        "dense": ("dense", "dense", 0, 0.0),
        "ffn_weights": ("ffn", "weights", 616, 200.0),
        "ffn_recovered": ("ffn", "weights+recovery", 616 + 308, 200.0 + 50.0),
        "hybrid": ("hybrid", "frozen", 616, 100.0),
    }
    assert rows["ffn_recovered"]["mnli_m"] == 35.0 and rows["ffn_recovered"]["cpu_throughput_vs_dense_b32"] > 0
    table = (tmp_path / "results" / "speed.md").read_text()
    assert "--shapes_only" in table and "ffn_recovered@0.5/seed42" in table


def write_students_and_ticket_runs(root: Path, dense: Path) -> None:
    """Beside `write_structured_large_runs`' sweep, as structured_students_large_minilm_mnli.sh leaves them: an l0
    search at 50% with trained weights and no saved model (seed 42), the run that fine-tuned its ticket through
    --mask_from (its compact model in merged/, its own masks config), and a student of the dense model (one of its
    two layers, its trained model in its run dir)."""
    from hf_srnets.compact import keep_layers
    from hf_srnets.masking import SRNetModel
    from hf_srnets.pruning import L0Config

    def finished(run: Path, mnli: float, steps: int, seconds: float, argv: list[str]) -> None:
        results = {"eval_mnli_accuracy": mnli, "eval_hans_non-entailment_accuracy": 0.5, "train_steps": steps}
        (run / "all_results.json").write_text(json.dumps(results | {"train_runtime": seconds}))
        (run / "sweep_run.json").write_text(json.dumps({"method": run.parents[1].name, "argv": argv}))

    search = root / "cofi" / "s0.5" / "seed42"
    config = L0Config(sparsity=0.5, mask_granularity="hybrid", l0_constraint="lagrangian", train_weights=True)
    SRNetModel(tiny_model("bert"), config).save_pretrained(search)
    finished(search, 0.3, 616, 300.0, ["--model_name_or_path", str(dense), "--pruning", "l0"])
    ticket = root / "cofi_recovered" / "s0.5" / "seed42"
    recovered = SRNetModel.from_pretrained(tiny_model("bert"), str(search))
    recovered.save_pretrained(ticket)
    recovered.merge_and_unload(compact=True).save_pretrained(ticket / "merged")
    argv = ["--model_name_or_path", str(dense), "--pruning", "none", "--mask_from", str(search)]
    finished(ticket, 0.35, 308, 60.0, argv)
    student = root / "student_l1" / "s0.0" / "seed42"
    model = tiny_model("bert")
    keep_layers(model, 1)
    model.save_pretrained(student)
    finished(
        student, 0.38, 924, 400.0, ["--model_name_or_path", str(dense), "--pruning", "none", "--student_layers", "1"]
    )


def test_structured_large_summary_times_students_and_ticket_recoveries(tmp_path):
    """Issue 69's rows: a student is timed from its run dir (`student`), a --mask_from recovery counts its search's
    steps and is timed from its merged/ (`weights+recovery`), and the search whose ticket it trained has no speed."""
    dense = write_structured_large_runs(tmp_path / "sweep")
    write_students_and_ticket_runs(tmp_path / "sweep", dense)
    run_script(
        "examples/structured_large_summary.py", tmp_path / "sweep", "--dense", dense, "--output", tmp_path / "results",
        "--threads", 1, "--seq_length", 8, "--rounds", 1, "--batches", 1,
    )  # fmt: skip
    rows = {row["method"]: row for row in json.loads((tmp_path / "results" / "summary.json").read_text())}
    described = {m: (r["granularity"], r["recipe"], r["sparsity"], r["recipe_train_steps"]) for m, r in rows.items()}
    assert described == {
        "dense": ("dense", "dense", 0.0, 0),
        "hybrid": ("hybrid", "frozen", 0.5, 616),
        "cofi": ("hybrid", "weights", 0.5, 616),
        "cofi_recovered": ("hybrid", "weights+recovery", 0.5, 616 + 308),
        "student_l1": ("dense", "student", 0.0, 924),
    }
    assert rows["cofi"]["cpu_throughput_vs_dense_b32"] is None
    assert (
        rows["cofi_recovered"]["cpu_throughput_vs_dense_b32"] > 0
        and rows["student_l1"]["cpu_throughput_vs_dense_b32"] > 0
    )


def test_a_textattack_venv_built_from_another_checkout_is_pointed_at_this_one(tmp_path, monkeypatch):
    """The venv's .pth names the site-packages of the interpreter that built it; a venv left by another checkout
    (since deleted) imported no numpy or torch. A second call rewrites the line, and a third finds nothing to do."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import bench_textattack_side_by_side as bench
    finally:
        sys.path.remove(str(ROOT / "bench"))
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    site = venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (site / "zz_hf_srnets_project_site.pth").write_text("import site; site.addsitedir('/gone/.venv/site-packages')\n")
    monkeypatch.setattr(bench, "_missing_packages", lambda python: [])
    done = bench.ensure_textattack_venv(venv, tmp_path / "nltk")
    assert any("project site-packages" in line for line in done)
    assert "/gone/" not in (site / "zz_hf_srnets_project_site.pth").read_text()
    assert bench.ensure_textattack_venv(venv, tmp_path / "nltk") == []


def test_the_textattack_venv_check_lists_an_unpinned_package_that_is_absent():
    """issue 50: a spec without '==' counted as installed without looking, so a fresh venv got textattack alone and
    the worker stopped at "No module named 'nltk'". Asked of this interpreter: pytest is here, the other is not."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import bench_textattack_side_by_side as bench
    finally:
        sys.path.remove(str(ROOT / "bench"))
    import importlib.metadata

    absent, pinned_wrong = "no-such-package-hf-srnets", "pytest==0.0.1"
    here = f"pytest=={importlib.metadata.version('pytest')}"
    missing = bench._missing_packages(Path(sys.executable), ("pytest", absent, pinned_wrong, here))
    assert missing == [absent, pinned_wrong]


def test_the_textattack_side_can_use_textattacks_own_victim_wrapper(tmp_path):
    """--textattack_victim textattack reaches the worker's spec (TextAttack's HuggingFaceModelWrapper, as its users
    run it) and its files are told apart from the shared-victim run's; the default stays the shared victim."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import bench_textattack_side_by_side as bench
    finally:
        sys.path.remove(str(ROOT / "bench"))
    base = ["--model", "m", "--output_dir", str(tmp_path), "--skip_textattack"]
    worker = {"resources": {}, "results": {"textfooler": [ta_record(0, "failed", 3)]}}
    for flags, suffix, victim in (
        ([], "", "shared"),
        (["--textattack_victim", "textattack"], ".ta_victim", "textattack"),
    ):
        args = bench.parse_args([*base, *flags])
        (tmp_path / f"worker_out{suffix}.textfooler.json").write_text(json.dumps(worker))
        out, _ = bench.run_textattack(args, [{"index": 0, "text": ["x"], "label": 0}], tmp_path, tmp_path, "textfooler")
        assert out == worker
        assert json.loads((tmp_path / f"worker_spec{suffix}.textfooler.json").read_text())["victim"] == victim
    args = bench.parse_args([*base, "--textattack_victim", "textattack", "--textattack_pos_rule", "x_wildcard"])
    assert bench.variant_suffix(args) == ".x_wildcard.ta_victim"
