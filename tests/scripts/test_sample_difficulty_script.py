"""run_sample_difficulty.py end to end on a tiny TSV in the real MNLI layout: the id-keyed files a `--loss rmc` run
reads, the losses by hand, the report with the agreement against the dev set's `hard` column, the IMP runs it
starts (and skips when finished), and its refusals."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from difficulty.test_difficulty_scoring import WORDS, save_classifier, word_tokenizer

from hf_srnets.arguments import parse_args
from hf_srnets.commands import sample_difficulty as sample_difficulty_cli
from hf_srnets.data.columns import DIFFICULTY_COLUMN, add_probability_column, read_difficulty, write_predictions
from hf_srnets.losses import LOSSES
from hf_srnets.runner.data import read_data, run_task

LABELS = ("entailment", "neutral", "contradiction")


def load_script():
    """The package module the script runs."""
    return sample_difficulty_cli


def write_mnli_tsv(path: Path, n: int, seed: int, start: int) -> list[dict]:
    """`idx pairID premise hypothesis label hard`, as ../shared/data/mnli/dev_matched.tsv."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        premise = " ".join(rng.choice(WORDS, rng.integers(2, 9)))
        hypothesis = " ".join(rng.choice(WORDS, rng.integers(1, 5)))
        idx = str(start + i)
        rows.append({"idx": idx, "pairID": f"{idx}n", "premise": premise, "hypothesis": hypothesis,
                     "label": LABELS[i % 3], "hard": str(i % 2)})  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["\t".join(rows[0])] + ["\t".join(r.values()) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return rows


@pytest.fixture
def setup(tmp_path):
    data = tmp_path / "data"
    train = write_mnli_tsv(data / "train.tsv", 14, seed=1, start=100)
    dev = write_mnli_tsv(data / "mnli" / "dev_matched.tsv", 12, seed=2, start=0)
    models = [tmp_path / "m0", tmp_path / "m1"]
    save_classifier(models[0], LABELS, seed=0)
    save_classifier(models[1], ("contradiction", "entailment", "neutral"), seed=1)  # another label order
    run_argv = [
        "--model_name_or_path", str(models[0]), "--task", "mnli", "--data_dir", str(data),
        "--train_file", str(data / "train.tsv"), "--max_train_samples", "10", "--max_eval_samples", "11",
        "--no_default_ood", "true", "--use_cpu", "true", "--report_to", "none",
    ]  # fmt: skip
    return {"tmp": tmp_path, "train": train, "dev": dev, "models": models, "run_argv": run_argv}


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def loss_by_hand(model_dir: Path, row: dict) -> float:
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
    enc = word_tokenizer()(row["premise"], row["hypothesis"], return_tensors="pt")
    with torch.no_grad():
        logits = model(**enc).logits
    gold = [model.config.id2label[i] for i in range(3)].index(row["label"])
    return F.cross_entropy(logits, torch.tensor([gold])).item()


def test_model_dirs_end_to_end(setup, capsys):
    out = setup["tmp"] / "difficulty"
    models = [str(m) for m in setup["models"]]
    report = load_script().main(["--output_dir", str(out), "--model_dirs", *models, "--", *setup["run_argv"]])
    train, dev = read_rows(out / "difficulty.jsonl"), read_rows(out / "difficulty_validation.jsonl")
    assert [r["id"] for r in train] == [r["idx"] for r in setup["train"][:10]]  # --max_train_samples, in file order
    assert [r["id"] for r in dev] == [r["idx"] for r in setup["dev"][:11]]  # --max_eval_samples
    for r in train + dev:
        assert len(r["losses"]) == 2 and r["variance"] == pytest.approx(np.var(r["losses"]))
        assert 0.5 - 1e-9 <= r["difficulty"] <= 1.0 + 1e-9  # MNLI's α = 0.5
    variances = [r["variance"] for r in train]
    assert train[int(np.argmax(variances))]["difficulty"] == pytest.approx(1.0)
    assert train[int(np.argmin(variances))]["difficulty"] == pytest.approx(0.5)
    # the losses are each model's cross-entropy, labels aligned by name (m1 has another order)
    for k, model in enumerate(setup["models"]):
        assert train[3]["losses"][k] == pytest.approx(loss_by_hand(model, setup["train"][3]), abs=1e-5)
        assert dev[5]["losses"][k] == pytest.approx(loss_by_hand(model, setup["dev"][5]), abs=1e-5)
    hard = [r["hard"] for r in dev]
    assert sum(hard) == math.ceil(0.5 * 11)
    assert min(r["variance"] for r in dev if r["hard"]) >= max(r["variance"] for r in dev if not r["hard"])
    gold = [r["hard"] == "1" for r in setup["dev"][:11]]
    saved = json.loads((out / "difficulty_report.json").read_text())
    assert saved == json.loads(json.dumps(report))
    assert saved["alpha"] == 0.5 and saved["task"] == "mnli" and len(saved["models"]) == 2
    assert saved["validation"]["agreement_with_gold"] == pytest.approx(np.mean(np.array(hard) == np.array(gold)))
    assert saved["validation"]["gold_hard_examples"] == sum(gold)
    assert saved["train"]["v_max"] == pytest.approx(max(variances))
    assert [m["dir"] for m in saved["models"]] == models and all(m["sparsity"] == 0.0 for m in saved["models"])
    assert "agreement with the dev set's hard column" in capsys.readouterr().out
    # what --loss rmc --sample_difficulty reads: every training id of the run, d_i in (0, 1]
    difficulty = read_difficulty(out / "difficulty.jsonl")
    assert read_difficulty(out / "difficulty_validation.jsonl").keys() == {r["id"] for r in dev}
    run = parse_args([*setup["run_argv"], "--output_dir", str(setup["tmp"] / "run")])
    data = read_data(run_task(run.data), run.model, run.data, run.training)
    joined = add_probability_column(data.train, difficulty, DIFFICULTY_COLUMN, source="difficulty.jsonl")
    assert joined[DIFFICULTY_COLUMN] == pytest.approx([r["difficulty"] for r in train])
    users = [name for name, loss in LOSSES.items() if DIFFICULTY_COLUMN in loss.requires]
    teacher = setup["tmp"] / "teacher.jsonl"
    write_predictions(teacher, [r["idx"] for r in setup["train"]], [[0.5, 0.3, 0.2]] * len(setup["train"]))
    for name in users:  # the RMC loss: the run's own data phase joins the file
        given = ["--teacher_predictions", str(teacher)] if "teacher_probs" in LOSSES[name].requires else []
        run = parse_args([*setup["run_argv"], "--output_dir", str(setup["tmp"] / "run"), "--loss", name,
                          "--sample_difficulty", str(out / "difficulty.jsonl"), *given])  # fmt: skip
        data = read_data(run_task(run.data), run.model, run.data, run.training)
        assert data.train[DIFFICULTY_COLUMN] == pytest.approx([r["difficulty"] for r in train])


def fake_imp_runner(calls):
    """Stands in for run_glue_sparse.py: records the argv and saves a tiny classifier with its results."""

    def run(argv):
        calls.append(argv)
        out = Path(argv[argv.index("--output_dir") + 1])
        sparsity = float(argv[argv.index("--sparsity") + 1])
        save_classifier(out, LABELS, seed=int(100 * sparsity))
        (out / "all_results.json").write_text(json.dumps({"sparsity": sparsity}))

    return run


def test_imp_runs_are_started_once_and_a_rerun_continues(setup):
    out, calls = setup["tmp"] / "d", []
    # 0.85's 9 rounds need 9 steps: 10 rows in batches of 8 for 3 epochs give 6, refused before any run
    argv = ["--output_dir", str(out), "--sparsities", "0.2", "0.85", "--", *setup["run_argv"], "--max_steps", "9"]
    report = load_script().main(argv, runner=fake_imp_runner(calls))
    assert [c[c.index("--output_dir") + 1] for c in calls] == [str(out / "imp_s0.2"), str(out / "imp_s0.85")]
    last = calls[1]
    assert last[last.index("--pruning") + 1] == "magnitude" and "--overwrite_output_dir" in last
    assert float(last[last.index("--imp_prune_ratio") + 1]) == pytest.approx(0.85 / 9)
    assert float(last[last.index("--imp_interval") + 1]) == pytest.approx(1 / 9)
    assert [(m["requested_sparsity"], m["sparsity"]) for m in report["models"]] == [(0.2, 0.2), (0.85, 0.85)]
    assert report["sparsities"] == [0.2, 0.85]
    load_script().main(argv, runner=fake_imp_runner(calls))  # finished runs are kept
    assert len(calls) == 2
    with pytest.raises(ValueError, match="other alpha"):
        load_script().main([*argv[:2], "--alpha", "0.3", *argv[2:]], runner=fake_imp_runner(calls))
    report = load_script().main(
        [*argv[:2], "--alpha", "0.3", "--overwrite_output_dir", "true", *argv[2:]], runner=fake_imp_runner(calls)
    )
    assert len(calls) == 2 and report["alpha"] == 0.3  # same runs: the IMP models are reused
    assert min(read_difficulty(out / "difficulty.jsonl").values()) == pytest.approx(0.3)


def test_refusals(setup):
    script, tmp = load_script(), setup["tmp"]
    with pytest.raises(ValueError, match=r"--sparsity is set by run_sample_difficulty\.py"):
        script.main(["--output_dir", str(tmp / "a"), "--", *setup["run_argv"], "--sparsity", "0.5"])
    with pytest.raises(ValueError, match="after --"):
        script.main(["--output_dir", str(tmp / "a")])
    with pytest.raises(ValueError, match="at least 2 models"):
        script.main(["--output_dir", str(tmp / "a"), "--model_dirs", str(setup["models"][0]), "--", "--task", "mnli"])
    sst2 = [a if a != "mnli" else "sst2" for a in setup["run_argv"]]
    with pytest.raises(ValueError, match="--alpha"):
        script.main(["--output_dir", str(tmp / "a"), "--model_dirs", *map(str, setup["models"]), "--", *sst2])
    (tmp / "full").mkdir()
    (tmp / "full" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not empty"):
        script.main(["--output_dir", str(tmp / "full"), "--model_dirs", *map(str, setup["models"]), "--",
                     *setup["run_argv"]])  # fmt: skip
    assert not (tmp / "a").exists()


@pytest.mark.slow
def test_real_imp_training_end_to_end(setup):
    """Two real `--pruning imp` runs of run_glue_sparse.py (a tiny encoder, 4 steps), scored from their mask dirs."""
    from conftest import TINY
    from transformers import BertConfig, BertModel

    tmp = setup["tmp"]
    torch.manual_seed(0)
    BertModel(BertConfig(**TINY)).save_pretrained(tmp / "pre")
    word_tokenizer().save_pretrained(tmp / "pre")
    run_argv = [a if a != str(setup["models"][0]) else str(tmp / "pre") for a in setup["run_argv"]]
    run_argv += ["--max_steps", "4", "--per_device_train_batch_size", "5", "--save_strategy", "no",
                 "--disable_tqdm", "true", "--learning_rate", "1e-3"]  # fmt: skip
    out = tmp / "real"
    report = load_script().main(["--output_dir", str(out), "--sparsities", "0.2", "0.4", "--", *run_argv])
    for model, sparsity in zip(report["models"], (0.2, 0.4)):
        assert (out / f"imp_s{sparsity:g}" / "srnet_config.json").is_file()  # a mask dir, loaded with its base
        assert model["sparsity"] == pytest.approx(sparsity, abs=0.01) and model["sparsity_source"] == "all_results.json"
    assert len(read_difficulty(out / "difficulty.jsonl")) == 10
